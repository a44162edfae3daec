/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ferret LPN fold, regular noise, d = 10 (SPEC.md section 3), equal to
 * emp-ot's Lpn<..., 10>::compute_slice.
 *
 * What is public: the index-stream seed, the counter, and so the indices
 * and the table addresses every fold reads are PUBLIC by design, as in
 * emp-ot (both parties derive the same LPN matrix). Implementations read
 * the table at those addresses, so the memory access pattern reveals the
 * indices: never pass a secret as the seed. The table's and out's contents
 * are not branched on.
 */
#ifndef MPCENGINE_LPN_H
#define MPCENGINE_LPN_H

#include "buffer.h"
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPCE_LPN_MIN_LOGK 1u
#define MPCE_LPN_MAX_LOGK 30u

/* Threads: a context may be used by any number of threads at once; calls
 * only read it (what a call resolves the first time is published under the
 * context's own lock). mpce_lpn_free must not race with another call on it. */
typedef struct mpce_lpn mpce_lpn;

/* A context for a 16-byte index-stream seed and table size k = 2^logk
 * (1 <= logk <= 30). */
MPCE_API mpce_status mpce_lpn_new(mpce_engine *engine, const uint8_t seed[16],
                                  unsigned logk, mpce_lpn **out);
MPCE_API void mpce_lpn_free(mpce_lpn *ctx);

/*
 * out[o] ^= XOR of 10 table blocks for o in [0, n), the indices drawn from
 * ctr(seed, c0, ...). `table` holds table_blocks = 2^logk blocks. `consumed`
 * (may be NULL) receives the blocks of the stream used, 5*L4/2 + 3*(n mod 4)
 * with L4 = n - n mod 4; continue with c0 + consumed.
 */
MPCE_API mpce_status mpce_lpn_fold(mpce_lpn *ctx, const char *impl, uint64_t c0,
                                   const uint8_t *table, size_t table_blocks,
                                   uint8_t *out, size_t n, uint64_t *consumed);

/* The stream blocks a fold of n outputs consumes (no context needed). */
MPCE_API uint64_t mpce_lpn_blocks_consumed(uint64_t n);

/* Buffer form: table holds 2^logk blocks, out n blocks; the stream blocks
 * consumed are mpce_lpn_blocks_consumed(n). */
MPCE_API mpce_status mpce_lpn_fold_buf(mpce_lpn *ctx, mpce_queue *queue, const char *impl,
                                       uint64_t c0, const mpce_buffer *table, mpce_buffer *out,
                                       size_t n);

/* The implementation a fold of n outputs in host memory would run with this
 * impl argument; *name stays valid while the engine lives. */
MPCE_API mpce_status mpce_lpn_resolve(mpce_lpn *ctx, const char *impl, size_t n,
                                      const char **name);

#ifdef __cplusplus
}
#endif
#endif
