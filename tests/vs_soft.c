/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include "vs_soft.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/runtime/exec.h"
#include "engine/spec/ntt_params.h"
#include "mpcengine/plugin.h"
#include "testutil.h"

/* ---- PRG ------------------------------------------------------------------ */

void vs_prg_case_new(mpce_engine *e, struct vs_prg_case *c)
{
    uint8_t keys[8 * 16];

    tu_splitmix_bytes(4242, keys, sizeof keys);
    for (size_t m = 1; m <= 8; m++)
        CU_ASSERT_FATAL(mpce_prg_new(e, keys, m, &c->ctx[m - 1]) == MPCE_OK);
}

void vs_prg_case_free(struct vs_prg_case *c)
{
    for (size_t m = 0; m < 8; m++)
        mpce_prg_free(c->ctx[m]);
}

int vs_prg_compare(const struct vs_prg_case *c, const char *impl, size_t n, size_t m,
                   size_t mis_in, size_t mis_out, uint64_t c0)
{
    const size_t bytes = 16 * n, outb = 16 * n * m;
    mpce_prg *ctx = c->ctx[m - 1];
    size_t ki = n % m;
    uint8_t *in = tu_alloc_misaligned(bytes + 16, mis_in);
    uint8_t *out = tu_alloc_misaligned(outb + 16, mis_out);
    uint8_t *want = malloc(outb + 16);
    int ok = 1;

    CU_ASSERT_FATAL(in && out && want);
    tu_splitmix_bytes(n * 131 + m, in, bytes);

    ok &= mpce_prg_ecb(ctx, VS_REF_PRG, ki, in, want, n) == MPCE_OK;
    memset(out, VS_PATTERN, outb + 16);
    ok &= mpce_prg_ecb(ctx, impl, ki, in, out, n) == MPCE_OK;
    ok &= memcmp(out, want, bytes) == 0 && out[bytes] == VS_PATTERN;
    memcpy(out, in, bytes);
    ok &= mpce_prg_ecb(ctx, impl, ki, out, out, n) == MPCE_OK;
    ok &= memcmp(out, want, bytes) == 0;

    ok &= mpce_prg_ctr(ctx, VS_REF_PRG, ki, c0, want, n) == MPCE_OK;
    memset(out, VS_PATTERN, outb + 16);
    ok &= mpce_prg_ctr(ctx, impl, ki, c0, out, n) == MPCE_OK;
    ok &= memcmp(out, want, bytes) == 0 && out[bytes] == VS_PATTERN;

    ok &= mpce_prg_mmo(ctx, VS_REF_PRG, in, want, n) == MPCE_OK;
    memset(out, VS_PATTERN, outb + 16);
    ok &= mpce_prg_mmo(ctx, impl, in, out, n) == MPCE_OK;
    ok &= memcmp(out, want, outb) == 0 && out[outb] == VS_PATTERN;

    if (!ok)
        fprintf(stderr, "  %s differs from %s: n %zu, m %zu, misalign %zu/%zu, c0 %llu\n", impl,
                VS_REF_PRG, n, m, mis_in, mis_out, (unsigned long long)c0);
    tu_free_misaligned(in);
    tu_free_misaligned(out);
    free(want);
    return ok;
}

/* The guard byte after an output of len bytes: set before the call. */
static void guard_set(uint8_t *out, size_t len)
{
    out[len] = VS_PATTERN;
}

/* Whether the call writing len bytes to out left the byte after them. */
static int guard_kept(const uint8_t *out, size_t len, const char *impl, const char *op)
{
    if (out[len] == VS_PATTERN)
        return 1;
    fprintf(stderr, "  %s: %s wrote past its %zu-byte output\n", impl, op, len);
    return 0;
}

/* ---- LPN ------------------------------------------------------------------ */

int vs_lpn_compare(mpce_engine *e, const char *impl, unsigned logk, size_t n, uint64_t c0)
{
    const size_t k = (size_t)1 << logk;
    uint8_t seed[16];
    uint8_t *table = malloc(16 * k), *a = malloc(16 * n + 1), *b = malloc(16 * n + 1);
    uint64_t ca = 0, cb = 1;
    mpce_lpn *ctx;
    int ok;

    CU_ASSERT_FATAL(table && a && b);
    tu_splitmix_bytes(logk * 7 + n, seed, 16);
    tu_splitmix_bytes(logk, table, 16 * k);
    tu_splitmix_bytes(n, a, 16 * n);
    memcpy(b, a, 16 * n);
    guard_set(a, 16 * n);
    CU_ASSERT_FATAL(mpce_lpn_new(e, seed, logk, &ctx) == MPCE_OK);
    ok = mpce_lpn_fold(ctx, impl, c0, table, k, a, n, &ca) == MPCE_OK &&
         mpce_lpn_fold(ctx, "lpn-soft", c0, table, k, b, n, &cb) == MPCE_OK && ca == cb &&
         memcmp(a, b, 16 * n) == 0;
    ok &= guard_kept(a, 16 * n, impl, "lpn.fold");
    if (!ok)
        fprintf(stderr, "  %s differs from lpn-soft: logk %u, n %zu: %s\n", impl, logk, n,
                mpce_last_error());
    mpce_lpn_free(ctx);
    free(table);
    free(a);
    free(b);
    return ok;
}

