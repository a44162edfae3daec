/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SPEC.md's arithmetic that the core and the backends' shared skeletons both
 * compute: written once here so the two can never disagree. Private (not
 * installed); includes nothing of the engine's or of any backend's.
 */
#ifndef MPCE_SPEC_H
#define MPCE_SPEC_H

#include <stddef.h>
#include <stdint.h>

/* ---- section 1: PRG ----------------------------------------------------------- */

/* The CTR input block for counter c: LE64(c) || 0^64. */
static inline void mpce_spec_ctr_block(uint64_t c, uint8_t block[16])
{
    for (unsigned b = 0; b < 8; b++) {
        block[b] = (uint8_t)(c >> (8 * b));
        block[8 + b] = 0;
    }
}

/* ---- section 3: LPN ----------------------------------------------------------- */

/* Table blocks XORed into each output. */
#define MPCE_SPEC_LPN_D 10u

/* Index-stream blocks consumed by n outputs: 5*L4/2 + 3*(n mod 4) with
 * L4 = n - n mod 4. */
static inline uint64_t mpce_spec_lpn_consumed(uint64_t n)
{
    return (n - n % 4u) / 4u * 10u + 3u * (n % 4u);
}

/* ---- section 4: DPF ------------------------------------------------------------ */

/* The control bit of a block: bit 0 of byte 12. */
#define MPCE_SPEC_DPF_TBIT_BYTE 12u

/* Output bytes per point: 16 for the bytes group (0), 8 for u64 (1); 0 else. */
static inline size_t mpce_spec_dpf_output_size(unsigned group)
{
    return group == 0 ? 16u : group == 1 ? 8u : 0u;
}

/* The points of a domain of n bits (1..64) are x & this mask. */
static inline uint64_t mpce_spec_dpf_domain_mask(unsigned bits)
{
    return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* Serialized size of a format v1 key with n domain bits: 72 + 16n + ceil(n/8). */
static inline size_t mpce_spec_dpf_key_size(unsigned bits)
{
    return 72u + 16u * (size_t)bits + ((size_t)bits + 7u) / 8u;
}

/* ---- section 5: deterministic inputs ------------------------------------------- */

/* splitmix64, one step: the generator of self-test and benchmark inputs. */
static inline uint64_t mpce_spec_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* ---- secrets ------------------------------------------------------------------- */

/* Zero len bytes in a way the compiler keeps (key shares before free()). */
static inline void mpce_spec_wipe(void *p, size_t len)
{
    volatile uint8_t *v = (volatile uint8_t *)p;
    while (len--)
        *v++ = 0;
}

#endif
