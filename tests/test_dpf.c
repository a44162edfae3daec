/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DPF suite, through the public API only: every dpf.txt record (keys byte
 * for byte, point and full-domain outputs), reconstruction on random keys,
 * the default PRG keys, the hostile-input key parser (one test per malformed
 * class) and the engine's argument checks, for every DPF implementation;
 * and an independent reference of SPEC.md section 4 (anchored to dpf.txt)
 * that every implementation must match on random parameters.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "engine/verify/kat.h"
#include "ref_dpf.h"
#include "testutil.h"

#define MAX_IMPLS 16
#define PATTERN 0xA5

static size_t dpf_impls(const char **names)
{
    return tu_impls(tu_engine(0), MPCE_PRIM_DPF, names, MAX_IMPLS);
}

static void sha256(const uint8_t *p, size_t len, uint8_t md[32])
{
    unsigned mdlen = 0;
    CU_ASSERT_FATAL(EVP_Digest(p, len, md, &mdlen, EVP_sha256(), NULL) == 1);
}

static int all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* y0 (+) y1 == (at alpha ? beta : 0) in the group. */
static int reconstructs(mpce_dpf_group g, const uint8_t *y0, const uint8_t *y1, int at_alpha,
                        const uint8_t beta[16])
{
    if (g == MPCE_DPF_U64)
        return le64(y0) + le64(y1) == (at_alpha ? le64(beta) : 0);
    for (unsigned i = 0; i < 16; i++)
        if ((uint8_t)(y0[i] ^ y1[i]) != (at_alpha ? beta[i] : 0))
            return 0;
    return 1;
}

/* A serialized copy of a key (malloc'd, *len bytes). */
static uint8_t *serialized(const mpce_dpf_key *key, size_t *len)
{
    size_t size = mpce_dpf_key_size(mpce_dpf_key_bits(key)), written = 0;
    uint8_t *buf = malloc(size);

    CU_ASSERT_FATAL(buf != NULL);
    CU_ASSERT_FATAL(mpce_dpf_key_serialize(key, buf, size, &written) == MPCE_OK);
    CU_ASSERT(written == size);
    *len = size;
    return buf;
}

/* ---- (1) known answers ---------------------------------------------------- */

static int kat_party(const char *impl, const struct mpce_kat_record *rec, mpce_dpf *ctx,
                     const mpce_dpf_key *key, unsigned party, unsigned bits, mpce_dpf_group g)
{
    const size_t osz = mpce_dpf_output_size(g);
    char name[32];
    uint8_t *ser, *out = NULL, md[32];
    uint64_t *xs = NULL;
    size_t ser_len, nx = 0;
    mpce_dpf_key *parsed = NULL;
    int ok = 1;

    /* Gen reproduces the key byte for byte, and the vector's key parses. */
    snprintf(name, sizeof(name), "key%u", party);
    ser = serialized(key, &ser_len);
    ok &= tu_kat_expect_hex(rec, name, ser, ser_len);
    ok &= mpce_dpf_key_parse(ser, ser_len, &parsed) == MPCE_OK;
    ok &= mpce_dpf_key_party(key) == party && mpce_dpf_key_bits(key) == bits &&
          mpce_dpf_key_group(key) == g;

    if (mpce_kat_u64_list(rec, "eval_x", &xs, &nx) != 0)
        ok = 0;
    out = malloc(nx * osz + 1);
    CU_ASSERT_FATAL(out != NULL);
    snprintf(name, sizeof(name), "eval%u", party);
    ok &= mpce_dpf_eval(ctx, impl, key, xs, nx, out) == MPCE_OK;
    ok &= tu_kat_expect_hex(rec, name, out, nx * osz);
    /* The parsed copy evaluates identically. */
    if (parsed) {
        ok &= mpce_dpf_eval(ctx, impl, parsed, xs, nx, out) == MPCE_OK;
        ok &= tu_kat_expect_hex(rec, name, out, nx * osz);
    }
    free(out);

    if (bits <= 24) {
        size_t len = ((size_t)1 << bits) * osz;
        out = malloc(len);
        CU_ASSERT_FATAL(out != NULL);
        ok &= mpce_dpf_evalall(ctx, impl, key, out, len) == MPCE_OK;
        sha256(out, len, md);
        snprintf(name, sizeof(name), "evalall%u_sha256", party);
        ok &= tu_kat_expect_hex(rec, name, md, 32);
        free(out);
    }
    mpce_dpf_key_free(parsed);
    free(ser);
    free(xs);
    return ok;
}