int vs_lpn_all(mpce_engine *e, const char *impl, const size_t *ns, size_t count)
{
    int ok = 1;

    for (size_t i = 0; i < count; i++)
        ok &= vs_lpn_compare(e, impl, 1 + (unsigned)(i * 5 % 30 % 19), ns[i], UINT64_MAX - 3 * i);
    return ok & vs_lpn_compare(e, impl, 19, 8192, 12345);
}

/* ---- DPF ------------------------------------------------------------------ */

/* Seeds and beta with the control bit clear, as gen requires. */
static void dpf_inputs(uint64_t seed, uint8_t kl[16], uint8_t kr[16], uint8_t beta[16],
                       uint8_t s0[16], uint8_t s1[16])
{
    tu_splitmix_bytes(seed, kl, 16);
    tu_splitmix_bytes(seed + 1, kr, 16);
    tu_splitmix_bytes(seed + 2, beta, 16);
    tu_splitmix_bytes(seed + 3, s0, 16);
    tu_splitmix_bytes(seed + 4, s1, 16);
    beta[12] &= 0xfe;
    s0[12] &= 0xfe;
    s1[12] &= 0xfe;
}

int vs_dpf_compare(mpce_engine *e, const char *impl, unsigned bits, mpce_dpf_group g,
                   uint64_t seed, const struct vs_dpf_shape *shape)
{
    const size_t nk = shape->keys, osz = mpce_dpf_output_size(g);
    const uint64_t mask = bits < 64 ? ((uint64_t)1 << bits) - 1 : ~(uint64_t)0;
    const size_t nall = bits <= shape->max_all_bits ? (size_t)1 << bits : 0;
    uint8_t kl[16], kr[16], beta[16], s0[16], s1[16];
    uint8_t *a = malloc(nk * osz + nall * osz + 1), *b = malloc(nk * osz + nall * osz + 1);
    uint64_t *xs = malloc(nk * sizeof *xs), st = seed;
    const mpce_dpf_key **keys = malloc(nk * sizeof *keys);
    mpce_dpf_key *k[2] = {NULL, NULL}, *ks[2] = {NULL, NULL};
    mpce_dpf *ctx;
    int ok = 1;

    CU_ASSERT_FATAL(a && b && xs && keys);
    dpf_inputs(seed, kl, kr, beta, s0, s1);
    if (g == MPCE_DPF_U64)
        memset(beta + 8, 0, 8);
    CU_ASSERT_FATAL(mpce_dpf_new(e, bits, g, kl, kr, &ctx) == MPCE_OK);
    uint64_t alpha = tu_splitmix64(&st) & mask;
    ok &= mpce_dpf_gen(ctx, impl, alpha, beta, s0, s1, &k[0], &k[1]) == MPCE_OK;
    ok &= mpce_dpf_gen(ctx, "dpf-soft", alpha, beta, s0, s1, &ks[0], &ks[1]) == MPCE_OK;
    for (int p = 0; p < 2 && ok; p++) {
        uint8_t sa[2048], sb[2048];
        size_t la = 0, lb = 0;
        ok &= mpce_dpf_key_serialize(k[p], sa, sizeof sa, &la) == MPCE_OK;
        ok &= mpce_dpf_key_serialize(ks[p], sb, sizeof sb, &lb) == MPCE_OK;
        ok &= la == lb && memcmp(sa, sb, la) == 0;
    }
    for (size_t j = 0; j < nk; j++) {
        xs[j] = j % 5 == 0 ? alpha : tu_splitmix64(&st) & mask;
        keys[j] = k[(j / 3) & 1];
    }
    for (int p = 0; p < 2 && ok; p++) {
        guard_set(a, nk * osz);
        ok &= mpce_dpf_eval(ctx, impl, k[p], xs, nk, a) == MPCE_OK;
        ok &= guard_kept(a, nk * osz, impl, "dpf.eval");
        ok &= mpce_dpf_eval(ctx, "dpf-soft", k[p], xs, nk, b) == MPCE_OK;
        ok &= memcmp(a, b, nk * osz) == 0;
        /* Fewer points than a backend interleaves walk another path. */
        for (size_t few = 1; few <= shape->few_max && ok; few += shape->few_step) {
            guard_set(a, few * osz);
            ok &= mpce_dpf_eval(ctx, impl, k[p], xs, few, a) == MPCE_OK;
            ok &= guard_kept(a, few * osz, impl, "dpf.eval");
            ok &= mpce_dpf_eval(ctx, "dpf-soft", k[p], xs, few, b) == MPCE_OK;
            ok &= memcmp(a, b, few * osz) == 0;
            guard_set(a, few * osz);
            ok &= mpce_dpf_eval_keys(ctx, impl, keys, xs, few, a) == MPCE_OK;
            ok &= guard_kept(a, few * osz, impl, "dpf.eval_keys");
            ok &= mpce_dpf_eval_keys(ctx, "dpf-soft", keys, xs, few, b) == MPCE_OK;
            ok &= memcmp(a, b, few * osz) == 0;
        }
        if (nall) {
            guard_set(a, nall * osz);
            ok &= mpce_dpf_evalall(ctx, impl, k[p], a, nall * osz) == MPCE_OK;
            ok &= guard_kept(a, nall * osz, impl, "dpf.evalall");
            ok &= mpce_dpf_evalall(ctx, "dpf-soft", k[p], b, nall * osz) == MPCE_OK;
            ok &= memcmp(a, b, nall * osz) == 0;
        }
    }
    if (ok) {
        guard_set(a, nk * osz);
        ok &= mpce_dpf_eval_keys(ctx, impl, keys, xs, nk, a) == MPCE_OK;
        ok &= guard_kept(a, nk * osz, impl, "dpf.eval_keys");
        ok &= mpce_dpf_eval_keys(ctx, "dpf-soft", keys, xs, nk, b) == MPCE_OK;
        ok &= memcmp(a, b, nk * osz) == 0;
    }
    if (!ok)
        fprintf(stderr, "  %s differs from dpf-soft: bits %u, group %d: %s\n", impl, bits, (int)g,
                mpce_last_error());
    for (int p = 0; p < 2; p++) {
        mpce_dpf_key_free(k[p]);
        mpce_dpf_key_free(ks[p]);
    }
    mpce_dpf_free(ctx);
    free(a);
    free(b);
    free(xs);
    free(keys);
    return ok;
}

