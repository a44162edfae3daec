/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Modular arithmetic for the tests' and fuzz targets' independent
 * references: 128-bit products, square-and-multiply, and a primality test
 * with other witnesses than the engine's (Sinclair's seven bases, exact
 * for every 64-bit n; the engine uses the first twelve primes), so that a
 * shared mistake in one base set cannot hide.
 */
#ifndef MPCE_TESTS_REF_MODARITH_H
#define MPCE_TESTS_REF_MODARITH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t ref_mulmod(uint64_t a, uint64_t b, uint64_t q)
{
    return (uint64_t)((unsigned __int128)a * b % q);
}

static inline uint64_t ref_powmod(uint64_t b, uint64_t e, uint64_t q)
{
    uint64_t r = 1 % q;
    b %= q;
    for (; e; e >>= 1, b = ref_mulmod(b, b, q))
        if (e & 1)
            r = ref_mulmod(r, b, q);
    return r;
}

static inline int ref_is_prime(uint64_t n)
{
    static const uint64_t bases[] = {2, 325, 9375, 28178, 450775, 9780504, 1795265022};
    if (n < 2 || n % 2 == 0)
        return n == 2;
    uint64_t d = n - 1;
    unsigned s = 0;
    while ((d & 1) == 0)
        d >>= 1, s++;
    for (size_t k = 0; k < sizeof(bases) / sizeof(bases[0]); k++) {
        const uint64_t a = bases[k] % n;
        if (a == 0)
            continue; /* a multiple of n witnesses nothing */
        uint64_t x = ref_powmod(a, d, n);
        if (x == 1 || x == n - 1)
            continue;
        unsigned r = 1;
        for (; r < s; r++) {
            x = ref_mulmod(x, x, n);
            if (x == n - 1)
                break;
        }
        if (r == s)
            return 0;
    }
    return 1;
}

#endif