static int kat_record(const char *impl, const struct mpce_kat_record *rec)
{
    uint8_t *kl = NULL, *kr = NULL, *s0 = NULL, *s1 = NULL, beta[16] = {0};
    size_t len;
    uint64_t bits = 0, alpha = 0;
    mpce_dpf_group g;
    mpce_dpf *ctx = NULL;
    mpce_dpf_key *k0 = NULL, *k1 = NULL;
    const char *group = mpce_kat_get(rec, "group");
    int ok = 0;

    if (!group || mpce_kat_u64(rec, "n", &bits) || mpce_kat_u64(rec, "alpha", &alpha) ||
        mpce_kat_hex(rec, "kL", &kl, &len) || len != 16 || mpce_kat_hex(rec, "kR", &kr, &len) ||
        len != 16 || mpce_kat_hex(rec, "seed0", &s0, &len) || len != 16 ||
        mpce_kat_hex(rec, "seed1", &s1, &len) || len != 16)
        goto done;
    g = strcmp(group, "u64") == 0 ? MPCE_DPF_U64 : MPCE_DPF_BYTES;
    if (g == MPCE_DPF_U64) {
        uint64_t b;
        if (mpce_kat_u64(rec, "beta_u64", &b))
            goto done;
        for (unsigned i = 0; i < 8; i++)
            beta[i] = (uint8_t)(b >> (8 * i));
    } else {
        uint8_t *b = NULL;
        if (mpce_kat_hex(rec, "beta", &b, &len) || len != 16) {
            free(b);
            goto done;
        }
        memcpy(beta, b, 16); /* the engine forces the t-bit to 0 */
        free(b);
    }
    if (mpce_dpf_new(tu_engine(0), (unsigned)bits, g, kl, kr, &ctx) != MPCE_OK ||
        mpce_dpf_gen(ctx, impl, alpha, beta, s0, s1, &k0, &k1) != MPCE_OK)
        goto done;
    ok = kat_party(impl, rec, ctx, k0, 0, (unsigned)bits, g);
    ok &= kat_party(impl, rec, ctx, k1, 1, (unsigned)bits, g);
done:
    if (!ok)
        fprintf(stderr, "  %s: dpf.txt line %u failed: %s\n", impl, rec->line, mpce_last_error());
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(ctx);
    free(kl);
    free(kr);
    free(s0);
    free(s1);
    return ok;
}

static void test_kat(void)
{
    const char *names[MAX_IMPLS];
    size_t nimpl = dpf_impls(names);
    tu_kat_run("dpf.txt", 8, names, nimpl, kat_record);
}

/* ---- (2) reconstruction with random seeds ---------------------------------- */

struct pair {
    mpce_dpf *ctx;
    mpce_dpf_key *k[2];
    uint64_t alpha;
    uint8_t beta[16];
};

static void make_pair(struct pair *p, const char *impl, unsigned bits, mpce_dpf_group g,
                      uint64_t seed)
{
    uint64_t st = seed;
    uint8_t kl[16], kr[16];

    memset(p->beta, 0, 16);
    tu_splitmix_bytes(seed + 1, kl, 16);
    tu_splitmix_bytes(seed + 2, kr, 16);
    tu_splitmix_bytes(seed + 3, p->beta, g == MPCE_DPF_U64 ? 8 : 16);
    if (g == MPCE_DPF_BYTES)
        p->beta[12] &= 0xfe;
    p->alpha = tu_splitmix64(&st);
    if (bits < 64)
        p->alpha &= ((uint64_t)1 << bits) - 1;
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), bits, g, kl, kr, &p->ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_gen(p->ctx, impl, p->alpha, p->beta, NULL, NULL, &p->k[0],
                                 &p->k[1]) == MPCE_OK);
}

static void free_pair(struct pair *p)
{
    mpce_dpf_key_free(p->k[0]);
    mpce_dpf_key_free(p->k[1]);
    mpce_dpf_free(p->ctx);
}

static void test_reconstruct_small(void)
{
    const char *names[MAX_IMPLS];
    size_t nimpl = dpf_impls(names);

    for (size_t i = 0; i < nimpl; i++) {
        for (unsigned bits = 1; bits <= 10; bits++) {
            for (int gi = 0; gi < 2; gi++) {
                mpce_dpf_group g = gi ? MPCE_DPF_U64 : MPCE_DPF_BYTES;
                const size_t osz = mpce_dpf_output_size(g), n = (size_t)1 << bits;
                uint64_t *xs = malloc(n * sizeof(*xs));
                uint8_t *ev[2], *all[2], *ek = malloc(n * osz);
                const mpce_dpf_key **keys = malloc(n * sizeof(*keys));
                struct pair p;

                CU_ASSERT_FATAL(xs && ek && keys);
                make_pair(&p, names[i], bits, g, 100 * bits + (uint64_t)gi);
                for (size_t j = 0; j < n; j++)
                    xs[j] = (j * 5 + 3) % n; /* every point, out of order */
                for (int b = 0; b < 2; b++) {
                    ev[b] = malloc(n * osz);
                    all[b] = tu_alloc_misaligned(n * osz, 3);
                    CU_ASSERT_FATAL(ev[b] && all[b]);
                    CU_ASSERT_EQUAL(mpce_dpf_eval(p.ctx, names[i], p.k[b], xs, n, ev[b]),
                                    MPCE_OK);
                    CU_ASSERT_EQUAL(mpce_dpf_evalall(p.ctx, names[i], p.k[b], all[b], n * osz),
                                    MPCE_OK);
                }
                for (size_t j = 0; j < n; j++) {
                    CU_ASSERT(reconstructs(g, ev[0] + j * osz, ev[1] + j * osz,
                                           xs[j] == p.alpha, p.beta));
                    CU_ASSERT(reconstructs(g, all[0] + j * osz, all[1] + j * osz,
                                           j == p.alpha, p.beta));
                    CU_ASSERT(memcmp(all[0] + xs[j] * osz, ev[0] + j * osz, osz) == 0);
                }
                /* Many keys, each at its own point: alternate the parties. */
                for (size_t j = 0; j < n; j++)
                    keys[j] = p.k[j & 1];
                CU_ASSERT_EQUAL(mpce_dpf_eval_keys(p.ctx, names[i], keys, xs, n, ek), MPCE_OK);
                for (size_t j = 0; j < n; j++)
                    CU_ASSERT(memcmp(ek + j * osz, ev[j & 1] + j * osz, osz) == 0);
                for (int b = 0; b < 2; b++) {
                    free(ev[b]);
                    tu_free_misaligned(all[b]);
                }
                free(xs);
                free(ek);
                free(keys);
                free_pair(&p);
            }
        }
    }
}

