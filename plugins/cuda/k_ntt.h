/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NTT kernels (SPEC.md section 2) and their launchers in the kernel
 * dialect: the Harvey lazy butterflies of plugins/common/ntt_harvey.h with
 * its tables and value ranges ([0, 4q) forward, [0, 2q) inverse, canonical
 * at the end), so the outputs are those of every other backend.
 *
 * A row of up to CUDAK_NTT_SMEM_WORDS words is one block's work in shared
 * memory, every stage in one kernel. A longer row splits into chunks of
 * that size: the forward stages whose butterflies span more than a chunk
 * run first, one global pass each, after which every chunk is independent
 * and finishes in shared memory; the inverse runs the same way backwards.
 * Global passes take two stages at a time (4 words per thread), so
 * N = 2^16 is 2 global passes and one shared pass, N = 2^17 three.
 */
#ifndef MPCE_CUDA_K_NTT_H
#define MPCE_CUDA_K_NTT_H

#include "plugins/cuda/kd.h"
#include "plugins/cuda/kernels.h"

#define KD_NTT_THREADS 512u
#define KD_NTT_GLOBAL_THREADS 256u

KD_DEVICE uint64_t kd_csub(uint64_t x, uint64_t m)
{
    const uint64_t d = x - m;
    return d + (m & (uint64_t) - (int64_t)(d >> 63));
}

/* w * y mod q in [0, 2q) (Shoup). */
KD_DEVICE uint64_t kd_mul_lazy(uint64_t y, uint64_t w, uint64_t ws, uint64_t q)
{
    return w * y - KD_MULHI64(ws, y) * q;
}

/* a * b mod q, canonical, by Barrett (ntt_harvey.h's mpce_harvey_mul_barrett)
 * on 64-bit halves: k = bit length of q, 2 <= k <= 61, so every shift
 * below is in 1..63 and every intermediate fits 64 bits as there. */
KD_DEVICE uint64_t kd_mul_barrett(uint64_t a, uint64_t b, const struct cudak_ntt_mod *md)
{
    const unsigned k = (unsigned)md->bar_shift;
    const uint64_t hi = KD_MULHI64(a, b), lo = a * b;
    const uint64_t q1 = (hi << (65 - k)) | (lo >> (k - 1));
    const uint64_t h2 = KD_MULHI64(q1, md->bar_mu), l2 = q1 * md->bar_mu;
    const uint64_t q3 = (h2 << (63 - k)) | (l2 >> (k + 1));
    const uint64_t r = lo - q3 * md->q;
    return kd_csub(kd_csub(r, md->q), md->q);
}

/* One forward (Cooley-Tukey) butterfly in block i of the stage whose
 * twiddles start at wt[m] (m = n / (2 gap)): inputs and outputs in [0, 4q). */
KD_DEVICE void kd_ntt_fwd_bfly(const struct cudak_ntt *d, const struct cudak_ntt_mod *md,
                               const uint64_t *wt, size_t m, size_t i, uint64_t *x,
                               uint64_t *y)
{
    const uint64_t q = md->q, q2 = 2 * q;
    const uint64_t u = kd_csub(*x, q2);
    const uint64_t v = kd_mul_lazy(*y, wt[m + i], wt[d->n + m + i], q);
    *x = u + v;
    *y = u - v + q2;
}

/* One inverse (Gentleman-Sande) butterfly, the same way; the last stage
 * (m = 1, gap n/2) carries n^-1 and reduces. */
KD_DEVICE void kd_ntt_inv_bfly(const struct cudak_ntt *d, const struct cudak_ntt_mod *md,
                               const uint64_t *wt, size_t m, size_t i, uint64_t *x,
                               uint64_t *y)
{
    const uint64_t q = md->q, q2 = 2 * q;
    const uint64_t u = *x, v = *y;
    if (m == 1) {
        *x = kd_csub(kd_mul_lazy(u + v, md->ninv, md->ninv_shoup, q), q);
        *y = kd_csub(kd_mul_lazy(u - v + q2, md->last_w, md->last_w_shoup, q), q);
    } else {
        *x = kd_csub(u + v, q2);
        *y = kd_mul_lazy(u - v + q2, wt[2 * d->n + m + i], wt[3 * d->n + m + i], q);
    }
}

