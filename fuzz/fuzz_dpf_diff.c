/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Differential: DPF gen, eval, eval_batch and evalall through every
 * implementation this CPU can run, each compared byte for byte with soft's
 * (gen from the same root seeds must give the same keys). Soft's keys and
 * point evaluations byte for byte against the test suite's independent
 * reference on OpenSSL's AES (tests/ref_dpf.h), with the default PRG keys
 * (SPEC.md section 4) the context is made with. Soft against the definition: the two parties' outputs combine (XOR for bytes, sum mod 2^64
 * for u64) to beta at alpha and to 0 elsewhere. Point counts 0, 1, 3
 * favoured; output buffers unaligned.
 *
 * Input: domain bits, group, point count, misalignment, alpha (8 bytes),
 * beta, seed0, seed1 (16 bytes each), then the points (8 bytes each).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "tests/ref_dpf.h"

#define MAX_IMPLS 16
#define MAX_POINTS 40
#define MAX_EVALALL_BITS 10
#define TBIT_BYTE 12

/* The default PRG keys (SPEC.md section 4; tests/test_dpf.c checks them). */
static const uint8_t default_kl[16] = {0xe2, 0x21, 0x56, 0xd9, 0x76, 0xd3, 0x6a, 0xf2,
                                       0x1e, 0x4c, 0x6b, 0x2d, 0xf3, 0x9c, 0x7d, 0xda};
static const uint8_t default_kr[16] = {0x20, 0xc1, 0x98, 0x16, 0x71, 0xb4, 0x1b, 0x98,
                                       0x81, 0x4f, 0x3a, 0xd5, 0xaf, 0x07, 0x12, 0x63};

