/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Negacyclic NTT over Z_q[X]/(X^N + 1), Lattigo v6 convention (SPEC.md
 * section 2): forward takes natural order and writes bit-reversed order,
 * inverse undoes it including the N^-1 factor; all values canonical [0, q).
 *
 * Layout: a polynomial is L consecutive rows of N uint64 words (row l reduced
 * mod q_l); a batch of B polynomials is B*L*N words. A call whose input has
 * a coefficient outside [0, q_l) fails with MPCE_ERR_ARG naming the first
 * one. In place (out is an input), nothing is written unless the context
 * says otherwise (mpce_ntt_set_refusal); out of place, out is all zeros on
 * return (the fast kernels check as they transform, rather than read the
 * whole input once more first), so keep what out held elsewhere if you
 * still need it. The *_buf calls check host buffers before writing
 * anything; see buffer.h for device buffers. in == out is allowed
 * (and a == out, b == out for mul); an input that overlaps out otherwise is
 * refused. `impl` is as in prg.h.
 */
#ifndef MPCENGINE_NTT_H
#define MPCENGINE_NTT_H

#include "buffer.h"
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPCE_NTT_MIN_N 8u
#define MPCE_NTT_MAX_N 131072u              /* 2^17 */
#define MPCE_NTT_MAX_MODULI 64u
#define MPCE_NTT_MAX_Q (UINT64_C(1) << 61)  /* exclusive bound */

/* Threads: a context may be used by any number of threads at once; calls
 * only read it (what a call resolves the first time is published under the
 * context's own lock), except mpce_ntt_set_refusal, whose mode applies to
 * every later call on the context, whoever makes it: code that shares a
 * context should agree on the mode, or keep a context of its own.
 * mpce_ntt_free must not race with another call on it. */
typedef struct mpce_ntt mpce_ntt;

/*
 * A context for ring degree N (a power of two in [8, 2^17]) and L moduli
 * (1..64), each a prime q < 2^61 with q = 1 mod 2N. The primitive root g
 * (the smallest >= 3) and psi = g^((q-1)/2N) are found here, once.
 */
MPCE_API mpce_status mpce_ntt_new(mpce_engine *engine, size_t n, const uint64_t *moduli,
                                  size_t l, mpce_ntt **out);
MPCE_API void mpce_ntt_free(mpce_ntt *ctx);
MPCE_API size_t mpce_ntt_degree(const mpce_ntt *ctx);
MPCE_API size_t mpce_ntt_modulus_count(const mpce_ntt *ctx);
/* The primitive root g and the 2N-th root psi used for modulus index l. */
MPCE_API mpce_status mpce_ntt_roots(const mpce_ntt *ctx, size_t l, uint64_t *g, uint64_t *psi);

MPCE_API mpce_status mpce_ntt_forward(mpce_ntt *ctx, const char *impl,
                                      const uint64_t *in, uint64_t *out, size_t batch);
MPCE_API mpce_status mpce_ntt_inverse(mpce_ntt *ctx, const char *impl,
                                      const uint64_t *in, uint64_t *out, size_t batch);
/* Pointwise product of two batches in NTT form: out = a * b mod q_l. */
MPCE_API mpce_status mpce_ntt_mul(mpce_ntt *ctx, const char *impl, const uint64_t *a,
                                  const uint64_t *b, uint64_t *out, size_t batch);

/*
 * What a refused call in place (mpce_ntt_forward, _inverse or _mul with out
 * equal to an input) leaves in out.
 *
 * MPCE_NTT_REFUSAL_KEEP, the default: out as it was. The engine reads every
 * input once before the call to promise that, which costs what one more
 * read of the batch costs: 6-13 % of a transform and 48-83 % of a product
 * at N = 4096, B = 64 on an AVX-512 CPU (README, "Against the peers").
 * MPCE_NTT_REFUSAL_ZERO: all zeros, as out of place. Implementations that
 * check in place as they read (MPCE_IMPL_CHECKS_NTT_IN_PLACE: the x86-64
 * module's AVX-512 and IFMA kernels) then run unchecked, within 1 % of
 * their op tables in the same measurement; the others (ntt-soft, the
 * AArch64 module's) are still checked by the engine first, so there ZERO
 * changes only what a refused call leaves.
 *
 * Either way the call fails with MPCE_ERR_ARG. Its message names the first
 * coefficient not below its modulus, except where a kernel refused the
 * input in place under ZERO: it then names the first bad coefficient of
 * mul's operand that out is not, if that has one; otherwise the input is
 * gone, and the message says to rerun the call out of place or under KEEP
 * to find it. A mode
 * other than these two fails with MPCE_ERR_ARG and changes nothing. The
 * *_buf calls are not affected: they check host buffers before anything
 * runs. A call reads the mode once, as it starts; setting it while other
 * threads call on ctx is safe, and each call has one mode or the other.
 */
#define MPCE_NTT_REFUSAL_KEEP 0u
#define MPCE_NTT_REFUSAL_ZERO 1u
MPCE_API mpce_status mpce_ntt_set_refusal(mpce_ntt *ctx, unsigned mode);
/* The context's mode (MPCE_NTT_REFUSAL_KEEP for NULL), for code that sets
 * it for a while and puts it back. */
MPCE_API unsigned mpce_ntt_refusal(const mpce_ntt *ctx);

/* Buffer forms: each buffer holds batch*L*N words; in and out may be the
 * same buffer. */
MPCE_API mpce_status mpce_ntt_forward_buf(mpce_ntt *ctx, mpce_queue *queue, const char *impl,
                                          const mpce_buffer *in, mpce_buffer *out,
                                          size_t batch);
MPCE_API mpce_status mpce_ntt_inverse_buf(mpce_ntt *ctx, mpce_queue *queue, const char *impl,
                                          const mpce_buffer *in, mpce_buffer *out,
                                          size_t batch);
MPCE_API mpce_status mpce_ntt_mul_buf(mpce_ntt *ctx, mpce_queue *queue, const char *impl,
                                      const mpce_buffer *a, const mpce_buffer *b,
                                      mpce_buffer *out, size_t batch);

/* The implementation a call of op ("ntt.forward", "ntt.inverse", "ntt.mul")
 * on `batch` polynomials in host memory would run with this impl argument;
 * *name stays valid while the engine lives. */
MPCE_API mpce_status mpce_ntt_resolve(mpce_ntt *ctx, const char *impl, const char *op,
                                      size_t batch, const char **name);

#ifdef __cplusplus
}
#endif
#endif