/* Domains past one subtree of a full-domain walk, and the 64-bit domain. */
static void test_reconstruct_large(void)
{
    static const unsigned bit_list[] = {13, 17, 40, 63, 64};
    const char *names[MAX_IMPLS];
    size_t nimpl = dpf_impls(names);
    enum { NP = 700 };

    for (size_t i = 0; i < nimpl; i++) {
        for (size_t bi = 0; bi < sizeof(bit_list) / sizeof(bit_list[0]); bi++) {
            for (int gi = 0; gi < 2; gi++) {
                unsigned bits = bit_list[bi];
                mpce_dpf_group g = gi ? MPCE_DPF_U64 : MPCE_DPF_BYTES;
                const size_t osz = mpce_dpf_output_size(g);
                const uint64_t mask = bits < 64 ? ((uint64_t)1 << bits) - 1 : ~(uint64_t)0;
                uint64_t xs[NP], st = 77 + bits;
                uint8_t *ev[2];
                struct pair p;

                make_pair(&p, names[i], bits, g, 5000 + 10 * bits + (uint64_t)gi);
                for (size_t j = 0; j < NP; j++)
                    xs[j] = tu_splitmix64(&st) & mask;
                xs[0] = p.alpha;
                xs[1] = p.alpha ^ 1;
                xs[2] = p.alpha ^ ((uint64_t)1 << (bits - 1));
                xs[NP - 1] = p.alpha;
                for (int b = 0; b < 2; b++) {
                    ev[b] = malloc(NP * osz);
                    CU_ASSERT_FATAL(ev[b] != NULL);
                    CU_ASSERT_EQUAL(mpce_dpf_eval(p.ctx, names[i], p.k[b], xs, NP, ev[b]),
                                    MPCE_OK);
                }
                for (size_t j = 0; j < NP; j++)
                    CU_ASSERT(reconstructs(g, ev[0] + j * osz, ev[1] + j * osz,
                                           xs[j] == p.alpha, p.beta));
                if (bits <= 17) {
                    size_t n = (size_t)1 << bits;
                    uint8_t *all[2];
                    for (int b = 0; b < 2; b++) {
                        all[b] = malloc(n * osz);
                        CU_ASSERT_FATAL(all[b] != NULL);
                        CU_ASSERT_EQUAL(
                            mpce_dpf_evalall(p.ctx, names[i], p.k[b], all[b], n * osz),
                            MPCE_OK);
                    }
                    for (size_t x = 0; x < n; x++)
                        CU_ASSERT(reconstructs(g, all[0] + x * osz, all[1] + x * osz,
                                               x == p.alpha, p.beta));
                    for (size_t j = 0; j < NP; j++)
                        CU_ASSERT(memcmp(all[1] + xs[j] * osz, ev[1] + j * osz, osz) == 0);
                    free(all[0]);
                    free(all[1]);
                }
                free(ev[0]);
                free(ev[1]);
                free_pair(&p);
            }
        }
    }
}

/* ---- (3) default PRG keys ---------------------------------------------------- */

static void test_default_keys(void)
{
    static const uint8_t want_kl[16] = {0xe2, 0x21, 0x56, 0xd9, 0x76, 0xd3, 0x6a, 0xf2,
                                        0x1e, 0x4c, 0x6b, 0x2d, 0xf3, 0x9c, 0x7d, 0xda};
    static const uint8_t want_kr[16] = {0x20, 0xc1, 0x98, 0x16, 0x71, 0xb4, 0x1b, 0x98,
                                        0x81, 0x4f, 0x3a, 0xd5, 0xaf, 0x07, 0x12, 0x63};
    uint8_t beta[16] = {1}, s0[16] = {2}, s1[16] = {3};
    mpce_dpf *ctx, *same;
    mpce_dpf_key *k0, *k1;
    uint8_t *ser;
    size_t len;

    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 12, MPCE_DPF_BYTES, NULL, NULL, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_gen(ctx, NULL, 7, beta, s0, s1, &k0, &k1) == MPCE_OK);
    ser = serialized(k0, &len);
    CU_ASSERT(memcmp(ser + 8, want_kl, 16) == 0);
    CU_ASSERT(memcmp(ser + 24, want_kr, 16) == 0);
    /* Naming the default keys explicitly gives a matching context. */
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 12, MPCE_DPF_BYTES, want_kl, want_kr, &same) ==
                    MPCE_OK);
    uint8_t y[16];
    uint64_t x = 7;
    CU_ASSERT_EQUAL(mpce_dpf_eval(same, NULL, k1, &x, 1, y), MPCE_OK);
    free(ser);
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(ctx);
    mpce_dpf_free(same);
}

/* ---- (4) serialization and the hostile-input parser ------------------------- */

