/* SPDX-License-Identifier: Apache-2.0 */
/* DPF key format v1: size, serialization and the hostile-input parser. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "engine/spec/dpf_key.h"
#include "engine/internal.h"
#include "spec/spec.h"

#define KEY_MAGIC "MDPF"
#define KEY_VERSION 1u
#define KEY_HEADER 8u      /* magic, version, n, group, party */
#define OFF_KL 8u
#define OFF_KR 24u
#define OFF_SEED 40u
#define OFF_CW 56u
#define TBIT_BYTE MPCE_SPEC_DPF_TBIT_BYTE

static size_t tr_bytes(unsigned bits)
{
    return (bits + 7u) / 8u;
}

MPCE_API size_t mpce_dpf_output_size(mpce_dpf_group group)
{
    return mpce_spec_dpf_output_size((unsigned)group);
}

MPCE_API size_t mpce_dpf_key_size(unsigned bits)
{
    return mpce_spec_dpf_key_size(bits);
}

void mpce_dpf_key_v1_write(const struct mpce_dpf_key_v1 *k, uint8_t *buf)
{
    memcpy(buf, KEY_MAGIC, 4);
    buf[4] = KEY_VERSION;
    buf[5] = k->bits;
    buf[6] = k->group;
    buf[7] = k->party;
    memcpy(buf + OFF_KL, k->kl, 16);
    memcpy(buf + OFF_KR, k->kr, 16);
    memcpy(buf + OFF_SEED, k->seed, 16);
    size_t off = OFF_CW;
    for (unsigned i = 0; i < k->bits; i++, off += 16)
        memcpy(buf + off, k->cw_s[i], 16);
    memcpy(buf + off, k->cw_tr, tr_bytes(k->bits));
    off += tr_bytes(k->bits);
    memcpy(buf + off, k->cw_out, 16);
}

MPCE_API mpce_status mpce_dpf_key_serialize(const mpce_dpf_key *key, uint8_t *buf, size_t buf_len,
                                   size_t *written)
{
    static const char fn[] = "mpce_dpf_key_serialize";
    if (!key)
        return mpce_error(MPCE_ERR_ARG, "%s: key is NULL", fn);
    if (!buf)
        return mpce_error(MPCE_ERR_ARG, "%s: buf is NULL", fn);
    const struct mpce_dpf_key_v1 *k = &key->k;
    const size_t need = mpce_dpf_key_size(k->bits);
    if (buf_len < need)
        return mpce_error(MPCE_ERR_ARG,
                          "%s: buf_len = %zu bytes, but a key with %u domain bits needs %zu "
                          "(mpce_dpf_key_size)",
                          fn, buf_len, k->bits, need);
    mpce_dpf_key_v1_write(k, buf);
    if (written)
        *written = need;
    return MPCE_OK;
}

/* Where a parse error is: "fn" for one key, "fn: key i" in a batch. */
struct key_where {
    const char *fn;
    size_t index; /* (size_t)-1: not in a batch */
};

static mpce_status bad(struct key_where at, const char *field, size_t offset, const char *why,
                       unsigned value)
{
    if (at.index == (size_t)-1)
        return mpce_error(MPCE_ERR_FORMAT, "%s: field '%s' at offset %zu: %s (found %u)", at.fn,
                          field, offset, why, value);
    return mpce_error(MPCE_ERR_FORMAT, "%s: key %zu: field '%s' at offset %zu: %s (found %u)",
                      at.fn, at.index, field, offset, why, value);
}

/* Every rule of format v1 is checked before anything is copied out, so a
 * malformed key is never seen by an evaluator. */
