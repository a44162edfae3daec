/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The knobs of the shared skeletons (plugin ABI 2.2, struct mpce_knob),
 * declared once: a backend whose LPN or DPF runs through lpn_fold.h or
 * dpf_walk.h lists these in its implementations, in this order, which is
 * the order the skeletons read the call's values in. Every value gives the
 * same outputs (tests/test_knobs.c checks the extremes of each); only speed
 * differs, and by CPU, which is why the selector measures them.
 */
#ifndef MPCE_COMMON_SKELETON_KNOBS_H
#define MPCE_COMMON_SKELETON_KNOBS_H

#include "mpcengine/plugin.h"
#include "plugins/common/dpf_walk.h"
#include "plugins/common/lpn_fold.h"

/* ---- LPN fold: chunk, prefetch (MPCE_LPN_KNOB_*) ---- */
static const uint32_t mpce_lpn_chunk_values[] = {64, 128, 256, 512};
static const uint32_t mpce_lpn_prefetch_values[] = {0, 2, 4, 8, 16};
static const struct mpce_knob mpce_lpn_knob_chunk = {
    .struct_size = sizeof(struct mpce_knob),
    .name = "chunk",
    .ops = "lpn.fold",
    .about = "outputs per PRG call; their index blocks stay in L1 (no effect where the "
             "backend runs its AES inside the row loop)",
    .default_value = MPCE_LPN_CHUNK,
    .n_values = sizeof(mpce_lpn_chunk_values) / sizeof(mpce_lpn_chunk_values[0]),
    .values = mpce_lpn_chunk_values,
};
static const struct mpce_knob mpce_lpn_knob_prefetch = {
    .struct_size = sizeof(struct mpce_knob),
    .name = "prefetch",
    .ops = "lpn.fold",
    .about = "outputs ahead whose table rows are prefetched (0: none; none where the "
             "backend runs its AES inside the row loop)",
    .default_value = MPCE_LPN_PREFETCH,
    .n_values = sizeof(mpce_lpn_prefetch_values) / sizeof(mpce_lpn_prefetch_values[0]),
    .values = mpce_lpn_prefetch_values,
};
static const struct mpce_knob *const mpce_lpn_skeleton_knobs[MPCE_LPN_N_KNOBS] = {
    [MPCE_LPN_KNOB_CHUNK] = &mpce_lpn_knob_chunk,
    [MPCE_LPN_KNOB_PREFETCH] = &mpce_lpn_knob_prefetch,
};

/* ---- DPF walks: tile, batch[, key_prefetch] (MPCE_DPF_KNOB_*) ----
 * A backend with node kernels (mpce_dpf_accel) has no key_prefetch: only
 * the generic walk reads it. Where its kernel walks whole points itself
 * (mpce_dpf_accel.walk, chosen per CPU), batch changes only full-domain
 * evaluation; a tune that finds no difference keeps the default. */
static const uint32_t mpce_dpf_tile_values[] = {10, 11, 12, 13};
static const uint32_t mpce_dpf_batch_values[] = {32, 64, 128, 256};
static const uint32_t mpce_dpf_key_prefetch_values[] = {0, 2, 4, 8};
static const struct mpce_knob mpce_dpf_knob_tile = {
    .struct_size = sizeof(struct mpce_knob),
    .name = "tile",
    .ops = "dpf.evalall dpf.evalall_range",
    .about = "full-domain tile, log2 leaves: the deepest level's PRG batch and the L2 "
             "footprint",
    .default_value = MPCE_DPF_CHUNK_LOG,
    .n_values = sizeof(mpce_dpf_tile_values) / sizeof(mpce_dpf_tile_values[0]),
    .values = mpce_dpf_tile_values,
};
static const struct mpce_knob mpce_dpf_knob_batch = {
    .struct_size = sizeof(struct mpce_knob),
    .name = "batch",
    .ops = "dpf.evalall dpf.evalall_range dpf.eval dpf.eval_keys",
    .about = "points or subtree roots walked together: one PRG call per side and level",
    .default_value = MPCE_DPF_BATCH,
    .n_values = sizeof(mpce_dpf_batch_values) / sizeof(mpce_dpf_batch_values[0]),
    .values = mpce_dpf_batch_values,
};
/* Informational: how far ahead pays depends on whether the application's
 * keys are in cache or in DRAM, which a tune's fixture cannot know. */
static const struct mpce_knob mpce_dpf_knob_key_prefetch = {
    .struct_size = sizeof(struct mpce_knob),
    .name = "key_prefetch",
    .ops = "dpf.eval_keys",
    .about = "levels ahead whose correction words a many-key walk prefetches (0: none)",
    .flags = MPCE_KNOB_INFORMATIONAL,
    .default_value = MPCE_DPF_KEY_PREFETCH,
    .n_values = sizeof(mpce_dpf_key_prefetch_values) / sizeof(mpce_dpf_key_prefetch_values[0]),
    .values = mpce_dpf_key_prefetch_values,
};
/* The generic walk's knobs, and those of a backend with node kernels. */
static const struct mpce_knob *const mpce_dpf_generic_knobs[MPCE_DPF_N_KNOBS] = {
    [MPCE_DPF_KNOB_TILE] = &mpce_dpf_knob_tile,
    [MPCE_DPF_KNOB_BATCH] = &mpce_dpf_knob_batch,
    [MPCE_DPF_KNOB_KEY_PREFETCH] = &mpce_dpf_knob_key_prefetch,
};
static const struct mpce_knob *const mpce_dpf_accel_knobs[MPCE_DPF_KNOB_KEY_PREFETCH] = {
    [MPCE_DPF_KNOB_TILE] = &mpce_dpf_knob_tile,
    [MPCE_DPF_KNOB_BATCH] = &mpce_dpf_knob_batch,
};

#endif