/* A valid serialized key: n = 13 (stray cw_tr bits possible), u64 group. */
static uint8_t *valid_key(unsigned bits, mpce_dpf_group g, size_t *len)
{
    uint8_t beta[16] = {9}, s0[16] = {4}, s1[16] = {5};
    mpce_dpf *ctx;
    mpce_dpf_key *k0, *k1;
    uint8_t *ser;

    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), bits, g, NULL, NULL, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_gen(ctx, NULL, 1, beta, s0, s1, &k0, &k1) == MPCE_OK);
    ser = serialized(k1, len);
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(ctx);
    return ser;
}

static void test_roundtrip(void)
{
    for (unsigned bits = 1; bits <= 64; bits++) {
        for (int gi = 0; gi < 2; gi++) {
            size_t len, len2;
            uint8_t *ser = valid_key(bits, gi ? MPCE_DPF_U64 : MPCE_DPF_BYTES, &len);
            mpce_dpf_key *k = NULL;

            CU_ASSERT_EQUAL(len, 72 + 16 * (size_t)bits + (bits + 7) / 8);
            CU_ASSERT_EQUAL_FATAL(mpce_dpf_key_parse(ser, len, &k), MPCE_OK);
            CU_ASSERT_EQUAL(mpce_dpf_key_bits(k), bits);
            CU_ASSERT_EQUAL(mpce_dpf_key_group(k), gi ? MPCE_DPF_U64 : MPCE_DPF_BYTES);
            CU_ASSERT_EQUAL(mpce_dpf_key_party(k), 1u);
            uint8_t *again = serialized(k, &len2);
            CU_ASSERT(len2 == len && memcmp(again, ser, len) == 0);
            free(again);
            mpce_dpf_key_free(k);
            free(ser);
        }
    }
    CU_ASSERT_EQUAL(mpce_dpf_key_size(20), 395u);
    CU_ASSERT_EQUAL(mpce_dpf_output_size(MPCE_DPF_BYTES), 16u);
    CU_ASSERT_EQUAL(mpce_dpf_output_size(MPCE_DPF_U64), 8u);
    CU_ASSERT_EQUAL(mpce_dpf_output_size((mpce_dpf_group)2), 0u);
}

static void test_serialize_short(void)
{
    size_t len, written = 99;
    uint8_t *ser = valid_key(20, MPCE_DPF_BYTES, &len);
    mpce_dpf_key *k;
    uint8_t buf[512];

    CU_ASSERT_FATAL(mpce_dpf_key_parse(ser, len, &k) == MPCE_OK);
    memset(buf, PATTERN, sizeof(buf));
    TU_ASSERT_ERROR(mpce_dpf_key_serialize(k, buf, len - 1, &written), MPCE_ERR_ARG, "buf_len");
    CU_ASSERT(all_bytes(buf, sizeof(buf), PATTERN));
    CU_ASSERT_EQUAL(written, 99u);
    CU_ASSERT_EQUAL(mpce_dpf_key_serialize(k, buf, len, NULL), MPCE_OK);
    CU_ASSERT(all_bytes(buf + len, sizeof(buf) - len, PATTERN));
    TU_ASSERT_ERROR(mpce_dpf_key_serialize(k, NULL, len, NULL), MPCE_ERR_ARG, "buf");
    TU_ASSERT_ERROR(mpce_dpf_key_serialize(NULL, buf, len, NULL), MPCE_ERR_ARG, "key");
    mpce_dpf_key_free(k);
    free(ser);
}

/* Parse `buf` (len bytes) and expect MPCE_ERR_FORMAT naming `field`. */
static void expect_malformed(const uint8_t *buf, size_t len, const char *field)
{
    mpce_dpf_key *k = (mpce_dpf_key *)&k; /* a sentinel that must survive */
    char needle[32];

    snprintf(needle, sizeof(needle), "'%s'", field);
    CU_ASSERT_EQUAL(mpce_dpf_key_parse(buf, len, &k), MPCE_ERR_FORMAT);
    if (!tu_error_mentions(needle)) {
        CU_FAIL("parser error does not name the field");
        fprintf(stderr, "  wanted %s, detail was: %s\n", needle, mpce_last_error());
    }
    CU_ASSERT(k == (mpce_dpf_key *)&k);
}

/* A valid key of `bits`/`g` with byte `off` set to `value` (or OR-ed). */
static void malformed_byte(unsigned bits, mpce_dpf_group g, size_t off, uint8_t value, int or_in,
                           const char *field)
{
    size_t len;
    uint8_t *ser = valid_key(bits, g, &len);

    CU_ASSERT_FATAL(off < len);
    ser[off] = or_in ? (uint8_t)(ser[off] | value) : value;
    expect_malformed(ser, len, field);
    free(ser);
}

static void test_parse_length_short(void)
{
    size_t len;
    uint8_t *ser = valid_key(13, MPCE_DPF_U64, &len);
    expect_malformed(ser, len - 1, "length");
    expect_malformed(ser, 5, "length");
    expect_malformed(ser, 0, "length");
    free(ser);
}

static void test_parse_length_long(void)
{
    size_t len;
    uint8_t *ser = valid_key(13, MPCE_DPF_U64, &len);
    uint8_t *big = calloc(len + 1, 1);

    CU_ASSERT_FATAL(big != NULL);
    memcpy(big, ser, len);
    expect_malformed(big, len + 1, "length");
    free(big);
    free(ser);
}

