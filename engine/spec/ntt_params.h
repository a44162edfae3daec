/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NTT parameter math for the engine (SPEC.md section 2): validation of the
 * ring degree and moduli, the primitive root g and the 2N-th root psi.
 * Run once per NTT context, so clarity beats speed except where q - 1 has a
 * large cofactor (the factorisation uses Pollard rho).
 */
#ifndef MPCE_ENGINE_NTT_PARAMS_H
#define MPCE_ENGINE_NTT_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "mpcengine/common.h"

/* a * b mod q and a^e mod q for q < 2^63 (any 64-bit q for mulmod). */
uint64_t mpce_mulmod64(uint64_t a, uint64_t b, uint64_t q);
uint64_t mpce_powmod64(uint64_t a, uint64_t e, uint64_t q);

/* Deterministic Miller-Rabin: exact for every 64-bit n. */
int mpce_is_prime64(uint64_t n);

/* The smallest g >= 3 that generates (Z/qZ)^*, q an odd prime; 0 if none
 * below q (only for tiny q). */
uint64_t mpce_primitive_root(uint64_t q);

/*
 * Check n (a power of two in [8, 2^17]), l (1..64) and every modulus
 * (prime, < 2^61, = 1 mod 2n; duplicates allowed), then fill g[i] and
 * psi[i] = g[i]^((q_i - 1) / 2n). MPCE_ERR_ARG with the error detail naming
 * the offending field otherwise; g and psi are written only on success.
 */
mpce_status mpce_ntt_params(size_t n, const uint64_t *moduli, size_t l, uint64_t *g,
                            uint64_t *psi);

/* For tests: the verdict of every input-check variant this CPU runs
 * (portable, AVX2, AVX-512) on one row, into verdicts[0 .. return). */
unsigned mpce_ntt_check_variants(const uint64_t *row, size_t n, uint64_t q, int *verdicts);

#endif