/*
 * What the forward and inverse kernels below share is written once: each
 * takes `inverse` as a constant, so that inlined, every test of it folds
 * away and each kernel compiles to its own direction only (the dialect
 * has no templates: it is C too).
 */
KD_DEVICE void kd_ntt_bfly(int inverse, const struct cudak_ntt *d,
                           const struct cudak_ntt_mod *md, const uint64_t *wt, size_t m,
                           size_t i, uint64_t *x, uint64_t *y)
{
    if (inverse)
        kd_ntt_inv_bfly(d, md, wt, m, i, x, y);
    else
        kd_ntt_fwd_bfly(d, md, wt, m, i, x, y);
}

/* Thread t of one stage of gap g over whole rows (global memory). */
KD_DEVICE void kd_ntt_pass_thread(int inverse, const struct cudak_ntt *d, const uint64_t *src,
                                  uint64_t *dst, size_t rows, size_t g, size_t t)
{
    const size_t half = d->n / 2;
    if (t >= rows * half)
        return;
    const size_t row = t / half, b = t % half;
    const size_t i = b / g, j = b % g;
    const uint32_t mi = d->rowmod[row % d->l];
    const struct cudak_ntt_mod md = d->mods[mi];
    const size_t x = row * d->n + 2 * i * g + j;
    uint64_t u = src[x], v = src[x + g];
    kd_ntt_bfly(inverse, d, &md, d->words + 4 * d->n * mi, d->n / (2 * g), i, &u, &v);
    dst[x] = u;
    dst[x + g] = v;
}

/* Thread t of two stages in one global pass, gaps g and g/2: the 4 words
 * a, a + g/2, a + g, a + 3g/2 are closed under both, so a thread takes
 * them through both, the wide stage first forward and last inverse. */
KD_DEVICE void kd_ntt_pass4_thread(int inverse, const struct cudak_ntt *d, const uint64_t *src,
                                   uint64_t *dst, size_t rows, size_t g, size_t t)
{
    const size_t quarter = d->n / 4, h = g / 2;
    if (t >= rows * quarter)
        return;
    const size_t row = t / quarter, b = t % quarter;
    const size_t i = b / h, j = b % h;
    const uint32_t mi = d->rowmod[row % d->l];
    const struct cudak_ntt_mod md = d->mods[mi];
    const uint64_t *wt = d->words + 4 * d->n * mi;
    const size_t a = row * d->n + 2 * i * g + j, m = d->n / (2 * g);
    uint64_t x0 = src[a], x1 = src[a + h], x2 = src[a + g], x3 = src[a + g + h];
    if (!inverse) {
        kd_ntt_fwd_bfly(d, &md, wt, m, i, &x0, &x2);
        kd_ntt_fwd_bfly(d, &md, wt, m, i, &x1, &x3);
    }
    kd_ntt_bfly(inverse, d, &md, wt, 2 * m, 2 * i, &x0, &x1);
    kd_ntt_bfly(inverse, d, &md, wt, 2 * m, 2 * i + 1, &x2, &x3);
    if (inverse) {
        kd_ntt_inv_bfly(d, &md, wt, m, i, &x0, &x2);
        kd_ntt_inv_bfly(d, &md, wt, m, i, &x1, &x3);
    }
    dst[a] = x0;
    dst[a + h] = x1;
    dst[a + g] = x2;
    dst[a + g + h] = x3;
}

KD_KERNEL(kd_ntt_fwd_pass, struct cudak_ntt d, const uint64_t *src, uint64_t *dst, size_t rows,
          size_t g)
{
    KD_THREADS
    {
        kd_ntt_pass_thread(0, &d, src, dst, rows, g, KD_BID * KD_BDIM + kd_tid);
    }
}