static void test_parse_magic(void)
{
    malformed_byte(13, MPCE_DPF_U64, 0, 'm', 0, "magic");
    malformed_byte(13, MPCE_DPF_U64, 3, 'G', 0, "magic");
}

static void test_parse_version(void)
{
    malformed_byte(13, MPCE_DPF_U64, 4, 2, 0, "version");
    malformed_byte(13, MPCE_DPF_U64, 4, 0, 0, "version");
}

static void test_parse_bits(void)
{
    malformed_byte(13, MPCE_DPF_U64, 5, 0, 0, "n");
    malformed_byte(13, MPCE_DPF_U64, 5, 65, 0, "n");
}

static void test_parse_group(void)
{
    malformed_byte(13, MPCE_DPF_U64, 6, 2, 0, "group");
}

static void test_parse_party(void)
{
    malformed_byte(13, MPCE_DPF_U64, 7, 2, 0, "party");
}

static void test_parse_seed_tbit(void)
{
    malformed_byte(13, MPCE_DPF_BYTES, 40 + 12, 1, 1, "seed");
}

static void test_parse_cw_tr(void)
{
    /* n = 13: byte 1 of cw_tr uses bits 0..4; bit 5 is stray. */
    malformed_byte(13, MPCE_DPF_U64, 56 + 16 * 13 + 1, 0x20, 1, "cw_tr");
    malformed_byte(1, MPCE_DPF_BYTES, 56 + 16, 0x02, 1, "cw_tr");
}

static void test_parse_cw_out(void)
{
    size_t off = 56 + 16 * 13 + 2; /* the output CW of an n = 13 key */
    malformed_byte(13, MPCE_DPF_U64, off + 8, 1, 0, "cw_out");
    malformed_byte(13, MPCE_DPF_U64, off + 15, 0x80, 0, "cw_out");
}

static void test_parse_args(void)
{
    size_t len;
    uint8_t *ser = valid_key(8, MPCE_DPF_BYTES, &len);
    mpce_dpf_key *k;

    TU_ASSERT_ERROR(mpce_dpf_key_parse(NULL, len, &k), MPCE_ERR_ARG, "buf");
    TU_ASSERT_ERROR(mpce_dpf_key_parse(ser, len, NULL), MPCE_ERR_ARG, "out");
    free(ser);
}

/* ---- (5) the engine's key and size checks ----------------------------------- */

static void test_key_mismatch(void)
{
    uint8_t beta[16] = {1}, other_kl[16] = {1}, other_kr[16] = {2}, out[16];
    uint64_t x = 1;
    mpce_dpf *ctx, *wrong_bits, *wrong_group, *wrong_keys;
    mpce_dpf_key *k0, *k1;

    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 8, MPCE_DPF_BYTES, NULL, NULL, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_gen(ctx, NULL, 5, beta, NULL, NULL, &k0, &k1) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 9, MPCE_DPF_BYTES, NULL, NULL, &wrong_bits) ==
                    MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 8, MPCE_DPF_U64, NULL, NULL, &wrong_group) ==
                    MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 8, MPCE_DPF_BYTES, other_kl, other_kr,
                                 &wrong_keys) == MPCE_OK);
    memset(out, PATTERN, sizeof(out));
    TU_ASSERT_ERROR(mpce_dpf_eval(wrong_bits, NULL, k0, &x, 1, out), MPCE_ERR_ARG,
                    "domain bits");
    TU_ASSERT_ERROR(mpce_dpf_eval(wrong_group, NULL, k0, &x, 1, out), MPCE_ERR_ARG, "group");
    TU_ASSERT_ERROR(mpce_dpf_eval(wrong_keys, NULL, k0, &x, 1, out), MPCE_ERR_ARG, "PRG keys");
    {
        const mpce_dpf_key *keys[2] = {k0, k1};
        uint64_t xs[2] = {1, 2};
        TU_ASSERT_ERROR(mpce_dpf_eval_keys(wrong_keys, NULL, keys, xs, 2, out), MPCE_ERR_ARG,
                        "PRG keys");
        TU_ASSERT_ERROR(mpce_dpf_evalall(wrong_group, NULL, k1, out, sizeof(out)), MPCE_ERR_ARG,
                        "group");
    }
    CU_ASSERT(all_bytes(out, sizeof(out), PATTERN));
    /* A context made for the key accepts it. */
    {
        mpce_dpf *fit;
        CU_ASSERT_FATAL(mpce_dpf_new_for_key(tu_engine(0), k1, &fit) == MPCE_OK);
        CU_ASSERT_EQUAL(mpce_dpf_eval(fit, NULL, k1, &x, 1, out), MPCE_OK);
        mpce_dpf_free(fit);
    }
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(ctx);
    mpce_dpf_free(wrong_bits);
    mpce_dpf_free(wrong_group);
    mpce_dpf_free(wrong_keys);
}

