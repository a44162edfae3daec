/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-128 PRG (SPEC.md section 1). A block is 16 bytes in memory order.
 *
 * Every operation takes `impl`: NULL or "auto" for the engine's choice for
 * this op and size class (common.h, mpce_routes), or an implementation name
 * from `mpcengine list` (error if unknown, skipped, failed its self-test, not
 * allowed by policy or not serving the call). The *_buf forms take buffers and
 * a queue of one memory kind (buffer.h).
 */
#ifndef MPCENGINE_PRG_H
#define MPCENGINE_PRG_H

#include "buffer.h"
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPCE_BLOCK_BYTES 16
#define MPCE_PRG_MAX_KEYS 8

/* Threads: a context may be used by any number of threads at once; calls
 * only read it (what a call resolves the first time is published under the
 * context's own lock). mpce_prg_free must not race with another call on it. */
typedef struct mpce_prg mpce_prg;

/* A context holding m (1..8) AES-128 keys, 16 bytes each, concatenated.
 * Keys are expanded once here, never per call. */
MPCE_API mpce_status mpce_prg_new(mpce_engine *engine, const uint8_t *keys, size_t m,
                                  mpce_prg **out);
MPCE_API void mpce_prg_free(mpce_prg *ctx);
MPCE_API size_t mpce_prg_key_count(const mpce_prg *ctx);

/* out[i] = AES_{keys[key_index]}(in[i]) for n blocks; in == out is allowed. */
MPCE_API mpce_status mpce_prg_ecb(mpce_prg *ctx, const char *impl, size_t key_index,
                                  const uint8_t *in, uint8_t *out, size_t n);

/* out[i*m + j] = AES_{keys[j]}(seeds[i]) ^ seeds[i]; out holds n*m blocks and
 * must not overlap seeds. */
MPCE_API mpce_status mpce_prg_mmo(mpce_prg *ctx, const char *impl,
                                  const uint8_t *seeds, uint8_t *out, size_t n);

/* out[i] = AES_{keys[key_index]}(LE64(c0 + i mod 2^64) || 0^64), n blocks. */
MPCE_API mpce_status mpce_prg_ctr(mpce_prg *ctx, const char *impl, size_t key_index,
                                  uint64_t c0, uint8_t *out, size_t n);

/* Buffer forms: in and out hold n blocks (out n*m for mmo) and may be the
 * same buffer for ecb. */
MPCE_API mpce_status mpce_prg_ecb_buf(mpce_prg *ctx, mpce_queue *queue, const char *impl,
                                      size_t key_index, const mpce_buffer *in, mpce_buffer *out,
                                      size_t n);
MPCE_API mpce_status mpce_prg_mmo_buf(mpce_prg *ctx, mpce_queue *queue, const char *impl,
                                      const mpce_buffer *seeds, mpce_buffer *out, size_t n);
MPCE_API mpce_status mpce_prg_ctr_buf(mpce_prg *ctx, mpce_queue *queue, const char *impl,
                                      size_t key_index, uint64_t c0, mpce_buffer *out,
                                      size_t n);

/* The implementation a call of op ("prg.ecb", "prg.mmo", "prg.ctr") over n
 * blocks (mmo: n seeds) on host memory would run with this impl argument;
 * *name stays valid while the engine lives. */
MPCE_API mpce_status mpce_prg_resolve(mpce_prg *ctx, const char *impl, const char *op, size_t n,
                                      const char **name);

#ifdef __cplusplus
}
#endif
#endif