KD_KERNEL(kd_ntt_inv_pass, struct cudak_ntt d, const uint64_t *src, uint64_t *dst, size_t rows,
          size_t g)
{
    KD_THREADS
    {
        kd_ntt_pass_thread(1, &d, src, dst, rows, g, KD_BID * KD_BDIM + kd_tid);
    }
}

KD_KERNEL(kd_ntt_fwd_pass4, struct cudak_ntt d, const uint64_t *src, uint64_t *dst, size_t rows,
          size_t g)
{
    KD_THREADS
    {
        kd_ntt_pass4_thread(0, &d, src, dst, rows, g, KD_BID * KD_BDIM + kd_tid);
    }
}

KD_KERNEL(kd_ntt_inv_pass4, struct cudak_ntt d, const uint64_t *src, uint64_t *dst, size_t rows,
          size_t g)
{
    KD_THREADS
    {
        kd_ntt_pass4_thread(1, &d, src, dst, rows, g, KD_BID * KD_BDIM + kd_tid);
    }
}

/*
 * The body of both shared-memory kernels: one chunk of c = min(n, smem)
 * words (block: row, chunk) through the stages of gap c/2 .. 1 forward or
 * 1 .. c/2 inverse; forward then reduces to canonical values, the inverse
 * has (its last stage at gap n/2, or the global passes after it will).
 * A macro, not a function, since the thread sections and their barriers
 * must be the kernel's own; `inverse` is a constant.
 */
#define KD_NTT_SMEM_BODY(d, src, dst, a, inverse)                                          \
    const size_t c = (d).n < CUDAK_NTT_SMEM_WORDS ? (d).n : CUDAK_NTT_SMEM_WORDS;          \
    const size_t chunks = (d).n / c;                                                       \
    const size_t row = KD_BID / chunks, chunk = KD_BID % chunks;                           \
    const size_t base = row * (d).n + chunk * c;                                           \
    const uint32_t mi = (d).rowmod[row % (d).l];                                           \
    const struct cudak_ntt_mod md = (d).mods[mi];                                          \
    const uint64_t *wt = (d).words + 4 * (d).n * mi;                                       \
                                                                                           \
    KD_THREADS                                                                             \
    {                                                                                      \
        for (size_t e = kd_tid; e < c; e += KD_BDIM)                                       \
            (a)[e] = (src)[base + e];                                                      \
    }                                                                                      \
    KD_SYNC();                                                                             \
    for (size_t s = 1, g = (inverse) ? 1 : c / 2; s < c;                                   \
         s *= 2, g = (inverse) ? 2 * g : g / 2) {                                          \
        KD_THREADS                                                                         \
        {                                                                                  \
            const size_t m = (d).n / (2 * g);                                              \
            for (size_t b = kd_tid; b < c / 2; b += KD_BDIM) {                             \
                const size_t il = b / g, j = b % g;                                        \
                const size_t i = chunk * (c / (2 * g)) + il;                               \
                const size_t x = 2 * il * g + j;                                           \
                kd_ntt_bfly((inverse), &(d), &md, wt, m, i, &(a)[x], &(a)[x + g]);         \
            }                                                                              \
        }                                                                                  \
        KD_SYNC();                                                                         \
    }                                                                                      \
    KD_THREADS                                                                             \
    {                                                                                      \
        for (size_t e = kd_tid; e < c; e += KD_BDIM)                                       \
            (dst)[base + e] =                                                              \
                (inverse) ? (a)[e] : kd_csub(kd_csub((a)[e], 2 * md.q), md.q);             \
    }

KD_KERNEL(kd_ntt_fwd_smem, struct cudak_ntt d, const uint64_t *src, uint64_t *dst)
{
    KD_SHARED uint64_t a[CUDAK_NTT_SMEM_WORDS];
    KD_NTT_SMEM_BODY(d, src, dst, a, 0)
}

