/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Constant time, checked (the ctgrind / TIMECOP method): run one
 * implementation with its secrets marked undefined under valgrind memcheck,
 * which then reports every branch and every memory address that depends on
 * them. tests/check_ct.sh runs this program under valgrind for each default
 * implementation (which must be clean) and for the T-table AES (which must
 * be reported, proving the check sees a leak).
 *
 *   ct_check IMPL      IMPL: a prg-* or dpf-* implementation name
 *
 * Secrets: the AES keys (expanded inside mpce_prg_new, so key expansion is
 * covered), the blocks ECB and MMO encrypt, and for DPF gen the root seeds,
 * beta, the PRG keys and the point alpha: its bits inside the domain are
 * marked undefined one by one (memcheck tracks definedness per bit), the
 * bits above it left defined, so that the API's check that alpha lies in
 * the domain, which refuses a bad call and says nothing more, is not
 * counted. Public by design, and so left defined: counters, lengths, the
 * domain size. Outputs are marked defined again before anything looks at
 * them: a result may depend on a secret, the code that made it may not.
 *
 * Exit: 0 done (valgrind's --error-exitcode says whether it was clean), 77
 * the implementation cannot run here (or memcheck.h was missing at build
 * time), 1 the engine refused.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpcengine.h"

#ifdef HAVE_VALGRIND_MEMCHECK_H
#include <valgrind/memcheck.h>
#define SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#endif

#ifdef HAVE_VALGRIND_MEMCHECK_H
static int fail(const char *what)
{
    fprintf(stderr, "ct_check: %s: %s\n", what, mpce_last_error());
    return 1;
}

/* Whether impl passed its self-test on this machine (under valgrind the CPU
 * shows fewer features: VAES and AVX-512 implementations are skipped). */
static int runnable(mpce_engine *e, const char *impl)
{
    const mpce_impl_info *rows;
    size_t n;
    if (mpce_list(e, 1, &rows, &n) != MPCE_OK)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].impl, impl) == 0) {
            if (strcmp(rows[i].selftest, "pass") == 0)
                return 1;
            /* A broken implementation is a failure, not something this CPU
             * lacks: the check must not pass on soft alone. */
            if (strcmp(rows[i].selftest, "fail") == 0) {
                printf("FAIL: %s failed its self-test: %s\n", impl, rows[i].reason);
                return -1;
            }
            printf("skipped: %s: %s (%s)\n", impl, rows[i].selftest, rows[i].reason);
            return 0;
        }
    printf("skipped: %s: not installed here\n", impl);
    return 0;
}

static int check_prg(mpce_engine *e, const char *impl)
{
    /* Odd lengths too: every tail path of a wide kernel runs. */
    static const size_t lengths[] = {1, 3, 8, 17, 64};
    uint8_t keys[8 * 16], in[64 * 16], out[8 * 64 * 16];
    for (size_t i = 0; i < sizeof(keys); i++)
        keys[i] = (uint8_t)(i * 37 + 11);
    for (size_t i = 0; i < sizeof(in); i++)
        in[i] = (uint8_t)(i * 101 + 7);
    SECRET(keys, sizeof(keys));
    mpce_prg *ctx;
    if (mpce_prg_new(e, keys, 8, &ctx) != MPCE_OK)
        return fail("mpce_prg_new");
    for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++) {
        size_t n = lengths[l];
        SECRET(in, n * 16);
        if (mpce_prg_ecb(ctx, impl, 5, in, out, n) != MPCE_OK)
            return fail("mpce_prg_ecb");
        if (mpce_prg_ctr(ctx, impl, 2, 1000, out, n) != MPCE_OK)
            return fail("mpce_prg_ctr");
        SECRET(in, n * 16);
        if (mpce_prg_mmo(ctx, impl, in, out, n) != MPCE_OK)
            return fail("mpce_prg_mmo");
        PUBLIC(out, sizeof(out));
    }
    mpce_prg_free(ctx);
    return 0;
}

static int check_dpf(mpce_engine *e, const char *impl)
{
    uint8_t kl[16], kr[16], seed0[16], seed1[16], beta[16];
    for (int i = 0; i < 16; i++) {
        kl[i] = (uint8_t)(3 * i + 1);
        kr[i] = (uint8_t)(5 * i + 2);
        seed0[i] = (uint8_t)(7 * i + 3);
        seed1[i] = (uint8_t)(11 * i + 4);
        beta[i] = (uint8_t)(13 * i + 5);
    }
    beta[12] &= 0xfe; /* the t-bit SPEC.md forces to 0 */
    SECRET(kl, 16);
    SECRET(kr, 16);
    mpce_dpf *ctx;
    if (mpce_dpf_new(e, 20, MPCE_DPF_BYTES, kl, kr, &ctx) != MPCE_OK)
        return fail("mpce_dpf_new");
    for (uint64_t alpha = 0; alpha < 3; alpha++) {
        SECRET(seed0, 16);
        SECRET(seed1, 16);
        SECRET(beta, 16);
        uint64_t point = alpha * 12345u;
        const uint64_t in_domain = (UINT64_C(1) << 20) - 1; /* vbits: 1 = undefined */
        /* 1 when memcheck took the bits: anything else would leave alpha
         * public and the check passing for nothing. */
        const unsigned set = VALGRIND_SET_VBITS(&point, &in_domain, sizeof(point));
        if (RUNNING_ON_VALGRIND && set != 1)
            return fail("VALGRIND_SET_VBITS (alpha could not be marked secret)");
        mpce_dpf_key *k0, *k1;
        if (mpce_dpf_gen(ctx, impl, point, beta, seed0, seed1, &k0, &k1) != MPCE_OK)
            return fail("mpce_dpf_gen");
        mpce_dpf_key_free(k0);
        mpce_dpf_key_free(k1);
    }
    mpce_dpf_free(ctx);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ct_check IMPL (prg-* or dpf-*)\n");
        return 2;
    }
#ifndef HAVE_VALGRIND_MEMCHECK_H
    printf("skipped: valgrind/memcheck.h was not found at build time (Debian: valgrind)\n");
    return 77;
#else
    const char *impl = argv[1];
    const char *plugins = TEST_PLUGIN_PATH;
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .plugin_path = plugins[0] ? plugins : NULL,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG |
                 MPCE_OPT_NO_TUNE | (plugins[0] ? 0u : MPCE_OPT_NO_PLUGINS),
        .config_path = CT_CONF,
    };
    mpce_engine *e;
    if (mpce_engine_new(&opts, &e) != MPCE_OK)
        return fail("mpce_engine_new");
    int rc = 77;
    const int can = runnable(e, impl);
    if (can < 0)
        rc = 2;
    else if (can) {
        if (strncmp(impl, "prg-", 4) == 0)
            rc = check_prg(e, impl);
        else if (strncmp(impl, "dpf-", 4) == 0)
            rc = check_dpf(e, impl);
        else {
            fprintf(stderr, "ct_check: %s: not a prg-* or dpf-* implementation\n", impl);
            rc = 2;
        }
    }
    mpce_engine_free(e);
    return rc;
#endif
}