static void test_evalall_args(void)
{
    uint8_t beta[16] = {1}, buf[16 * 256 + 16];
    mpce_dpf *big, *ctx;
    mpce_dpf_key *k0, *k1, *b0, *b1;

    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 33, MPCE_DPF_U64, NULL, NULL, &big) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_gen(big, NULL, 5, beta, NULL, NULL, &b0, &b1) == MPCE_OK);
    TU_ASSERT_ERROR(mpce_dpf_evalall(big, NULL, b0, buf, sizeof(buf)), MPCE_ERR_ARG, "bits");
    /* resolve refuses the same way, rather than name an implementation for a
     * call that cannot be made. */
    const char *name = NULL;
    TU_ASSERT_ERROR(mpce_dpf_resolve(big, NULL, "dpf.evalall", 0, &name), MPCE_ERR_ARG,
                    "bits <= 32");
    CU_ASSERT_PTR_NULL(name);
    CU_ASSERT_EQUAL(mpce_dpf_resolve(big, NULL, "dpf.eval", 100, &name), MPCE_OK);
    CU_ASSERT(name != NULL && strncmp(name, "dpf-", 4) == 0);
    TU_ASSERT_ERROR(mpce_dpf_resolve(big, NULL, "ntt.forward", 1, &name), MPCE_ERR_ARG,
                    "not a dpf operation: use one of dpf.gen, dpf.eval, dpf.eval_keys, "
                    "dpf.evalall");

    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), 8, MPCE_DPF_BYTES, NULL, NULL, &ctx) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_dpf_gen(ctx, NULL, 5, beta, NULL, NULL, &k0, &k1) == MPCE_OK);
    memset(buf, PATTERN, sizeof(buf));
    TU_ASSERT_ERROR(mpce_dpf_evalall(ctx, NULL, k0, buf, 16 * 256 - 1), MPCE_ERR_ARG, "out_len");
    CU_ASSERT(all_bytes(buf, sizeof(buf), PATTERN));
    CU_ASSERT_EQUAL(mpce_dpf_evalall(ctx, NULL, k0, buf, 16 * 256), MPCE_OK);
    CU_ASSERT(all_bytes(buf + 16 * 256, 16, PATTERN));
    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_key_free(b0);
    mpce_dpf_key_free(b1);
    mpce_dpf_free(ctx);
    mpce_dpf_free(big);
}

/* ---- (6) independent reference ------------------------------------------------ */

/* The reference (ref_prg, ref_gen, ref_eval, ref_serialize): tests/ref_dpf.h. */

/* The reference reproduces the published vectors, so it is anchored to the
 * spec and not merely to itself. */
static void test_reference_vectors(void)
{
    struct mpce_kat_set set;
    CU_ASSERT_FATAL(mpce_kat_load("dpf.txt", &set) == 0);
    for (size_t r = 0; r < set.count; r++) {
        const struct mpce_kat_record *rec = &set.records[r];
        uint8_t *kl = NULL, *kr = NULL, *s0 = NULL, *s1 = NULL, *bh = NULL, beta[16] = {0};
        uint64_t bits = 0, alpha = 0, bu = 0, *xs = NULL;
        size_t len = 0, nx = 0;
        const char *group = mpce_kat_get(rec, "group");
        CU_ASSERT_FATAL(group != NULL);
        const unsigned g = strcmp(group, "u64") == 0 ? MPCE_DPF_U64 : MPCE_DPF_BYTES;
        CU_ASSERT_FATAL(mpce_kat_u64(rec, "n", &bits) == 0 && bits >= 1 && bits <= 64);
        CU_ASSERT_FATAL(mpce_kat_u64(rec, "alpha", &alpha) == 0);
        CU_ASSERT_FATAL(mpce_kat_hex(rec, "kL", &kl, &len) == 0 && len == 16);
        CU_ASSERT_FATAL(mpce_kat_hex(rec, "kR", &kr, &len) == 0 && len == 16);
        CU_ASSERT_FATAL(mpce_kat_hex(rec, "seed0", &s0, &len) == 0 && len == 16);
        CU_ASSERT_FATAL(mpce_kat_hex(rec, "seed1", &s1, &len) == 0 && len == 16);
        CU_ASSERT_FATAL(mpce_kat_u64_list(rec, "eval_x", &xs, &nx) == 0);
        if (g == MPCE_DPF_U64) {
            CU_ASSERT_FATAL(mpce_kat_u64(rec, "beta_u64", &bu) == 0);
            ref_put64(beta, bu);
        } else {
            CU_ASSERT_FATAL(mpce_kat_hex(rec, "beta", &bh, &len) == 0 && len == 16);
            memcpy(beta, bh, 16);
        }

        struct ref_prg prg;
        struct ref_key k[2];
        uint8_t ser[REF_MAX_KEY], cw_s[16 * 64];
        const size_t osz = mpce_dpf_output_size((mpce_dpf_group)g);
        uint8_t *y = malloc(nx * osz + 1);
        int ok = 1;
        CU_ASSERT_FATAL(y != NULL);
        CU_ASSERT_FATAL(ref_prg_init(&prg, kl, kr) == 0);
        ref_gen(&prg, kl, kr, (unsigned)bits, g, alpha, beta, s0, s1, k);
        for (unsigned i = 0; i < bits; i++)
            memcpy(cw_s + 16 * i, k[0].cw_s[i], 16);
        ok &= tu_kat_expect_hex(rec, "cw_s", cw_s, 16 * bits);
        ok &= tu_kat_expect_hex(rec, "cw_out", k[0].cw_out, 16);
        for (unsigned b = 0; b < 2; b++) {
            char name[16];
            size_t klen = ref_serialize(&k[b], ser);
            CU_ASSERT_EQUAL(klen, mpce_dpf_key_size((unsigned)bits));
            snprintf(name, sizeof(name), "key%u", b);
            ok &= tu_kat_expect_hex(rec, name, ser, klen);
            for (size_t j = 0; j < nx; j++)
                ref_eval(&prg, &k[b], xs[j], y + j * osz);
            snprintf(name, sizeof(name), "eval%u", b);
            ok &= tu_kat_expect_hex(rec, name, y, nx * osz);
        }
        if (!ok)
            fprintf(stderr, "  the test's own reference disagrees with dpf.txt line %u\n",
                    rec->line);
        CU_ASSERT(ok);
        ref_prg_free(&prg);
        free(y);
        free(kl);
        free(kr);
        free(s0);
        free(s1);
        free(bh);
        free(xs);
    }
    mpce_kat_free(&set);
}