mpce_status mpce_dpf_key_v1_read(const char *fn, size_t index, const uint8_t *buf, size_t len,
                                 struct mpce_dpf_key_v1 *k)
{
    const struct key_where at = {fn, index};
    char where[64] = "";
    if (index != (size_t)-1 && (len < KEY_HEADER || memcmp(buf, KEY_MAGIC, 4) != 0 ||
                                len != mpce_dpf_key_size(buf[5])))
        snprintf(where, sizeof(where), " key %zu:", index);
    if (len < KEY_HEADER)
        return mpce_error(MPCE_ERR_FORMAT,
                          "%s:%s field 'length': %zu bytes is shorter than the %u-byte header "
                          "(a key is 72 + 16n + ceil(n/8) bytes)",
                          fn, where, len, KEY_HEADER);
    if (memcmp(buf, KEY_MAGIC, 4) != 0)
        return mpce_error(MPCE_ERR_FORMAT,
                          "%s:%s field 'magic' at offset 0: expected \"MDPF\" "
                          "(4d 44 50 46), found %02x %02x %02x %02x",
                          fn, where, buf[0], buf[1], buf[2], buf[3]);
    if (buf[4] != KEY_VERSION)
        return bad(at, "version", 4, "only format version 1 is understood", buf[4]);
    const unsigned bits = buf[5];
    if (bits < 1 || bits > MPCE_DPF_MAX_BITS)
        return bad(at, "n", 5, "domain bits must be 1 to 64", bits);
    const size_t need = mpce_dpf_key_size(bits);
    if (len != need)
        return mpce_error(MPCE_ERR_FORMAT,
                          "%s:%s field 'length': expected %zu bytes for n = %u, got %zu", fn,
                          where, need, bits, len);
    if (buf[6] > 1)
        return bad(at, "group", 6, "expected 0 (bytes) or 1 (u64)", buf[6]);
    if (buf[7] > 1)
        return bad(at, "party", 7, "expected 0 or 1", buf[7]);
    if (buf[OFF_SEED + TBIT_BYTE] & 1u)
        return bad(at, "seed", OFF_SEED + TBIT_BYTE, "the root seed's t-bit (bit 0) must be 0",
                   buf[OFF_SEED + TBIT_BYTE]);
    const size_t off_tr = OFF_CW + 16u * bits;
    const size_t ntr = tr_bytes(bits);
    if (bits % 8u != 0) {
        const unsigned last = buf[off_tr + ntr - 1];
        if (last >> (bits % 8u))
            return bad(at, "cw_tr", off_tr + ntr - 1, "bits past the last level must be 0",
                       last);
    }
    const size_t off_out = off_tr + ntr;
    if (buf[6] == MPCE_DPF_U64)
        for (size_t i = 8; i < 16; i++)
            if (buf[off_out + i])
                return bad(at, "cw_out", off_out + i,
                           "bytes 8..15 must be 0 for the u64 group", buf[off_out + i]);

    memset(k, 0, sizeof(*k));
    k->bits = (uint8_t)bits;
    k->group = buf[6];
    k->party = buf[7];
    memcpy(k->kl, buf + OFF_KL, 16);
    memcpy(k->kr, buf + OFF_KR, 16);
    memcpy(k->seed, buf + OFF_SEED, 16);
    for (unsigned i = 0; i < bits; i++)
        memcpy(k->cw_s[i], buf + OFF_CW + 16u * i, 16);
    memcpy(k->cw_tr, buf + off_tr, ntr);
    memcpy(k->cw_out, buf + off_out, 16);
    return MPCE_OK;
}

MPCE_API mpce_status mpce_dpf_key_parse(const uint8_t *buf, size_t len, mpce_dpf_key **out)
{
    static const char fn[] = "mpce_dpf_key_parse";
    if (!out)
        return mpce_error(MPCE_ERR_ARG, "%s: out is NULL", fn);
    if (!buf)
        return mpce_error(MPCE_ERR_ARG, "%s: buf is NULL", fn);
    mpce_dpf_key *key = calloc(1, sizeof(*key));
    if (!key)
        return mpce_error(MPCE_ERR_NOMEM, "%s: out of memory", fn);
    mpce_status st = mpce_dpf_key_v1_read(fn, (size_t)-1, buf, len, &key->k);
    if (st != MPCE_OK) {
        free(key);
        return st;
    }
    *out = key;
    return MPCE_OK;
}

MPCE_API void mpce_dpf_key_free(mpce_dpf_key *key)
{
    if (!key)
        return;
    /* The seed and correction words are one party's secret share. */
    mpce_spec_wipe(key, sizeof(*key));
    free(key);
}

MPCE_API unsigned mpce_dpf_key_bits(const mpce_dpf_key *key)
{
    return key ? key->k.bits : 0;
}

MPCE_API mpce_dpf_group mpce_dpf_key_group(const mpce_dpf_key *key)
{
    return key ? (mpce_dpf_group)key->k.group : MPCE_DPF_BYTES;
}

MPCE_API unsigned mpce_dpf_key_party(const mpce_dpf_key *key)
{
    return key ? key->k.party : 0;
}

mpce_dpf_key *mpce_dpf_key_wrap(const struct mpce_dpf_key_v1 *k)
{
    mpce_dpf_key *key = malloc(sizeof(*key));
    if (key)
        memcpy(&key->k, k, sizeof(*k));
    return key;
}

static int first16_sha256(const char *text, uint8_t out[16])
{
    uint8_t md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen < 16)
        return -1;
    memcpy(out, md, 16);
    return 0;
}

mpce_status mpce_dpf_default_keys(uint8_t kl[16], uint8_t kr[16])
{
    /* Silently different keys would make every key unusable by a peer, so a
     * broken libcrypto is an error, never a fallback. OpenSSL's allocations
     * fail through malloc, which leaves ENOMEM: a shortage, not a broken
     * installation. */
    errno = 0;
    if (first16_sha256("mpcengine dpf prg key L", kl) != 0 ||
        first16_sha256("mpcengine dpf prg key R", kr) != 0) {
        if (errno == ENOMEM)
            return mpce_error(MPCE_ERR_NOMEM, "out of memory deriving the default DPF PRG "
                              "keys (OpenSSL SHA-256)");
        return mpce_error(MPCE_ERR_BACKEND,
                          "OpenSSL SHA-256 failed deriving the default DPF PRG keys; check the "
                          "libcrypto installation or pass kl and kr explicitly");
    }
    return MPCE_OK;
}
