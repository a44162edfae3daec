/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The selector (DESIGN.md "Selector and pins"): the measured order "auto"
 * follows, per operation, variant and size class, read from a pins file whose
 * signature matches this machine and these modules. The measuring itself
 * runs out of process, in the probe helper (tools/probe), which this side
 * only spawns and waits for.
 */
#ifndef MPCE_SELECTOR_H
#define MPCE_SELECTOR_H

#include <stddef.h>

#include "engine/internal.h"
#include "engine/selector/pins.h"

/* ---- shape classes (shape.c) ------------------------------------------------ */

unsigned mpce_variant_count(mpce_primitive prim);
/* "" for a primitive with one variant, "q50"/"qwide" (NTT moduli below 2^50
 * or not), "k16"/"kbig" (LPN table of at most 2^16 blocks or more); NULL out
 * of range. */
const char *mpce_variant_name(mpce_primitive prim, unsigned variant);
/* A context's variant. */
unsigned mpce_shape_variant(const struct mpce_params *p);

/* A row's key: "prg.ecb.medium", "ntt.forward.q50.large". */
void mpce_row_key(enum mpce_op_id op, unsigned variant, unsigned size_class, char *buf,
                  size_t len);
/* 0 and the parts, or -1 for a key that names no routed op, variant and class. */
int mpce_row_parse(const char *key, enum mpce_op_id *op, unsigned *variant,
                   unsigned *size_class);

/* ---- signature (signature.c) ---------------------------------------------------- */

/* This CPU: vendor, family, model, stepping, feature words. */
void mpce_signature_cpu(char *buf, size_t len);
/* Tests set this to stand for another CPU. */
extern const char *mpce_signature_cpu_override;

/* ---- the engine's pins (selector.c) ----------------------------------------------- */

struct mpce_selector {
    struct mpce_pins pins;          /* the file in use (format checked) */
    int loaded;                     /* pins holds a file */
    char path[4200];                /* which file */
    const struct mpce_pins_row **by_key; /* [op][variant][size class]: current rows */
    uint64_t *slice_min;            /* [op][slot index]: measured thresholds */
    unsigned n_current, n_stale;
    char status[4600];               /* one line for listings: where "auto" comes from */
};

/*
 * At engine creation, after the modules are loaded and before the dispatch
 * table is built: read the pins, decide which rows are current, and, as
 * [tune] mode says, tune (spawning the helper) and read them again. Never
 * fails the engine for a pins file or a helper: what went wrong is logged
 * and "auto" keeps priority order. opts are the engine's, handed on to the
 * helper so that it measures the same configuration.
 */
mpce_status mpce_selector_start(mpce_engine *e, const mpce_options *opts);
void mpce_selector_free(mpce_engine *e);

/* The current row for (op, variant, size class), or NULL. */
const struct mpce_pins_row *mpce_selector_row(const mpce_engine *e, enum mpce_op_id op,
                                              unsigned variant, unsigned size_class);
/* The measured slice threshold (work elements) for op on slot: 0 when none,
 * MPCE_PINS_NEVER when splitting never paid. */
uint64_t mpce_selector_slice_min(const mpce_engine *e, enum mpce_op_id op,
                                 const struct mpce_slot *slot);

/* Why auto skips module m (crashed, hung or was wrong while tuning), or NULL. */
const char *mpce_selector_blacklisted(const mpce_engine *e, const struct mpce_module *m);

/* ---- the census (census.c) -------------------------------------------------------- */

struct mpce_census_entry {
    char key[96];                   /* a row key */
    unsigned long long calls;
};

/* Counters when [tune] census = yes (and tuning is not off). */
void mpce_census_start(mpce_engine *e);
void mpce_census_count_slow(mpce_engine *e, enum mpce_op_id op, unsigned variant,
                            unsigned size_class);
/* Merge the counts into DIR/census.txt (the first writable pins directory)
 * and zero them; freeing flushes first. */
void mpce_census_flush(mpce_engine *e);
void mpce_census_free(mpce_engine *e);
/* The counts of dir's census file (0 and none when it is missing; -1 when it
 * cannot be read). *out is malloc'd. */
int mpce_census_read(const char *dir, struct mpce_census_entry **out, size_t *count);

/* The pins directories in the order they are read: [tune] dir alone, else the
 * system's and (unprivileged only) the user's cache. Returns how many. */
size_t mpce_selector_dirs(const struct mpce_config *cfg, char dirs[2][4096]);

/*
 * Whether a row of pins p still describes engine e: same CPU and engine
 * version, every plugin that took part loaded from the same file (path, size,
 * mtime, SHA-256), and no loaded plugin with an implementation of the row's
 * primitive missing from it. 1, or 0 with why.
 */
int mpce_selector_row_current(const mpce_engine *e, const struct mpce_pins *p,
                              const struct mpce_pins_row *row, char *why, size_t len);

/* The pins record of a loaded module. Strings point into m. */
void mpce_selector_module_record(const mpce_engine *e, const struct mpce_module *m,
                                 struct mpce_pins_module *out, char *devices, size_t dlen);

#endif
