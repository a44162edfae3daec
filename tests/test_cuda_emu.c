/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda backend's kernels without a GPU: the same kernel bodies and
 * launchers that the .cu files of plugins/cuda compile with nvcc, built as C over
 * the emulated grid of plugins/cuda/kd.h (KD_EMULATE), on host memory,
 * against the soft backend through the public API, on random and odd
 * shapes: PRG ecb/ctr/mmo in both AES variants at every length up to 70
 * and a few long ones, misaligned; NTT forward, inverse and mul for one
 * kernel (N <= 4096) and for the multi-pass path (up to N = 2^17), RNS
 * with a repeated modulus; the LPN fold at tail lengths and b13's table;
 * DPF gen, point evaluation (one key at many points, many keys) and
 * full-domain evaluation in several chunks, both groups, both parties.
 * Built and run by `make check` on every machine: it needs no nvcc.
 */
#include "config.h"

#define KD_EMULATE 1

#include <stdlib.h>
#include <string.h>

#include "engine/spec/dpf_key.h"
#include "engine/spec/dpf_keys.h"
#include "engine/spec/ntt_params.h"
#include "plugins/cuda/dpf_keys.h"
#include "plugins/cuda/k_dpf.h"
#include "plugins/cuda/k_lpn.h"
#include "plugins/cuda/k_ntt.h"
#include "plugins/cuda/k_prg.h"
#include "plugins/cuda/ntt_tables.h"
#include "testutil.h"

#define REF_PRG "prg-soft-bitslice"
#define PATTERN 0xA5

/* ---- PRG ---- */

struct emu_prg {
    uint64_t bs[8][CUDA_BS_RK_WORDS];
    uint32_t tt[8][CUDA_TT_RK_WORDS];
    uint32_t t0[256];
    struct cudak_prg_keys k[2]; /* [0] bitsliced, [1] T-table */
};

static void emu_prg_init(struct emu_prg *p, const uint8_t *keys, size_t m)
{
    for (size_t j = 0; j < m; j++) {
        kd_bs_expand(keys + 16 * j, p->bs[j]);
        mpce_aes_expand_words(keys + 16 * j, p->tt[j]);
    }
    kd_tt_fill(p->t0);
    p->k[0] = (struct cudak_prg_keys){.ttable = 0, .m = (unsigned)m, .rk = p->bs, .t0 = NULL};
    p->k[1] = (struct cudak_prg_keys){.ttable = 1, .m = (unsigned)m, .rk = p->tt, .t0 = p->t0};
}

static int prg_case(size_t n, size_t m, size_t mis_in, size_t mis_out, uint64_t c0)
{
    uint8_t keys[8 * 16];
    struct emu_prg p;
    mpce_prg *ctx = NULL;
    const size_t bytes = 16 * n, outb = 16 * n * m, ki = n % m;
    uint8_t *in = tu_alloc_misaligned(bytes + 16, mis_in);
    uint8_t *out = tu_alloc_misaligned(outb + 16, mis_out);
    uint8_t *want = malloc(outb + 16);
    int ok = 1;

    tu_splitmix_bytes(77 + n, keys, sizeof keys);
    tu_splitmix_bytes(n * 131 + m, in, bytes);
    CU_ASSERT_FATAL(in != NULL && out != NULL && want != NULL);
    CU_ASSERT_FATAL(mpce_prg_new(tu_engine(0), keys, m, &ctx) == MPCE_OK);
    emu_prg_init(&p, keys, m);
    for (int v = 0; v < 2; v++) {
        ok &= mpce_prg_ecb(ctx, REF_PRG, ki, in, want, n) == MPCE_OK;
        memset(out, PATTERN, outb + 16);
        cudak_prg_ecb(NULL, &p.k[v], ki, in, out, n);
        ok &= memcmp(out, want, bytes) == 0 && out[bytes] == PATTERN;
        memcpy(out, in, bytes);
        cudak_prg_ecb(NULL, &p.k[v], ki, out, out, n);
        ok &= memcmp(out, want, bytes) == 0;

        ok &= mpce_prg_ctr(ctx, REF_PRG, ki, c0, want, n) == MPCE_OK;
        memset(out, PATTERN, outb + 16);
        cudak_prg_ctr(NULL, &p.k[v], ki, c0, out, n);
        ok &= memcmp(out, want, bytes) == 0 && out[bytes] == PATTERN;

        ok &= mpce_prg_mmo(ctx, REF_PRG, in, want, n) == MPCE_OK;
        memset(out, PATTERN, outb + 16);
        cudak_prg_mmo(NULL, &p.k[v], in, out, n);
        ok &= memcmp(out, want, outb) == 0 && out[outb] == PATTERN;
        if (!ok) {
            fprintf(stderr, "  %s PRG kernels differ from %s: n %zu, m %zu, misalign %zu/%zu\n",
                    v ? "T-table" : "bitsliced", REF_PRG, n, m, mis_in, mis_out);
            break;
        }
    }
    mpce_prg_free(ctx);
    tu_free_misaligned(in);
    tu_free_misaligned(out);
    free(want);
    return ok;
}