int vs_dpf_all(mpce_engine *e, const char *impl, const unsigned *bits, size_t nbits,
               const struct vs_dpf_shape *shape)
{
    int ok = 1;

    for (size_t i = 0; i < nbits; i++)
        for (int g = 0; g < 2; g++)
            ok &= vs_dpf_compare(e, impl, bits[i], g ? MPCE_DPF_U64 : MPCE_DPF_BYTES,
                                 1000 + 10 * i + (uint64_t)g, shape);
    return ok;
}

void vs_dpf_range(mpce_engine *e, const char *impl, unsigned max_bits)
{
    const struct mpce_slot *slot = mpce_registry_find(e, impl);
    CU_ASSERT_FATAL(slot != NULL);
    const struct mpce_dpf_ops *vt = &slot->ops.dpf;
    const struct mpce_call *call = &mpce_host_call;
    CU_ASSERT_FATAL(vt->evalall_range != NULL);

    for (unsigned bits = 1; bits <= max_bits; bits += (bits < 13 ? 3 : 1)) {
        for (unsigned g = 0; g < 2; g++) {
            const size_t n = (size_t)1 << bits, osz = g ? 8 : 16;
            uint8_t kl[16], kr[16], beta[16], s0[16], s1[16];
            struct mpce_dpf_key_v1 k0, k1;
            uint8_t *all = malloc(n * osz), *part = malloc(n * osz + 1);
            void *st;
            uint64_t rs = bits;

            CU_ASSERT_FATAL(all && part);
            dpf_inputs(bits, kl, kr, beta, s0, s1);
            CU_ASSERT_FATAL(vt->ctx_new(slot->module->state, bits, g, kl, kr, &st) == 0);
            CU_ASSERT_FATAL(vt->gen(st, call, tu_splitmix64(&rs) & (n - 1), beta, s0, s1, &k0,
                                    &k1) == 0);
            CU_ASSERT(vt->evalall(st, call, &k1, all) == 0);
            /* Slices at odd boundaries, including ones inside a forest. */
            for (int rep = 0; rep < 6; rep++) {
                uint64_t x0 = tu_splitmix64(&rs) % n, x1 = tu_splitmix64(&rs) % (n + 1);
                if (rep == 0)
                    x0 = 0, x1 = n;
                if (x1 < x0) {
                    uint64_t t = x0;
                    x0 = x1;
                    x1 = t;
                }
                memset(part, VS_PATTERN, n * osz + 1);
                CU_ASSERT(vt->evalall_range(st, call, &k1, x0, x1, part) == 0);
                CU_ASSERT(memcmp(part, all + x0 * osz, (x1 - x0) * osz) == 0);
                CU_ASSERT(part[(x1 - x0) * osz] == VS_PATTERN);
            }
            vt->ctx_free(st);
            free(all);
            free(part);
        }
    }
}

