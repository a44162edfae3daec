/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The portable soft backend: op tables shared between its files. Built into
 * the core (never empty) and registered through the same descriptor and
 * checks as any loaded module. Its module state is the engine's host, for
 * set_error.
 */
#ifndef MPCE_SOFT_H
#define MPCE_SOFT_H

#include "mpcengine/plugin.h"

/* Constant-time bitsliced AES (the default) and the variable-time T-table AES. */
extern const struct mpce_prg_ops mpce_soft_prg_bitslice_ops;
extern const struct mpce_prg_ops mpce_soft_prg_ttable_ops;
extern const struct mpce_ntt_ops mpce_soft_ntt_ops;
extern const struct mpce_lpn_ops mpce_soft_lpn_ops;
extern const struct mpce_dpf_ops mpce_soft_dpf_ops;

/* The entry point, linked into the library instead of exported. */
const struct mpce_plugin *mpce_soft_plugin_entry(void);

#endif