static void test_prg(void)
{
    for (size_t n = 1; n <= 70; n++) {
        const uint64_t c0 = n % 3 == 0 ? UINT64_MAX - n / 2 : n * 0x9e3779b97f4a7c15ull;
        CU_ASSERT(prg_case(n, 1 + n % 8, n % 16, (5 * n + 3) % 16, c0));
    }
    CU_ASSERT(prg_case(1000, 2, 0, 0, 12345));
    CU_ASSERT(prg_case(1027, 8, 3, 1, UINT64_MAX - 600));
    CU_ASSERT(prg_case(4099, 3, 0, 4, 7));
}

/* ---- NTT ---- */

#define Q61 0x1fffffffffe00001ull
#define Q50 1125899903827969ull

static int ntt_case(size_t n, const uint64_t *q, size_t l, size_t batch)
{
    mpce_ntt *ctx = NULL;
    uint64_t g[8], psi[8];
    struct cuda_ntt_host_tables t = {0};
    const size_t words = batch * l * n;
    uint64_t *a = malloc(words * 8), *b = malloc(words * 8), *want = malloc(words * 8),
             *got = malloc(words * 8), *fa = malloc(words * 8), *fb = malloc(words * 8);
    int ok = 1;

    CU_ASSERT_FATAL(a && b && want && got && fa && fb);
    CU_ASSERT_FATAL(mpce_ntt_params(n, q, l, g, psi) == MPCE_OK);
    CU_ASSERT_FATAL(cuda_ntt_tables_build(n, l, q, psi, &t) == 0);
    const struct cudak_ntt d = cuda_ntt_view(&t, n, l, t.bytes);
    CU_ASSERT_FATAL(mpce_ntt_new(tu_engine(0), n, q, l, &ctx) == MPCE_OK);
    uint64_t st = n * 1000003u + l * 17 + batch;
    for (size_t r = 0; r < batch * l; r++)
        for (size_t j = 0; j < n; j++) {
            a[r * n + j] = tu_splitmix64(&st) % q[r % l];
            b[r * n + j] = tu_splitmix64(&st) % q[r % l];
        }
    /* Edges: the largest canonical values in the first row. */
    a[0] = q[0] - 1;
    a[n - 1] = q[0] - 1;

    ok &= mpce_ntt_forward(ctx, "ntt-soft", a, want, batch) == MPCE_OK;
    cudak_ntt_forward(NULL, &d, a, got, batch * l);
    ok &= memcmp(got, want, words * 8) == 0;
    memcpy(fa, got, words * 8);
    /* In place. */
    memcpy(got, a, words * 8);
    cudak_ntt_forward(NULL, &d, got, got, batch * l);
    ok &= memcmp(got, want, words * 8) == 0;

    ok &= mpce_ntt_forward(ctx, "ntt-soft", b, fb, batch) == MPCE_OK;
    ok &= mpce_ntt_mul(ctx, "ntt-soft", fa, fb, want, batch) == MPCE_OK;
    cudak_ntt_mul(NULL, &d, fa, fb, got, batch * l);
    ok &= memcmp(got, want, words * 8) == 0;

    /* Inverse of the product, and of a non-NTT-form input. */
    ok &= mpce_ntt_inverse(ctx, "ntt-soft", want, fb, batch) == MPCE_OK;
    cudak_ntt_inverse(NULL, &d, got, got, batch * l);
    ok &= memcmp(got, fb, words * 8) == 0;
    ok &= mpce_ntt_inverse(ctx, "ntt-soft", b, want, batch) == MPCE_OK;
    cudak_ntt_inverse(NULL, &d, b, got, batch * l);
    ok &= memcmp(got, want, words * 8) == 0;
    /* Round trip. */
    cudak_ntt_inverse(NULL, &d, fa, got, batch * l);
    ok &= memcmp(got, a, words * 8) == 0;

    if (!ok)
        fprintf(stderr, "  NTT kernels differ from ntt-soft: n %zu, l %zu, batch %zu, q0 %llu\n",
                n, l, batch, (unsigned long long)q[0]);
    mpce_ntt_free(ctx);
    free(t.bytes);
    free(a);
    free(b);
    free(want);
    free(got);
    free(fa);
    free(fb);
    return ok;
}