/* ---- NTT ------------------------------------------------------------------ */

uint64_t vs_find_prime(unsigned bits, unsigned index)
{
    const uint64_t step = UINT64_C(1) << 18;
    uint64_t q = (((UINT64_C(1) << bits) - 1) / step) * step + 1;
    for (; q > step; q -= step) {
        if (mpce_is_prime64(q) && index-- == 0)
            return q;
    }
    CU_FAIL_FATAL("no prime found");
    return 0;
}

/* One op of impl (or ntt-soft) from src into dst. */
static mpce_status ntt_op(mpce_ntt *ctx, int op, const char *impl, const uint64_t *src,
                          const uint64_t *other, uint64_t *dst, size_t batch)
{
    if (op == 0)
        return mpce_ntt_forward(ctx, impl, src, dst, batch);
    if (op == 1)
        return mpce_ntt_inverse(ctx, impl, src, dst, batch);
    return mpce_ntt_mul(ctx, impl, src, other, dst, batch);
}

int vs_ntt_compare(mpce_ntt *ctx, const char *impl, const uint64_t *in, size_t words,
                   size_t batch, const char *what)
{
    static const char *const ops[] = {"forward", "inverse", "mul"};
    const size_t bytes = words * sizeof(uint64_t), n = mpce_ntt_degree(ctx);
    uint64_t *want = malloc(bytes), *got = tu_alloc_misaligned(bytes, 8), *other = malloc(bytes);
    int ok = 1;

    CU_ASSERT_FATAL(want && got && other);
    for (size_t i = 0; i < words; i++)
        other[i] = in[(i / n) * n + (i * 5 + 3) % n];
    for (int op = 0; op < 3; op++) {
        int out_ok = ntt_op(ctx, op, "ntt-soft", in, other, want, batch) == MPCE_OK &&
                     ntt_op(ctx, op, impl, in, other, got, batch) == MPCE_OK &&
                     memcmp(want, got, bytes) == 0;
        memcpy(got, in, bytes);
        int in_ok = ntt_op(ctx, op, impl, got, other, got, batch) == MPCE_OK &&
                    memcmp(want, got, bytes) == 0;
        if (!out_ok || !in_ok)
            fprintf(stderr, "  %s %s (%s, N = %zu, L = %zu, B = %zu): %s differs from "
                    "ntt-soft: %s\n", impl, ops[op], what, n, mpce_ntt_modulus_count(ctx), batch,
                    out_ok ? "in place" : "out of place", mpce_last_error());
        ok &= out_ok && in_ok;
    }
    free(want);
    free(other);
    tu_free_misaligned(got);
    return ok;
}

/* ---- masks and children -------------------------------------------------- */

const mpce_impl_info *vs_find_row(const mpce_impl_info *rows, size_t n, const char *impl)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].impl, impl) == 0)
            return &rows[i];
    return NULL;
}

int vs_impl_passes(const char *plugin_path, unsigned flags, const char *impl)
{
    mpce_options opts = {
        .struct_size = sizeof opts,
        .plugin_path = plugin_path,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_SYSTEM_CONFIG | flags,
    };
    mpce_engine *e = NULL;
    const mpce_impl_info *rows;
    size_t n;
    int ok = mpce_engine_new(&opts, &e) == MPCE_OK && mpce_list(e, 1, &rows, &n) == MPCE_OK;
    const mpce_impl_info *r = ok ? vs_find_row(rows, n, impl) : NULL;
    ok = r != NULL && strcmp(r->selftest, "pass") == 0;
    mpce_engine_free(e);
    return ok;
}

int vs_rerun_self(char *const argv[])
{
    int status = 0;
    pid_t pid;
    /* The program's own path, not /proc/self/exe itself: under valgrind
     * or qemu that link names the tool or the emulator, while readlink of
     * it is answered with this program's path. */
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0) {
        printf("\n  cannot read /proc/self/exe: %s\n", strerror(errno));
        return 0;
    }
    self[len] = '\0';
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        execv(self, argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int vs_child_drop_root(const char *prog)
{
    if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
        fprintf(stderr, "%s: dropping root for the masked child: %s\n", prog, strerror(errno));
        return -1;
    }
    return 0;
}
