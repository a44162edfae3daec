/*
 * The portable soft backend: vtables shared between its files. Built into
 * the core (never empty) and registered through the same descriptor as any
 * loaded module.
 */
#ifndef MPCE_SOFT_H
#define MPCE_SOFT_H

#include "mpcengine/plugin.h"

/* The host handed to the entry point; used for set_error. */
extern const struct mpce_host *mpce_soft_host;

/* Constant-time bitsliced AES (the default) and the variable-time T-table AES. */
extern const struct mpce_prg_vtable mpce_soft_prg_bitslice_vtable;
extern const struct mpce_prg_vtable mpce_soft_prg_ttable_vtable;
extern const struct mpce_ntt_vtable mpce_soft_ntt_vtable;
extern const struct mpce_lpn_vtable mpce_soft_lpn_vtable;
extern const struct mpce_dpf_vtable mpce_soft_dpf_vtable;

#endif