static void test_ntt_one_kernel(void)
{
    static const uint64_t q1[] = {Q61}, q2[] = {Q50}, q3[] = {Q61, Q50, Q61};
    CU_ASSERT(ntt_case(8, q1, 1, 1));
    CU_ASSERT(ntt_case(16, q3, 3, 2));
    CU_ASSERT(ntt_case(1024, q1, 1, 3));
    CU_ASSERT(ntt_case(2048, q2, 1, 1));
    CU_ASSERT(ntt_case(4096, q3, 3, 1));
}

static void test_ntt_multi_pass(void)
{
    static const uint64_t q1[] = {Q61}, q2[] = {Q50, Q61};
    CU_ASSERT(ntt_case(8192, q1, 1, 2));
    CU_ASSERT(ntt_case(16384, q2, 2, 1));
    CU_ASSERT(ntt_case(131072, q1, 1, 1));
}

/* ---- LPN ---- */

static int lpn_case(unsigned logk, size_t n, uint64_t c0)
{
    uint8_t seed[16];
    mpce_lpn *ctx = NULL;
    struct emu_prg p;
    const size_t k = (size_t)1 << logk;
    const size_t l4 = n - n % 4, blocks = 5 * l4 / 2 + 3 * (n % 4);
    uint8_t *table = malloc(16 * k), *want = malloc(16 * n), *got = malloc(16 * n);
    uint32_t *stream = malloc(16 * blocks + 16);
    uint64_t consumed = 0;
    int ok = 1;

    CU_ASSERT_FATAL(table && want && got && stream);
    tu_splitmix_bytes(logk * 7 + n, seed, sizeof seed);
    tu_splitmix_bytes(logk, table, 16 * k);
    tu_splitmix_bytes(n + 99, want, 16 * n);
    memcpy(got, want, 16 * n);
    CU_ASSERT_FATAL(mpce_lpn_new(tu_engine(0), seed, logk, &ctx) == MPCE_OK);
    ok &= mpce_lpn_fold(ctx, "lpn-soft", c0, table, k, want, n, &consumed) == MPCE_OK;
    ok &= consumed == blocks;
    emu_prg_init(&p, seed, 1);
    cudak_prg_ctr(NULL, &p.k[0], 0, c0, (uint8_t *)stream, blocks);
    cudak_lpn_fold(NULL, stream, logk, table, got, n);
    ok &= memcmp(got, want, 16 * n) == 0;
    if (!ok)
        fprintf(stderr, "  LPN kernel differs from lpn-soft: logk %u, n %zu, c0 %llu\n", logk, n,
                (unsigned long long)c0);
    mpce_lpn_free(ctx);
    free(table);
    free(want);
    free(got);
    free(stream);
    return ok;
}

