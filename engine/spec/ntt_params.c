/* SPDX-License-Identifier: Apache-2.0 */
/* NTT parameters: modulus checks, the primitive root g and psi (SPEC.md 2). */
#include "config.h"

#include <inttypes.h>

#include "engine/internal.h"
#include "engine/spec/ntt_params.h"

uint64_t mpce_mulmod64(uint64_t a, uint64_t b, uint64_t q)
{
    return (uint64_t)(((unsigned __int128)a * b) % q);
}

uint64_t mpce_powmod64(uint64_t a, uint64_t e, uint64_t q)
{
    uint64_t r = 1 % q;
    a %= q;
    while (e) {
        if (e & 1)
            r = mpce_mulmod64(r, a, q);
        a = mpce_mulmod64(a, a, q);
        e >>= 1;
    }
    return r;
}

int mpce_is_prime64(uint64_t n)
{
    /* These twelve bases decide primality exactly for all n < 3.3e24. */
    static const uint64_t bases[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
    const size_t nb = sizeof(bases) / sizeof(bases[0]);
    if (n < 2)
        return 0;
    for (size_t i = 0; i < nb; i++) {
        if (n % bases[i] == 0)
            return n == bases[i];
    }
    uint64_t d = n - 1;
    unsigned s = 0;
    while ((d & 1) == 0) {
        d >>= 1;
        s++;
    }
    for (size_t i = 0; i < nb; i++) {
        uint64_t x = mpce_powmod64(bases[i], d, n);
        if (x == 1 || x == n - 1)
            continue;
        unsigned r;
        for (r = 1; r < s; r++) {
            x = mpce_mulmod64(x, x, n);
            if (x == n - 1)
                break;
        }
        if (r == s)
            return 0;
    }
    return 1;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* A nontrivial factor of the odd composite n (Pollard rho, Brent's cycle
 * search with batched gcds). q - 1 for an NTT prime can leave a cofactor
 * near 2^61 after the small factors, far beyond trial division. */
static uint64_t rho_factor(uint64_t n)
{
    for (uint64_t c = 1;; c++) {
        uint64_t y = 2, x = 2, ys = 2, g = 1, acc = 1;
        const uint64_t m = 128;
        for (uint64_t r = 1; g == 1; r <<= 1) {
            x = y;
            for (uint64_t i = 0; i < r; i++)
                y = (mpce_mulmod64(y, y, n) + c) % n;
            for (uint64_t k = 0; k < r && g == 1; k += m) {
                ys = y;
                uint64_t lim = r - k < m ? r - k : m;
                for (uint64_t i = 0; i < lim; i++) {
                    y = (mpce_mulmod64(y, y, n) + c) % n;
                    acc = mpce_mulmod64(acc, x > y ? x - y : y - x, n);
                }
                g = gcd64(acc, n);
            }
        }
        if (g == n) {
            /* The batch overshot: replay it one step at a time. */
            do {
                ys = (mpce_mulmod64(ys, ys, n) + c) % n;
                g = gcd64(x > ys ? x - ys : ys - x, n);
            } while (g == 1);
        }
        if (g != n)
            return g;
    }
}

struct factors {
    size_t count;
    uint64_t p[64]; /* distinct primes; a 64-bit number has fewer than 64 */
};

static void add_factor(struct factors *f, uint64_t p)
{
    for (size_t i = 0; i < f->count; i++) {
        if (f->p[i] == p)
            return;
    }
    f->p[f->count++] = p;
}

static void factor_rest(struct factors *f, uint64_t n)
{
    if (n == 1)
        return;
    if (mpce_is_prime64(n)) {
        add_factor(f, n);
        return;
    }
    uint64_t d = rho_factor(n);
    factor_rest(f, d);
    factor_rest(f, n / d);
}

static void factor(struct factors *f, uint64_t n)
{
    f->count = 0;
    for (uint64_t p = 2; p < 1024 && p * p <= n; p += (p == 2 ? 1 : 2)) {
        if (n % p == 0) {
            add_factor(f, p);
            while (n % p == 0)
                n /= p;
        }
    }
    factor_rest(f, n);
}

uint64_t mpce_primitive_root(uint64_t q)
{
    struct factors f;
    factor(&f, q - 1);
    for (uint64_t g = 3; g < q; g++) {
        size_t i;
        for (i = 0; i < f.count; i++) {
            if (mpce_powmod64(g, (q - 1) / f.p[i], q) == 1)
                break;
        }
        if (i == f.count)
            return g;
    }
    return 0;
}

mpce_status mpce_ntt_params(size_t n, const uint64_t *moduli, size_t l, uint64_t *g,
                            uint64_t *psi)
{
    uint64_t gs[MPCE_NTT_MAX_MODULI], psis[MPCE_NTT_MAX_MODULI];

    if (n < MPCE_NTT_MIN_N || n > MPCE_NTT_MAX_N || (n & (n - 1)) != 0)
        return mpce_error(MPCE_ERR_ARG,
                          "n = %zu is not a valid ring degree: expected a power of two "
                          "in [8, 131072] (2^3 .. 2^17)",
                          n);
    if (l < 1 || l > MPCE_NTT_MAX_MODULI)
        return mpce_error(MPCE_ERR_ARG,
                          "l = %zu is not a valid moduli count: expected 1 .. %u", l,
                          MPCE_NTT_MAX_MODULI);
    if (moduli == NULL)
        return mpce_error(MPCE_ERR_ARG, "moduli is NULL: expected an array of l = %zu primes",
                          l);
    if (g == NULL || psi == NULL)
        return mpce_error(MPCE_ERR_ARG, "%s is NULL: expected an array of l = %zu words",
                          g == NULL ? "g" : "psi", l);

    const uint64_t two_n = 2 * (uint64_t)n;
    for (size_t i = 0; i < l; i++) {
        const uint64_t q = moduli[i];
        if (q >= MPCE_NTT_MAX_Q)
            return mpce_error(MPCE_ERR_ARG,
                              "moduli[%zu] = %" PRIu64 " is >= 2^61: expected a prime below "
                              "2^61 (lazy butterflies need the headroom)",
                              i, q);
        if (q < 2)
            return mpce_error(MPCE_ERR_ARG,
                              "moduli[%zu] = %" PRIu64 " is not a prime: expected a prime "
                              "q = 1 mod 2N below 2^61",
                              i, q);
        if (!mpce_is_prime64(q))
            return mpce_error(MPCE_ERR_ARG,
                              "moduli[%zu] = %" PRIu64 " is composite: expected a prime "
                              "q = 1 mod 2N below 2^61",
                              i, q);
        if (q % two_n != 1)
            return mpce_error(MPCE_ERR_ARG,
                              "moduli[%zu] = %" PRIu64 " is not 1 mod 2N = %" PRIu64
                              ": expected a prime q with 2N dividing q - 1",
                              i, q, two_n);
        /* Duplicates repeat the same (deterministic) search result. */
        size_t j;
        for (j = 0; j < i && moduli[j] != q; j++)
            ;
        if (j < i) {
            gs[i] = gs[j];
            psis[i] = psis[j];
            continue;
        }
        gs[i] = mpce_primitive_root(q);
        psis[i] = mpce_powmod64(gs[i], (q - 1) / two_n, q);
    }
    for (size_t i = 0; i < l; i++) {
        g[i] = gs[i];
        psi[i] = psis[i];
    }
    return MPCE_OK;
}
