/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The engine's worker pool and the splitting of large calls over it.
 *
 * A large call is cut into slices, each itself a valid vtable call on a
 * sub-range (DESIGN.md, "a slice is a valid call"), so plugins need nothing
 * beyond the ABI's promise that an op may run on one state from several
 * threads at once. Slices write disjoint parts of the caller's output; there
 * are no intermediate copies. Not installed.
 */
#ifndef MPCE_ENGINE_POOL_H
#define MPCE_ENGINE_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/internal.h"

/* Slices per thread: a few, so a core slowed by other load is evened out
 * without cutting the work into pieces small enough to cost anything. */
#define MPCE_POOL_SLICES_PER_THREAD 4u

/* Slice `index` of a job: 0, or a status with this thread's error detail
 * set. */
typedef int (*mpce_slice_fn)(void *arg, size_t index);

struct mpce_pool;

/* A pool of `workers` threads (>= 1), started now; NULL if not even one
 * could be started. Threads block every signal, so the application's
 * handlers run on its own threads. */
struct mpce_pool *mpce_pool_new(unsigned workers);
/* Stop and join the workers; no job may be in flight. */
void mpce_pool_free(struct mpce_pool *pool);

/*
 * fn(arg, i) for every i < count, on the workers and the calling thread,
 * which takes slices of its own job until none are left and then sleeps
 * until the workers' slices are done. Safe from several threads at once.
 * Returns 0 or the code of the lowest-numbered failing slice, whose error
 * detail becomes the calling thread's. Because the caller takes every slice
 * no worker has taken, a job completes even with no worker left (a forked
 * child keeps the pool but not its threads).
 */
int mpce_pool_run(struct mpce_pool *pool, size_t count, mpce_slice_fn fn, void *arg);

/* ---- what the engine uses (engine.c) --------------------------------------- */

/* Threads this engine uses for one call (the [engine] threads knob). */
unsigned mpce_engine_threads(const mpce_engine *engine);

/*
 * How many slices to cut `units` of work into for implementation slot (NULL:
 * work the engine does itself), where a slice should hold at least
 * min_portable units, or min_fast for a SIMD or accelerator implementation:
 * below these, handing work to a thread costs more than it saves (a sleeping
 * worker takes tens of microseconds to wake, so a slice should be worth about
 * 150 us). 1 for small calls, single-threaded engines and implementations
 * that queue their own work (async, device).
 */
size_t mpce_engine_slices(const mpce_engine *engine, const struct mpce_slot *slot,
                          uint64_t units, uint64_t min_portable, uint64_t min_fast);

/* mpce_pool_run on the engine's pool, started on the first call with
 * count > 1 (and again in a forked child); fn runs inline when count is 1 or
 * no thread could be started. */
int mpce_engine_run(mpce_engine *engine, size_t count, mpce_slice_fn fn, void *arg);

/* Slice i of count over units: [*begin, *end); sizes differ by at most one. */
static inline void mpce_slice_range(uint64_t units, size_t count, size_t i, uint64_t *begin,
                                    uint64_t *end)
{
    if (count == 1) { /* the common, unsplit call: no division */
        *begin = 0;
        *end = units;
        return;
    }
    uint64_t base = units / count, extra = units % count;
    *begin = base * i + (i < extra ? i : extra);
    *end = *begin + base + (i < extra ? 1u : 0u);
}

#endif
