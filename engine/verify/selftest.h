/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known-answer self-test of one implementation: every record of the
 * embedded vectors for its primitive, every op called through the libffi
 * descriptors (opdesc.h), so a new op needs a list entry, not glue.
 */
#ifndef MPCE_ENGINE_SELFTEST_H
#define MPCE_ENGINE_SELFTEST_H

#include <stddef.h>

#include "engine/internal.h"

/* 0 if slot reproduces every vector; -1 with the first mismatch in `reason`
 * ("prg.ctr record at prg.txt:123: block 5 differs"); MPCE_SELFTEST_NO_MEMORY
 * when memory ran out before a verdict (the reason says where): that says
 * nothing about the implementation, so it stays untested. */
#define MPCE_SELFTEST_NO_MEMORY (-2)
int mpce_selftest_slot(const struct mpce_slot *slot, char *reason, size_t reason_len);

#endif