static void test_lpn(void)
{
    static const size_t ns[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 63, 100, 1027};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        CU_ASSERT(lpn_case(3 + (unsigned)(i % 4) * 3, ns[i], ns[i] * 0x9e3779b97f4a7c15ull));
    /* b13's table (logk 19) in a production-sized chunk. */
    CU_ASSERT(lpn_case(19, 8192, 5));
}

/* ---- DPF ---- */

#define NDPF 11

struct emu_dpf {
    uint64_t rk[2 * CUDA_BS_RK_WORDS];
    struct cudak_dpf d;
};

static void emu_dpf_init(struct emu_dpf *e, unsigned bits, unsigned group, const uint8_t *kl,
                         const uint8_t *kr)
{
    kd_bs_expand(kl, e->rk);
    kd_bs_expand(kr, e->rk + CUDA_BS_RK_WORDS);
    e->d = (struct cudak_dpf){.bits = bits, .group = group, .rk = e->rk};
}

static int dpf_case(unsigned bits, unsigned group)
{
    uint8_t kl[16], kr[16], beta[16], s0[NDPF][16], s1[NDPF][16];
    uint64_t alpha[NDPF], points[NDPF], many[67], beta64[NDPF];
    mpce_dpf *ctx;
    mpce_dpf_key *k[2][NDPF];
    struct emu_dpf e;
    const uint64_t mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    const size_t osz = group ? 8 : 16;
    uint8_t want[67 * 16], got[67 * 16];
    uint64_t st = bits * 31u + group;
    int ok = 1;

    tu_splitmix_bytes(bits, kl, 16);
    tu_splitmix_bytes(bits + 100, kr, 16);
    tu_splitmix_bytes(bits + 200, beta, 16);
    tu_splitmix_bytes(bits + 300, s0, sizeof s0);
    tu_splitmix_bytes(bits + 400, s1, sizeof s1);
    CU_ASSERT_FATAL(mpce_dpf_new(tu_engine(0), bits, (mpce_dpf_group)group, kl, kr, &ctx) ==
                    MPCE_OK);
    emu_dpf_init(&e, bits, group, kl, kr);
    for (size_t j = 0; j < NDPF; j++) {
        s0[j][12] &= 0xfe;
        s1[j][12] &= 0xfe;
        alpha[j] = tu_splitmix64(&st) & mask;
        points[j] = j % 3 == 0 ? alpha[j] : tu_splitmix64(&st) & mask;
        beta64[j] = tu_splitmix64(&st);
        if (group)
            ok &= mpce_dpf_gen_u64(ctx, "dpf-soft", alpha[j], beta64[j], s0[j], s1[j],
                                   &k[0][j], &k[1][j]) == MPCE_OK;
        else
            ok &= mpce_dpf_gen(ctx, "dpf-soft", alpha[j], beta, s0[j], s1[j], &k[0][j],
                               &k[1][j]) == MPCE_OK;
    }
    CU_ASSERT_FATAL(ok);

    /* Gen: every correction the soft backend wrote. beta reaches a plugin
     * as 16 bytes: bytes with its t-bit clear, u64 as 8 LE bytes and 8 zeros. */
    {
        uint32_t b4[NDPF][4], a4[NDPF][4], c4[NDPF][4], cws[NDPF][64][4], cwo[NDPF][4];
        uint64_t trs[NDPF];
        for (size_t j = 0; j < NDPF; j++) {
            if (group) {
                b4[j][0] = (uint32_t)beta64[j];
                b4[j][1] = (uint32_t)(beta64[j] >> 32);
                b4[j][2] = b4[j][3] = 0;
            } else {
                memcpy(b4[j], beta, 16);
                b4[j][3] &= ~1u;
            }
            memcpy(a4[j], s0[j], 16);
            memcpy(c4[j], s1[j], 16);
        }
        cudak_dpf_gen(NULL, &e.d, NDPF, alpha, &b4[0][0], &a4[0][0], &c4[0][0], &cws[0][0][0],
                      trs, &cwo[0][0]);
        for (size_t j = 0; j < NDPF; j++) {
            const struct mpce_dpf_key_v1 *kv = &k[0][j]->k;
            for (unsigned i = 0; i < bits; i++)
                ok &= memcmp(cws[j][i], kv->cw_s[i], 16) == 0;
            ok &= trs[j] == cuda_dpf_tr_word(kv->cw_tr);
            ok &= memcmp(cwo[j], kv->cw_out, 16) == 0;
        }
        if (!ok)
            fprintf(stderr, "  DPF gen kernel differs from dpf-soft: bits %u, group %u\n", bits,
                    group);
    }

    /* Many keys, one point each (both parties' keys). */
    for (int party = 0; party < 2; party++) {
        const struct mpce_dpf_key_v1 *kv[NDPF];
        struct cuda_dpf_host_keys t = {0};
        for (size_t j = 0; j < NDPF; j++)
            kv[j] = &k[party][j]->k;
        CU_ASSERT_FATAL(cuda_dpf_keys_build(kv, NDPF, bits, &t) == 0);
        const struct cudak_dpf_keys dk = cuda_dpf_keys_view(&t, t.bytes);
        ok &= mpce_dpf_eval_keys(ctx, "dpf-soft", (const mpce_dpf_key *const *)k[party], points,
                                 NDPF, want) == MPCE_OK;
        memset(got, 0xA5, sizeof got);
        cudak_dpf_eval(NULL, &e.d, &dk, 1, points, NDPF, got);
        ok &= memcmp(got, want, NDPF * osz) == 0 && got[NDPF * osz] == 0xA5;
        free(t.bytes);
        /* The same keys as an engine batch (eval_batch), sliced from key 1
         * on as the module slices one: cuda_dpf_keys_from_batch's copy of
         * each level's row from its offset. */
        mpce_dpf_keys *batch = NULL;
        CU_ASSERT_FATAL(mpce_dpf_keys_new(ctx, (const mpce_dpf_key *const *)k[party], NDPF,
                                          &batch) == MPCE_OK);
        struct cuda_dpf_host_keys ts = {0};
        CU_ASSERT_FATAL(cuda_dpf_keys_from_batch(&batch->b, 1, NDPF - 1, bits, &ts) == 0);
        const struct cudak_dpf_keys dks = cuda_dpf_keys_view(&ts, ts.bytes);
        memset(got, 0xA5, sizeof got);
        cudak_dpf_eval(NULL, &e.d, &dks, 1, points + 1, NDPF - 1, got);
        ok &= memcmp(got, want + osz, (NDPF - 1) * osz) == 0 && got[(NDPF - 1) * osz] == 0xA5;
        free(ts.bytes);
        mpce_dpf_keys_free(batch);
    }
    if (!ok)
        fprintf(stderr, "  DPF many-key eval (parsed keys or a batch's slice) differs from "
                "dpf-soft: bits %u, group %u\n", bits, group);

    /* One key at many points. */
    {
        const struct mpce_dpf_key_v1 *kv[1] = {&k[1][2]->k};
        struct cuda_dpf_host_keys t = {0};
        for (size_t i = 0; i < 67; i++)
            many[i] = i % 5 == 0 ? alpha[2] : tu_splitmix64(&st) & mask;
        CU_ASSERT_FATAL(cuda_dpf_keys_build(kv, 1, bits, &t) == 0);
        const struct cudak_dpf_keys dk = cuda_dpf_keys_view(&t, t.bytes);
        ok &= mpce_dpf_eval(ctx, "dpf-soft", k[1][2], many, 67, want) == MPCE_OK;
        cudak_dpf_eval(NULL, &e.d, &dk, 0, many, 67, got);
        ok &= memcmp(got, want, 67 * osz) == 0;
        free(t.bytes);
        if (!ok)
            fprintf(stderr, "  DPF one-key eval differs from dpf-soft: bits %u, group %u\n",
                    bits, group);
    }

    /* Full domain by subtrees of 2^sl leaves (cudak_dpf_subtrees): roots
     * walked to, each expanded breadth first in shared memory to a frontier
     * (fewer than, exactly, and more than its 256 nodes' levels), then depth
     * first per thread. One key, as the module's evalall runs it, and all
     * NDPF keys of a party in one launch, key after key. */
    if (bits <= 14) {
        const size_t leaves = (size_t)1 << bits;
        uint8_t *w = malloc(NDPF * leaves * osz), *g = malloc(NDPF * leaves * osz + 1);
        uint8_t *roots = malloc(16 * NDPF * leaves);
        uint64_t *pts = malloc(8 * NDPF * leaves);
        CU_ASSERT_FATAL(w && g && roots && pts);
        /* 2^12: the largest subtree the module's evalall uses. */
        const unsigned sls[] = {0, 1, 3, bits < 9 ? bits : 9, bits < 12 ? bits : 12, bits};
        for (int party = 0; party < 2; party++) {
            const struct mpce_dpf_key_v1 *kv[NDPF];
            for (size_t j = 0; j < NDPF; j++) {
                kv[j] = &k[party][j]->k;
                ok &= mpce_dpf_evalall(ctx, "dpf-soft", k[party][j], w + j * leaves * osz,
                                       leaves * osz) == MPCE_OK;
            }
            struct cuda_dpf_host_keys t1 = {0}, tn = {0};
            CU_ASSERT_FATAL(cuda_dpf_keys_build(kv, 1, bits, &t1) == 0);
            CU_ASSERT_FATAL(cuda_dpf_keys_build(kv, NDPF, bits, &tn) == 0);
            const struct cudak_dpf_keys d1 = cuda_dpf_keys_view(&t1, t1.bytes);
            const struct cudak_dpf_keys dn = cuda_dpf_keys_view(&tn, tn.bytes);
            for (size_t si = 0; si < sizeof(sls) / sizeof(sls[0]); si++) {
                const unsigned sl = sls[si] < bits ? sls[si] : bits;
                const size_t per_key = (size_t)1 << (bits - sl);
                for (size_t i = 0; i < NDPF * per_key; i++)
                    pts[i] = (uint64_t)(i % per_key) << sl;
                memset(g, 0xA5, NDPF * leaves * osz + 1);
                cudak_dpf_subtrees(NULL, &e.d, &d1, per_key, pts, per_key, sl, roots, g);
                ok &= memcmp(g, w, leaves * osz) == 0 && g[leaves * osz] == 0xA5;
                memset(g, 0xA5, NDPF * leaves * osz + 1);
                cudak_dpf_subtrees(NULL, &e.d, &dn, per_key, pts, NDPF * per_key, sl, roots, g);
                ok &= memcmp(g, w, NDPF * leaves * osz) == 0 && g[NDPF * leaves * osz] == 0xA5;
                if (!ok) {
                    fprintf(stderr, "  DPF full-domain eval differs from dpf-soft: bits %u, "
                            "group %u, party %d, subtrees of 2^%u leaves\n", bits, group, party,
                            sl);
                    break;
                }
            }
            free(t1.bytes);
            free(tn.bytes);
        }
        free(w);
        free(g);
        free(roots);
        free(pts);
    }
    for (size_t j = 0; j < NDPF; j++) {
        mpce_dpf_key_free(k[0][j]);
        mpce_dpf_key_free(k[1][j]);
    }
    mpce_dpf_free(ctx);
    return ok;
}

static void test_dpf(void)
{
    static const unsigned bits[] = {1, 2, 5, 8, 12, 13, 20, 33, 64};
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        for (unsigned group = 0; group < 2; group++)
            CU_ASSERT(dpf_case(bits[i], group));
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"PRG ecb/ctr/mmo, both AES kernels, emulated grid", test_prg},
        {"NTT N <= 4096 (one shared-memory kernel), emulated grid", test_ntt_one_kernel},
        {"NTT N 8192 .. 2^17 (global passes), emulated grid", test_ntt_multi_pass},
        {"LPN fold, emulated grid", test_lpn},
        {"DPF gen, eval, many-key eval, full domain, emulated grid", test_dpf},
        {NULL, NULL},
    };
    return tu_main("cuda kernels on the emulated grid", tests);
}