KD_KERNEL(kd_ntt_inv_smem, struct cudak_ntt d, const uint64_t *src, uint64_t *dst)
{
    KD_SHARED uint64_t a[CUDAK_NTT_SMEM_WORDS];
    KD_NTT_SMEM_BODY(d, src, dst, a, 1)
}

KD_KERNEL(kd_ntt_mul_k, struct cudak_ntt d, const uint64_t *a, const uint64_t *b, uint64_t *out,
          size_t words)
{
    KD_THREADS
    {
        const size_t t = KD_BID * KD_BDIM + kd_tid;
        if (t >= words)
            continue;
        const uint32_t mi = d.rowmod[(t / d.n) % d.l];
        out[t] = kd_mul_barrett(a[t], b[t], &d.mods[mi]);
    }
}

/* ---- launchers ---- */

KD_HOSTDEV unsigned kd_ntt_block_threads(size_t n)
{
    const size_t c = n < CUDAK_NTT_SMEM_WORDS ? n : CUDAK_NTT_SMEM_WORDS;
    return c / 2 < KD_NTT_THREADS ? (unsigned)(c / 2) : KD_NTT_THREADS;
}

KD_LAUNCHER void cudak_ntt_forward(cudak_stream s, const struct cudak_ntt *d, const uint64_t *in,
                                   uint64_t *out, size_t rows)
{
    const size_t c = d->n < CUDAK_NTT_SMEM_WORDS ? d->n : CUDAK_NTT_SMEM_WORDS;
    const uint64_t *src = in;
    const size_t bfly = rows * (d->n / 2);
    for (size_t g = d->n / 2; g > c / 2; src = out) {
        if (g / 2 > c / 2) {
            KD_LAUNCH(kd_ntt_fwd_pass4, kd_ceil_div(bfly / 2, KD_NTT_GLOBAL_THREADS),
                      KD_NTT_GLOBAL_THREADS, s, *d, src, out, rows, g);
            g /= 4;
        } else {
            KD_LAUNCH(kd_ntt_fwd_pass, kd_ceil_div(bfly, KD_NTT_GLOBAL_THREADS),
                      KD_NTT_GLOBAL_THREADS, s, *d, src, out, rows, g);
            g /= 2;
        }
    }
    KD_LAUNCH(kd_ntt_fwd_smem, rows * (d->n / c), kd_ntt_block_threads(d->n), s, *d, src, out);
}

KD_LAUNCHER void cudak_ntt_inverse(cudak_stream s, const struct cudak_ntt *d, const uint64_t *in,
                                   uint64_t *out, size_t rows)
{
    const size_t c = d->n < CUDAK_NTT_SMEM_WORDS ? d->n : CUDAK_NTT_SMEM_WORDS;
    const size_t bfly = rows * (d->n / 2);
    KD_LAUNCH(kd_ntt_inv_smem, rows * (d->n / c), kd_ntt_block_threads(d->n), s, *d, in, out);
    for (size_t g = c; g < d->n;) {
        if (2 * g < d->n) {
            KD_LAUNCH(kd_ntt_inv_pass4, kd_ceil_div(bfly / 2, KD_NTT_GLOBAL_THREADS),
                      KD_NTT_GLOBAL_THREADS, s, *d, out, out, rows, 2 * g);
            g *= 4;
        } else {
            KD_LAUNCH(kd_ntt_inv_pass, kd_ceil_div(bfly, KD_NTT_GLOBAL_THREADS),
                      KD_NTT_GLOBAL_THREADS, s, *d, out, out, rows, g);
            g *= 2;
        }
    }
}

KD_LAUNCHER void cudak_ntt_mul(cudak_stream s, const struct cudak_ntt *d, const uint64_t *a,
                               const uint64_t *b, uint64_t *out, size_t rows)
{
    const size_t words = rows * d->n;
    KD_LAUNCH(kd_ntt_mul_k, kd_ceil_div(words, KD_NTT_GLOBAL_THREADS), KD_NTT_GLOBAL_THREADS, s,
              *d, a, b, out, words);
}

#endif
