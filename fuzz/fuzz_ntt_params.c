/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The NTT parameter checks (engine/spec/ntt_params.c mpce_ntt_params, the
 * public mpce_ntt_new) and the input-row check's variants
 * (mpce_ntt_check_variants, engine/api/ntt.c). Each verdict is compared with
 * one the harness reaches on its own: its own primality test and root
 * checks for the parameters, a plain loop for the row.
 *
 * Input: n selector, l selector, flags, then l moduli (8 bytes each, little
 * endian), then a row length, a row modulus and the row's words. Flags: bit
 * 0 snaps each modulus to 1 mod 2N (so that primes, roots and duplicates
 * are reached, not only "not 1 mod 2N"); bit 1 also makes a context with
 * mpce_ntt_new where it is small enough.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine/spec/ntt_params.h"
#include "fuzz/fuzz.h"
#include "tests/ref_modarith.h"

#define MAX_L 70
#define MAX_ROW 70

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t nsel = fuzz_u8(&in);
    size_t n = nsel < 0xf0 ? (size_t)1 << (nsel % 20) : (size_t)fuzz_u64(&in);
    size_t l = fuzz_u8(&in) % MAX_L;
    uint8_t flags = fuzz_u8(&in);
    uint64_t moduli[MAX_L];
    for (size_t i = 0; i < l; i++) {
        moduli[i] = fuzz_u64(&in);
        if ((flags & 1) && n >= 1 && n <= (size_t)1 << 20) {
            uint64_t two_n = 2 * (uint64_t)n;
            moduli[i] = (moduli[i] >> (nsel & 3)) / two_n * two_n + 1;
        }
    }

    /* The verdict on our own. */
    int valid = n >= 8 && n <= ((size_t)1 << 17) && (n & (n - 1)) == 0 && l >= 1 && l <= 64;
    for (size_t i = 0; valid && i < l; i++)
        valid = moduli[i] < (UINT64_C(1) << 61) && ref_is_prime(moduli[i]) &&
                moduli[i] % (2 * (uint64_t)n) == 1;

    uint64_t g[MAX_L], psi[MAX_L];
    fuzz_clear_error();
    mpce_status st = mpce_ntt_params(n, l ? moduli : NULL, l, g, psi);
    FUZZ_CHECK((st == MPCE_OK) == valid, "n = %zu, l = %zu: status %d, expected %s", n, l,
               (int)st, valid ? "valid" : "a refusal");
    if (st == MPCE_OK) {
        for (size_t i = 0; i < l; i++) {
            uint64_t q = moduli[i];
            /* g generates (Z/qZ)^*: a non-residue at least; psi a primitive
             * 2N-th root of unity derived from it. */
            FUZZ_CHECK(g[i] >= 3 && g[i] < q && ref_powmod(g[i], (q - 1) / 2, q) == q - 1,
                       "q = %" PRIu64 ": g = %" PRIu64 " is a residue", q, g[i]);
            FUZZ_CHECK(psi[i] == ref_powmod(g[i], (q - 1) / (2 * (uint64_t)n), q) &&
                           ref_powmod(psi[i], n, q) == q - 1,
                       "q = %" PRIu64 ": psi = %" PRIu64 " is not a primitive 2N-th root", q,
                       psi[i]);
        }
    } else {
        FUZZ_CHECK(mpce_last_error()[0] != '\0', "refused without a reason");
    }

    if ((flags & 2) && n * l <= 4096 && n <= 4096) {
        mpce_ntt *ctx = NULL;
        mpce_status st2 = mpce_ntt_new(fuzz_engine(0), n, l ? moduli : NULL, l, &ctx);
        FUZZ_CHECK(st2 == st, "mpce_ntt_new says %d, mpce_ntt_params %d", (int)st2, (int)st);
        if (st2 == MPCE_OK) {
            FUZZ_CHECK(mpce_ntt_degree(ctx) == n && mpce_ntt_modulus_count(ctx) == l,
                       "a context of another shape");
            for (size_t i = 0; i < l; i++) {
                uint64_t cg, cpsi;
                FUZZ_CHECK(mpce_ntt_roots(ctx, i, &cg, &cpsi) == MPCE_OK && cg == g[i] &&
                               cpsi == psi[i],
                           "the context's roots of row %zu differ", i);
            }
            mpce_ntt_free(ctx);
        }
    }

    /* The row check: any word >= q is non-canonical. Odd lengths reach the
     * vector variants' tails. */
    size_t rn = fuzz_u8(&in) % MAX_ROW;
    /* A modulus the engine could hold (2 <= q < 2^61): the variants differ
     * outside it, where no context ever calls them (q = 0, q >= 2^63). */
    uint64_t q = fuzz_u64(&in) % ((UINT64_C(1) << 61) - 2) + 2;
    uint64_t *row = malloc((rn ? rn : 1) * sizeof(*row));
    FUZZ_CHECK(row != NULL, "out of memory");
    int expect = 0;
    for (size_t i = 0; i < rn; i++) {
        row[i] = fuzz_u64(&in);
        if ((flags & 4) && i + 1 < rn)
            row[i] %= q; /* canonical but for the last word, which decides */
        expect |= row[i] >= q;
    }
    int verdicts[8];
    unsigned k = mpce_ntt_check_variants(row, rn, q, verdicts);
    FUZZ_CHECK(k >= 1 && k <= 8, "%u variants", k);
    for (unsigned i = 0; i < k; i++)
        FUZZ_CHECK((verdicts[i] != 0) == expect, "variant %u says %d for a row of %zu words", i,
                   verdicts[i], rn);
    free(row);
    return 0;
}
