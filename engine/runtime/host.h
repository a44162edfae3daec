/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host a module is given: one per module and engine, valid from its probe
 * until its fini returns, freed with the engine. Log messages are tagged with
 * the label: the file's name until the plugin has named itself.
 */
#ifndef MPCE_RUNTIME_HOST_H
#define MPCE_RUNTIME_HOST_H

#include "engine/internal.h"

struct mpce_host_rec *mpce_host_new(mpce_engine *e, const char *label);
void mpce_host_rename(struct mpce_host_rec *r, const char *label);

#endif