/* Random Gen inputs: PRG keys, seeds (t-bits left random: Gen must clear them),
 * beta (bytes: random t-bit, Gen clears it; u64: 8 bytes then zeros), alpha. */
struct ref_params {
    uint8_t kl[16], kr[16], s0[16], s1[16], beta[16];
    uint64_t alpha;
};

static void ref_draw(struct ref_params *r, unsigned n, unsigned group, uint64_t *st)
{
    tu_splitmix_bytes(tu_splitmix64(st), r->kl, 16);
    tu_splitmix_bytes(tu_splitmix64(st), r->kr, 16);
    tu_splitmix_bytes(tu_splitmix64(st), r->s0, 16);
    tu_splitmix_bytes(tu_splitmix64(st), r->s1, 16);
    tu_splitmix_bytes(tu_splitmix64(st), r->beta, 16);
    if (group == MPCE_DPF_U64)
        memset(r->beta + 8, 0, 8);
    r->alpha = tu_splitmix64(st);
    if (n < 64)
        r->alpha &= ((uint64_t)1 << n) - 1;
}

/* Mismatch messages beyond the first few add nothing. */
static int ref_say(void)
{
    static unsigned said;
    return said++ < 20;
}

/* Engine keys for r, checked byte for byte against the reference's. */
static int ref_gen_both(mpce_dpf *ctx, const char *impl, const struct ref_prg *prg, unsigned n,
                        unsigned group, const struct ref_params *r, const uint8_t *kl,
                        const uint8_t *kr, struct ref_key rk[2], mpce_dpf_key *ek[2])
{
    int ok = 1;
    ref_gen(prg, kl, kr, n, group, r->alpha, r->beta, r->s0, r->s1, rk);
    CU_ASSERT_FATAL(mpce_dpf_gen(ctx, impl, r->alpha, r->beta, r->s0, r->s1, &ek[0], &ek[1]) ==
                    MPCE_OK);
    for (int b = 0; b < 2; b++) {
        uint8_t want[REF_MAX_KEY];
        size_t len = 0, wlen = ref_serialize(&rk[b], want);
        uint8_t *got = serialized(ek[b], &len);
        if (len != wlen || memcmp(got, want, wlen) != 0) {
            size_t at = 0;
            while (at < len && at < wlen && got[at] == want[at])
                at++;
            if (ref_say())
                fprintf(stderr,
                        "  %s: n = %u, group %u, alpha = %#llx: key%d differs at byte %zu\n",
                        impl, n, group, (unsigned long long)r->alpha, b, at);
            ok = 0;
        }
        free(got);
    }
    return ok;
}

static int ref_compare(const char *impl, const char *what, unsigned n, uint64_t x,
                       const uint8_t *got, const uint8_t *want, size_t osz)
{
    if (memcmp(got, want, osz) == 0)
        return 1;
    if (ref_say())
        fprintf(stderr, "  %s %s: n = %u, x = %#llx differs from the reference\n", impl, what,
                n, (unsigned long long)x);
    return 0;
}

enum { REF_POINTS = 300, REF_KEYS = 37 }; /* past one point batch of a walk */

