/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DPF keys: the public opaque type and the helpers engine/api/dpf.c uses.
 * Serialized format v1: SPEC.md section 4 and tests/vectors/README.md.
 */
#ifndef MPCE_ENGINE_DPF_KEY_H
#define MPCE_ENGINE_DPF_KEY_H

#include <stdint.h>

#include "mpcengine/dpf.h"
#include "mpcengine/plugin.h"

/* A parsed, validated key; the engine never holds an unchecked one. */
struct mpce_dpf_key {
    struct mpce_dpf_key_v1 k;
};

/* Format v1 of k into buf, which holds mpce_spec_dpf_key_size(k->bits)
 * bytes: the layout mpce_dpf_key_serialize and the self-test both write. */
void mpce_dpf_key_v1_write(const struct mpce_dpf_key_v1 *k, uint8_t *buf);

/* Parse and validate one format v1 key of len bytes at buf into k, with
 * errors prefixed by fn, and by "key INDEX" unless index is (size_t)-1. */
mpce_status mpce_dpf_key_v1_read(const char *fn, size_t index, const uint8_t *buf, size_t len,
                                 struct mpce_dpf_key_v1 *k);

/* A malloc'd copy of a plugin-filled key; NULL when out of memory (the
 * caller reports it). */
mpce_dpf_key *mpce_dpf_key_wrap(const struct mpce_dpf_key_v1 *k);

/* The default PRG keys: the first 16 bytes of SHA-256 of
 * "mpcengine dpf prg key L" and of "mpcengine dpf prg key R". */
mpce_status mpce_dpf_default_keys(uint8_t kl[16], uint8_t kr[16]);

#endif
