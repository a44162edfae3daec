/*
 * Known-answer self-test of one implementation: every record of the
 * embedded vectors for its primitive, every op called through the libffi
 * harness (opdesc.h), so a new op needs a descriptor, not glue.
 */
#ifndef MPCE_ENGINE_SELFTEST_H
#define MPCE_ENGINE_SELFTEST_H

#include <stddef.h>

#include "mpcengine/plugin.h"

/* 0 if impl reproduces every vector; -1 with the first mismatch in `reason`
 * ("prg.ctr record at prg.txt:123: block 5 differs"). */
int mpce_selftest_impl(const struct mpce_impl *impl, char *reason, size_t reason_len);

#endif