static void combine(mpce_dpf_group group, const uint8_t *a, const uint8_t *b, uint8_t *out)
{
    if (group == MPCE_DPF_BYTES) {
        for (int i = 0; i < 16; i++)
            out[i] = a[i] ^ b[i];
        return;
    }
    uint64_t x = 0, y = 0;
    for (int i = 0; i < 8; i++) {
        x |= (uint64_t)a[i] << (8 * i);
        y |= (uint64_t)b[i] << (8 * i);
    }
    x += y;
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(x >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *impls[MAX_IMPLS];
    static size_t nimpl;
    mpce_engine *e = fuzz_engine(1);
    if (nimpl == 0)
        nimpl = fuzz_impls(e, MPCE_PRIM_DPF, impls, MAX_IMPLS);

    struct fuzz_in in = {data, size};
    uint8_t bsel = fuzz_u8(&in);
    unsigned bits = bsel < 128 ? 1 + bsel % 12 : 1 + bsel % 64;
    mpce_dpf_group group = fuzz_u8(&in) & 1 ? MPCE_DPF_U64 : MPCE_DPF_BYTES;
    uint8_t psel = fuzz_u8(&in);
    size_t npts = psel < 48 ? (size_t[]){0, 1, 3}[psel % 3] : psel % (MAX_POINTS + 1);
    size_t mis = fuzz_u8(&in);
    const uint64_t mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    uint64_t alpha = fuzz_u64(&in) & mask;
    uint8_t beta[16], seed0[16], seed1[16];
    fuzz_bytes(&in, beta, 16);
    fuzz_bytes(&in, seed0, 16);
    fuzz_bytes(&in, seed1, 16);
    if (group == MPCE_DPF_U64)
        memset(beta + 8, 0, 8);
    uint64_t pts[MAX_POINTS];
    for (size_t i = 0; i < npts; i++) {
        /* Alpha itself now and then, else anywhere in the domain. */
        uint64_t v = fuzz_u64(&in);
        pts[i] = (v & 0xf) == 0 ? alpha : (v >> 4) & mask;
    }

    mpce_dpf *ctx = NULL;
    FUZZ_CHECK(mpce_dpf_new(e, bits, group, NULL, NULL, &ctx) == MPCE_OK, "mpce_dpf_new: %s",
               mpce_last_error());
    const size_t osz = mpce_dpf_output_size(group), ksz = mpce_dpf_key_size(bits);
    const size_t olen = npts * osz;
    const size_t alen = bits <= MAX_EVALALL_BITS ? ((size_t)1 << bits) * osz : 0;
    uint8_t *k0ref = malloc(ksz), *k1ref = malloc(ksz), *kbuf = malloc(ksz);
    uint8_t *want0 = malloc(olen + 1), *want1 = malloc(olen + 1), *wantb = malloc(olen + 1);
    uint8_t *wantall = malloc(alen + 1);
    FUZZ_CHECK(k0ref && k1ref && kbuf && want0 && want1 && wantb && wantall, "out of memory");
    mpce_dpf_key *k0 = NULL, *k1 = NULL;

    for (size_t i = 0; i < nimpl; i++) {
        const char *impl = impls[i];
        mpce_dpf_key *g0 = NULL, *g1 = NULL;
        FUZZ_CHECK(mpce_dpf_gen(ctx, impl, alpha, beta, seed0, seed1, &g0, &g1) == MPCE_OK,
                   "%s gen: %s", impl, mpce_last_error());
        FUZZ_CHECK(mpce_dpf_key_serialize(g0, i ? kbuf : k0ref, ksz, NULL) == MPCE_OK,
                   "serialize: %s", mpce_last_error());
        FUZZ_CHECK(i == 0 || memcmp(kbuf, k0ref, ksz) == 0, "%s gen: key 0 differs from soft's",
                   impl);
        FUZZ_CHECK(mpce_dpf_key_serialize(g1, i ? kbuf : k1ref, ksz, NULL) == MPCE_OK,
                   "serialize: %s", mpce_last_error());
        FUZZ_CHECK(i == 0 || memcmp(kbuf, k1ref, ksz) == 0, "%s gen: key 1 differs from soft's",
                   impl);
        if (i == 0) {
            k0 = g0;
            k1 = g1;
        } else {
            mpce_dpf_key_free(g0);
            mpce_dpf_key_free(g1);
        }

        /* Every implementation evaluates soft's keys. */
        uint8_t *out0 = fuzz_alloc_misaligned(olen, mis + i);
        uint8_t *out1 = fuzz_alloc_misaligned(olen, mis + i + 5);
        FUZZ_CHECK(mpce_dpf_eval(ctx, impl, k0, pts, npts, out0) == MPCE_OK &&
                       mpce_dpf_eval(ctx, impl, k1, pts, npts, out1) == MPCE_OK,
                   "%s eval of %zu points: %s", impl, npts, mpce_last_error());
        if (i == 0) {
            memcpy(want0, out0, olen);
            memcpy(want1, out1, olen);
        } else {
            FUZZ_CHECK(memcmp(want0, out0, olen) == 0 && memcmp(want1, out1, olen) == 0,
                       "%s eval (n = %u, %zu points): differs from soft", impl, bits, npts);
        }

        /* A batch of keys alternating between the parties, key j at point j. */
        const mpce_dpf_key *keys[MAX_POINTS];
        for (size_t j = 0; j < npts; j++)
            keys[j] = j % 2 ? k1 : k0;
        mpce_dpf_keys *batch = NULL;
        FUZZ_CHECK(mpce_dpf_keys_new(ctx, keys, npts, &batch) == MPCE_OK, "keys_new: %s",
                   mpce_last_error());
        FUZZ_CHECK(mpce_dpf_eval_batch(ctx, impl, batch, 0, pts, npts, out0) == MPCE_OK,
                   "%s eval_batch: %s", impl, mpce_last_error());
        if (i == 0)
            memcpy(wantb, out0, olen);
        else
            FUZZ_CHECK(memcmp(wantb, out0, olen) == 0, "%s eval_batch (n = %u): differs from soft",
                       impl, bits);
        for (size_t j = 0; j < npts; j++)
            FUZZ_CHECK(memcmp(out0 + j * osz, (j % 2 ? want1 : want0) + j * osz, osz) == 0,
                       "%s eval_batch: key %zu differs from eval", impl, j);
        mpce_dpf_keys_free(batch);
        fuzz_free_misaligned(out0);
        fuzz_free_misaligned(out1);

        if (alen) {
            uint8_t *all = fuzz_alloc_misaligned(alen, mis + 2 * i + 1);
            FUZZ_CHECK(mpce_dpf_evalall(ctx, impl, k0, all, alen) == MPCE_OK, "%s evalall: %s",
                       impl, mpce_last_error());
            if (i == 0)
                memcpy(wantall, all, alen);
            else
                FUZZ_CHECK(memcmp(wantall, all, alen) == 0,
                           "%s evalall (n = %u): differs from soft", impl, bits);
            fuzz_free_misaligned(all);
        }
    }

    /* soft against the reference: the keys, byte for byte, and eval. */
    {
        struct ref_prg prg;
        struct ref_key rk[2];
        uint8_t ser[REF_MAX_KEY], y[16];
        FUZZ_CHECK(ref_prg_init(&prg, default_kl, default_kr) == 0, "ref_prg_init failed");
        ref_gen(&prg, default_kl, default_kr, bits, (unsigned)group, alpha, beta, seed0, seed1,
                rk);
        for (unsigned b = 0; b < 2; b++) {
            size_t rlen = ref_serialize(&rk[b], ser);
            const uint8_t *got = b ? k1ref : k0ref;
            FUZZ_CHECK(rlen == ksz, "reference key size %zu, engine's %zu", rlen, ksz);
            size_t at = 0;
            while (at < ksz && got[at] == ser[at])
                at++;
            FUZZ_CHECK(at == ksz, "%s gen (n = %u, group %u, alpha = %#llx): key %u differs "
                       "from the reference at byte %zu", impls[0], bits, (unsigned)group,
                       (unsigned long long)alpha, b, at);
            for (size_t j = 0; j < npts; j++) {
                ref_eval(&prg, &rk[b], pts[j], y);
                FUZZ_CHECK(memcmp((b ? want1 : want0) + j * osz, y, osz) == 0,
                           "%s eval (n = %u, x = %#llx, party %u): differs from the reference",
                           impls[0], bits, (unsigned long long)pts[j], b);
            }
        }
        ref_prg_free(&prg);
    }

    /* soft against the definition. */
    uint8_t beta_eff[16];
    memcpy(beta_eff, beta, 16);
    if (group == MPCE_DPF_BYTES)
        beta_eff[TBIT_BYTE] &= 0xfe;
    for (size_t j = 0; j < npts; j++) {
        uint8_t sum[16];
        combine(group, want0 + j * osz, want1 + j * osz, sum);
        if (pts[j] == alpha)
            FUZZ_CHECK(memcmp(sum, beta_eff, osz) == 0, "soft: the shares at alpha are not beta");
        else
            for (size_t b = 0; b < osz; b++)
                FUZZ_CHECK(sum[b] == 0, "soft: the shares away from alpha are not 0");
    }
    if (alen) {
        uint8_t *all1 = malloc(alen);
        FUZZ_CHECK(all1 != NULL, "out of memory");
        FUZZ_CHECK(mpce_dpf_evalall(ctx, impls[0], k1, all1, alen) == MPCE_OK, "evalall: %s",
                   mpce_last_error());
        for (uint64_t x = 0; x <= mask; x++) {
            uint8_t sum[16];
            combine(group, wantall + x * osz, all1 + x * osz, sum);
            if (x == alpha)
                FUZZ_CHECK(memcmp(sum, beta_eff, osz) == 0, "soft evalall: not beta at alpha");
            else
                for (size_t b = 0; b < osz; b++)
                    FUZZ_CHECK(sum[b] == 0, "soft evalall: not 0 at %llu", (unsigned long long)x);
        }
        free(all1);
    }

    mpce_dpf_key_free(k0);
    mpce_dpf_key_free(k1);
    mpce_dpf_free(ctx);
    free(k0ref);
    free(k1ref);
    free(kbuf);
    free(want0);
    free(want1);
    free(wantb);
    free(wantall);
    return 0;
}
