/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The soft backend's two portable AES-128 encryption cores. prg.c writes the
 * ecb/mmo/ctr loops once over this interface; nothing else calls the cores
 * directly (other code reaches them through the PRG vtables).
 */
#ifndef MPCE_SOFT_AES_H
#define MPCE_SOFT_AES_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/common/key_state.h"

struct mpce_aes_core {
    /* Bytes of one expanded key; a multiple of 8, stored 8-byte aligned. */
    size_t ks_bytes;
    /* Blocks the core encrypts per internal pass; callers that build their
     * input (ctr, mmo) use buffers of a multiple of this. */
    size_t pass_blocks;
    /* Expand one 16-byte key into ks (ks_bytes, 8-byte aligned). */
    void (*expand)(void *ks, const uint8_t key[16]);
    /* out[i] = AES_ks(in[i]) for any n >= 0; in and out may be unaligned and
     * in == out is allowed (other overlaps are not). ks is only read, so one
     * schedule serves several threads at once. */
    void (*encrypt)(const void *ks, const uint8_t *in, uint8_t *out, size_t n);
};

/* Key material is cleared with mpce_wipe (plugins/common/key_state.h). */

/* Constant time: Boolean-circuit S-box, no secret-dependent branch or index. */
extern const struct mpce_aes_core mpce_aes_bitslice_core;
/* Variable time: 32-bit T-tables indexed by state bytes (leaks via cache). */
extern const struct mpce_aes_core mpce_aes_ttable_core;

#endif
