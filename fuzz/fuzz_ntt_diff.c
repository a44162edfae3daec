/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Differential: NTT forward, inverse and mul through every implementation
 * this CPU can run that serves the context's moduli, each compared word for
 * word with soft's; soft's against the harness's own arithmetic (mul is a
 * pointwise product; inverse(forward(a) * forward(b)) is the negacyclic
 * product of a and b, computed naively; inverse undoes forward; forward
 * by SPEC.md's definition for n <= 128). A
 * non-canonical input (a word >= q) must be refused by every
 * implementation, leaving out zeroed out of place, and in place untouched
 * (MPCE_NTT_REFUSAL_KEEP) or zeroed (MPCE_NTT_REFUSAL_ZERO).
 *
 * Input: shape (ring degree, moduli set), op, batch (0..3), misalignment,
 * flags (bit 0: in place; bit 1: one word set to q, non-canonical; bit 2:
 * some words set to q - 1; bit 3: the bad word in b; bit 4: the context
 * under MPCE_NTT_REFUSAL_ZERO), a seed for the words, then words that
 * replace the first ones.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "tests/ref_modarith.h"

#define MAX_IMPLS 16

static const size_t degrees[] = {8, 16, 32, 64, 128, 1024, 4096};
#define NDEG (sizeof(degrees) / sizeof(degrees[0]))
/* Moduli by width, found once: the largest prime below 2^bits that is
 * 1 mod 2^18 (so every degree above divides q - 1 twice over). */
static const unsigned widths[] = {30, 45, 50, 55, 60, 61};
#define NWIDTH (sizeof(widths) / sizeof(widths[0]))
static uint64_t primes[NWIDTH];
/* Sets of moduli, as indices into primes: one of each width, the IFMA and
 * AVX-512 boundary together, a repeated modulus. */
static const int sets[][3] = {{0, -1, -1}, {1, -1, -1}, {2, -1, -1}, {3, -1, -1}, {4, -1, -1},
                              {5, -1, -1}, {0, 2, 4},   {2, 3, -1},  {4, 4, -1}};
#define NSET (sizeof(sets) / sizeof(sets[0]))

static mpce_ntt *ctxs[NDEG][NSET];

static void find_primes(void)
{
    for (size_t w = 0; w < NWIDTH; w++) {
        const uint64_t step = UINT64_C(1) << 18;
        uint64_t q = ((UINT64_C(1) << widths[w]) - 1) / step * step + 1;
        while (!ref_is_prime(q))
            q -= step;
        primes[w] = q;
    }
}

static mpce_ntt *context(size_t d, size_t s, uint64_t *q, size_t *l)
{
    *l = 0;
    for (size_t i = 0; i < 3 && sets[s][i] >= 0; i++)
        q[(*l)++] = primes[sets[s][i]];
    if (!ctxs[d][s])
        FUZZ_CHECK(mpce_ntt_new(fuzz_engine(1), degrees[d], q, *l, &ctxs[d][s]) == MPCE_OK,
                   "mpce_ntt_new: %s", mpce_last_error());
    return ctxs[d][s];
}

/* The negacyclic product of a and b in Z_q[X]/(X^n + 1), naively. */
static void ref_negacyclic(const uint64_t *a, const uint64_t *b, uint64_t *out, size_t n,
                           uint64_t q)
{
    for (size_t k = 0; k < n; k++)
        out[k] = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            uint64_t p = ref_mulmod(a[i], b[j], q);
            size_t k = i + j;
            if (k < n)
                out[k] = (out[k] + p) % q;
            else
                out[k - n] = (out[k - n] + q - p) % q;
        }
}

/* The forward transform by SPEC.md's definition: slot j of a row is
 * sum_i a_i psi^((2 brv(j) + 1) i) mod q, brv reversing log2(n) bits. The
 * properties checked beside it (inverse undoes forward, the product) hold
 * for a consistently wrong slot order too; this does not, and psi itself
 * is checked against g before it is used. */
static void ref_forward(const uint64_t *a, uint64_t *out, size_t n, uint64_t q, uint64_t psi)
{
    unsigned bits = 0;
    while ((1u << bits) < n)
        bits++;
    for (size_t j = 0; j < n; j++) {
        size_t r = 0;
        for (unsigned b = 0; b < bits; b++)
            r |= ((j >> b) & 1u) << (bits - 1 - b);
        const uint64_t w = ref_powmod(psi, 2 * r + 1, q);
        uint64_t acc = 0, x = 1;
        for (size_t i = 0; i < n; i++) {
            acc = (acc + ref_mulmod(a[i], x, q)) % q;
            x = ref_mulmod(x, w, q);
        }
        out[j] = acc;
    }
}