/* One (n, group) draw through one implementation. */
static void ref_case(const char *impl, unsigned n, unsigned group, uint64_t *st)
{
    const size_t osz = mpce_dpf_output_size((mpce_dpf_group)group);
    const uint64_t mask = n < 64 ? ((uint64_t)1 << n) - 1 : ~(uint64_t)0;
    struct ref_params r;
    struct ref_prg prg;
    struct ref_key rk[2];
    mpce_dpf *ctx = NULL;
    mpce_dpf_key *ek[2] = {NULL, NULL};
    uint64_t xs[REF_POINTS];
    uint8_t got[REF_POINTS * 16], want[16];
    int ok = 1;

    ref_draw(&r, n, group, st);
    CU_ASSERT_FATAL(ref_prg_init(&prg, r.kl, r.kr) == 0);
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), n, (mpce_dpf_group)group, r.kl, r.kr, &ctx) ==
                    MPCE_OK);
    ok &= ref_gen_both(ctx, impl, &prg, n, group, &r, r.kl, r.kr, rk, ek);

    /* Points: alpha and its neighbours in the first and last level, the ends
     * of the domain, the rest random. */
    for (size_t j = 0; j < REF_POINTS; j++)
        xs[j] = tu_splitmix64(st) & mask;
    xs[0] = r.alpha;
    xs[1] = r.alpha ^ 1;
    xs[2] = r.alpha ^ ((uint64_t)1 << (n - 1));
    xs[3] = 0;
    xs[4] = mask;
    xs[REF_POINTS - 1] = r.alpha;
    for (unsigned b = 0; b < 2; b++) {
        CU_ASSERT_EQUAL(mpce_dpf_eval(ctx, impl, ek[b], xs, REF_POINTS, got), MPCE_OK);
        for (size_t j = 0; j < REF_POINTS; j++) {
            ref_eval(&prg, &rk[b], xs[j], want);
            ok &= ref_compare(impl, "eval", n, xs[j], got + j * osz, want, osz);
        }
    }
    if (n <= 13) {
        const size_t len = ((size_t)1 << n) * osz;
        uint8_t *all = malloc(len);
        CU_ASSERT_FATAL(all != NULL);
        for (unsigned b = 0; b < 2; b++) {
            CU_ASSERT_EQUAL(mpce_dpf_evalall(ctx, impl, ek[b], all, len), MPCE_OK);
            for (uint64_t x = 0; x <= mask; x++) {
                ref_eval(&prg, &rk[b], x, want);
                ok &= ref_compare(impl, "evalall", n, x, all + x * osz, want, osz);
            }
        }
        free(all);
    }

    /* eval_keys: REF_KEYS different keys of this context, each at its own
     * point; the odd ones parsed from the reference's own serialization. */
    {
        struct ref_key bk[REF_KEYS][2];
        mpce_dpf_key *gen[REF_KEYS][2], *parsed[REF_KEYS];
        const mpce_dpf_key *keys[REF_KEYS];
        unsigned party[REF_KEYS];
        uint64_t px[REF_KEYS];

        for (size_t j = 0; j < REF_KEYS; j++) {
            struct ref_params rj;
            uint8_t ser[REF_MAX_KEY];
            ref_draw(&rj, n, group, st);
            ok &= ref_gen_both(ctx, impl, &prg, n, group, &rj, r.kl, r.kr, bk[j], gen[j]);
            party[j] = (unsigned)(tu_splitmix64(st) & 1);
            px[j] = j % 3 == 0 ? rj.alpha : tu_splitmix64(st) & mask;
            parsed[j] = NULL;
            if (j & 1) {
                size_t len = ref_serialize(&bk[j][party[j]], ser);
                CU_ASSERT_FATAL(mpce_dpf_key_parse(ser, len, &parsed[j]) == MPCE_OK);
                keys[j] = parsed[j];
            } else {
                keys[j] = gen[j][party[j]];
            }
        }
        CU_ASSERT_EQUAL(mpce_dpf_eval_keys(ctx, impl, keys, px, REF_KEYS, got), MPCE_OK);
        for (size_t j = 0; j < REF_KEYS; j++) {
            ref_eval(&prg, &bk[j][party[j]], px[j], want);
            ok &= ref_compare(impl, "eval_keys", n, px[j], got + j * osz, want, osz);
            mpce_dpf_key_free(gen[j][0]);
            mpce_dpf_key_free(gen[j][1]);
            mpce_dpf_key_free(parsed[j]);
        }
    }
    CU_ASSERT(ok);
    mpce_dpf_key_free(ek[0]);
    mpce_dpf_key_free(ek[1]);
    mpce_dpf_free(ctx);
    ref_prg_free(&prg);
}

static void test_reference_random(void)
{
    /* Level counts around byte and word boundaries, the evalall subtree
     * size (12) and one past it, and the full 64-bit domain. */
    static const unsigned bit_list[] = {1, 2, 3, 7, 8, 9, 12, 13, 16, 31, 32, 33, 63, 64};
    const char *names[MAX_IMPLS];
    size_t nimpl = dpf_impls(names);
    uint64_t st = 0xd0f5eed;

    CU_ASSERT(nimpl >= 1);
    for (size_t i = 0; i < nimpl; i++)
        for (size_t bi = 0; bi < sizeof(bit_list) / sizeof(bit_list[0]); bi++)
            for (unsigned g = 0; g < 2; g++)
                for (int trial = 0; trial < 2; trial++)
                    ref_case(names[i], bit_list[bi], g, &st);
}

static const struct tu_test tests[] = {
    {"known answers (every record, every implementation)", test_kat},
    {"reconstruction, n = 1..10, eval/eval_keys/evalall", test_reconstruct_small},
    {"reconstruction, large domains and n = 64", test_reconstruct_large},
    {"default PRG keys", test_default_keys},
    {"serialize/parse round trip", test_roundtrip},
    {"serialize into a short buffer", test_serialize_short},
    {"parse: short length", test_parse_length_short},
    {"parse: long length", test_parse_length_long},
    {"parse: bad magic", test_parse_magic},
    {"parse: version", test_parse_version},
    {"parse: n out of range", test_parse_bits},
    {"parse: group", test_parse_group},
    {"parse: party", test_parse_party},
    {"parse: seed t-bit", test_parse_seed_tbit},
    {"parse: stray cw_tr bit", test_parse_cw_tr},
    {"parse: u64 cw_out high bytes", test_parse_cw_out},
    {"parse: NULL arguments", test_parse_args},
    {"key of another domain, group or PRG keys", test_key_mismatch},
    {"evalall and resolve: domain too large, out_len too small", test_evalall_args},
    {"reference: reproduces dpf.txt", test_reference_vectors},
    {"reference: every implementation on random inputs", test_reference_random},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("dpf", tests);
}