static mpce_status run(mpce_ntt *ctx, const char *impl, int op, const uint64_t *a,
                       const uint64_t *b, uint64_t *out, size_t batch)
{
    if (op == 0)
        return mpce_ntt_forward(ctx, impl, a, out, batch);
    if (op == 1)
        return mpce_ntt_inverse(ctx, impl, a, out, batch);
    return mpce_ntt_mul(ctx, impl, a, b, out, batch);
}

static const char *const op_names[] = {"forward", "inverse", "mul"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *impls[MAX_IMPLS];
    static size_t nimpl;
    if (nimpl == 0) {
        find_primes();
        nimpl = fuzz_impls(fuzz_engine(1), MPCE_PRIM_NTT, impls, MAX_IMPLS);
    }
    struct fuzz_in in = {data, size};
    size_t d = fuzz_u8(&in) % NDEG, s = fuzz_u8(&in) % NSET;
    int op = fuzz_u8(&in) % 3;
    size_t batch = fuzz_u8(&in) % 4;
    /* Words stay 8-byte aligned (C's uint64_t): any of the 8 offsets from a
     * 64-byte boundary. */
    size_t mis = 8 * (fuzz_u8(&in) % 8);
    uint8_t flags = fuzz_u8(&in);
    uint64_t seed = fuzz_u64(&in);
    uint64_t q[3];
    size_t l;
    mpce_ntt *ctx = context(d, s, q, &l);
    const size_t n = degrees[d], words = batch * l * n;

    /* Two operands (b only for mul), canonical unless flags say not. */
    uint64_t *ops[2];
    for (int k = 0; k < 2; k++) {
        ops[k] = fuzz_alloc_misaligned(words * 8, mis + 8 * k);
        for (size_t i = 0; i < words; i++) {
            uint64_t v = fuzz_splitmix64(&seed);
            if (in.left >= 8)
                v = fuzz_u64(&in);
            uint64_t qi = q[(i / n) % l];
            ops[k][i] = (flags & 4) && (v & 7) == 0 ? qi - 1 : v % qi;
        }
    }
    int noncanonical = (flags & 2) && words > 0;
    if (noncanonical) {
        size_t at = (size_t)(seed % words);
        ops[(flags >> 3) & (op == 2)][at] = q[(at / n) % l] + (seed >> 60);
    }
    int in_place = flags & 1, zero = (flags & 16) != 0;
    FUZZ_CHECK(mpce_ntt_set_refusal(ctx, zero ? MPCE_NTT_REFUSAL_ZERO : MPCE_NTT_REFUSAL_KEEP) ==
                   MPCE_OK,
               "set_refusal: %s", mpce_last_error());

    uint64_t *want = malloc(words * 8 + 8);
    FUZZ_CHECK(want != NULL, "out of memory");
    size_t served = 0;
    for (size_t i = 0; i < nimpl; i++) {
        mpce_status st = mpce_ntt_forward(ctx, impls[i], NULL, NULL, 0);
        if (st == MPCE_ERR_NOIMPL && strstr(mpce_last_error(), "does not serve")) {
            FUZZ_CHECK(i > 0, "soft does not serve these moduli: %s", mpce_last_error());
            continue;
        }
        FUZZ_CHECK(st == MPCE_OK, "%s: an empty batch: %s", impls[i], mpce_last_error());
        uint64_t *out = fuzz_alloc_misaligned(words * 8, mis + 24 * i + 8);
        const uint64_t *a = ops[0], *b = ops[1];
        if (in_place) {
            memcpy(out, ops[0], words * 8);
            a = out;
        } else {
            for (size_t w = 0; w < words; w++)
                out[w] = UINT64_C(0x5a5a5a5a5a5a5a5a) + w;
        }
        uint64_t *before = malloc(words * 8 + 8);
        FUZZ_CHECK(before != NULL, "out of memory");
        memcpy(before, out, words * 8);
        st = run(ctx, impls[i], op, a, b, out, batch);
        if (noncanonical) {
            FUZZ_CHECK(st == MPCE_ERR_ARG, "%s %s took a word >= q (status %d)", impls[i],
                       op_names[op], (int)st);
            /* ntt.h: in place nothing is written (KEEP); otherwise out is zeroed. */
            if (in_place && !zero) {
                FUZZ_CHECK(memcmp(before, out, words * 8) == 0,
                           "%s %s wrote in place before refusing", impls[i], op_names[op]);
            } else {
                for (size_t w = 0; w < words; w++)
                    FUZZ_CHECK(out[w] == 0, "%s %s left out[%zu] = %llu on a refusal",
                               impls[i], op_names[op], w, (unsigned long long)out[w]);
            }
        } else {
            FUZZ_CHECK(st == MPCE_OK, "%s %s n=%zu l=%zu batch=%zu: %s", impls[i],
                       op_names[op], n, l, batch, mpce_last_error());
            if (i == 0)
                memcpy(want, out, words * 8);
            else
                FUZZ_CHECK(memcmp(want, out, words * 8) == 0,
                           "%s %s n=%zu l=%zu batch=%zu%s differs from soft", impls[i],
                           op_names[op], n, l, batch, in_place ? " in place" : "");
        }
        free(before);
        fuzz_free_misaligned(out);
        served++;
    }
    FUZZ_CHECK(served >= 1, "nothing served");

    /* soft against the harness's arithmetic. */
    if (!noncanonical && op == 2)
        for (size_t w = 0; w < words; w++)
            FUZZ_CHECK(want[w] == ref_mulmod(ops[0][w], ops[1][w], q[(w / n) % l]),
                       "soft mul: word %zu is not the product", w);
    if (!noncanonical && op == 0 && words > 0) {
        uint64_t *back = malloc(words * 8);
        FUZZ_CHECK(back != NULL, "out of memory");
        FUZZ_CHECK(mpce_ntt_inverse(ctx, impls[0], want, back, batch) == MPCE_OK, "inverse: %s",
                   mpce_last_error());
        FUZZ_CHECK(memcmp(back, ops[0], words * 8) == 0, "soft: inverse(forward(a)) != a");
        if (n <= 128) {
            /* inverse(forward(a) * forward(b)) = a * b mod X^n + 1, row 0. */
            uint64_t *fb = malloc(words * 8), *prod = malloc(words * 8), *ref = malloc(n * 8);
            FUZZ_CHECK(fb && prod && ref, "out of memory");
            FUZZ_CHECK(mpce_ntt_forward(ctx, impls[0], ops[1], fb, batch) == MPCE_OK &&
                           mpce_ntt_mul(ctx, impls[0], want, fb, prod, batch) == MPCE_OK &&
                           mpce_ntt_inverse(ctx, impls[0], prod, prod, batch) == MPCE_OK,
                       "soft: %s", mpce_last_error());
            uint64_t g0, psi0;
            FUZZ_CHECK(mpce_ntt_roots(ctx, 0, &g0, &psi0) == MPCE_OK, "roots: %s",
                       mpce_last_error());
            /* The root itself by SPEC.md: g^((q-1)/2n), of order 2n (g is
             * checked against its definition by fuzz_ntt_params). */
            FUZZ_CHECK(psi0 == ref_powmod(g0, (q[0] - 1) / (2 * n), q[0]) &&
                           ref_powmod(psi0, n, q[0]) == q[0] - 1,
                       "psi = %llu is not g^((q-1)/2n) of order 2n (g = %llu, q = %llu)",
                       (unsigned long long)psi0, (unsigned long long)g0,
                       (unsigned long long)q[0]);
            ref_forward(ops[0], ref, n, q[0], psi0);
            FUZZ_CHECK(memcmp(ref, want, n * 8) == 0,
                       "soft forward is not SPEC.md's definition (n=%zu, q=%llu, psi=%llu)", n,
                       (unsigned long long)q[0], (unsigned long long)psi0);
            ref_negacyclic(ops[0], ops[1], ref, n, q[0]);
            FUZZ_CHECK(memcmp(ref, prod, n * 8) == 0,
                       "soft: inverse(forward(a) * forward(b)) is not the negacyclic product "
                       "(n=%zu, q=%llu)", n, (unsigned long long)q[0]);
            free(fb);
            free(prod);
            free(ref);
        }
        free(back);
    }
    free(want);
    fuzz_free_misaligned(ops[0]);
    fuzz_free_misaligned(ops[1]);
    return 0;
}
