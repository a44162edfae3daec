/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Constant time of the VAES kernels, checked where valgrind cannot run
 * VAES: their shared body (plugins/aesni/aes_vaes_body.h) compiled on a
 * model register of 2 and of 4 AES-NI blocks (model.h), run with the AES
 * keys (expanded here by the module's own aesni_sched_init), the blocks,
 * the seeds, the DPF parents, nodes and correction words marked undefined.
 * Under valgrind memcheck any branch or address that depends on them is
 * reported (tests/check_ct.sh). Public by design and left defined: lengths,
 * counters, key indices and a point walk's direction bits.
 *
 * Each output is checked against the AES-NI kernel (aesni_kernel_ni) on
 * the same inputs, so that the model computes what the VAES kernels do;
 * lengths 0 to 70 cover every tail of both widths' 8-register batches.
 *
 *   ct_vaes          the check
 *   ct_vaes leak     a branch on a marked block, which memcheck must report
 *                    (or the marking does nothing and the check proves nothing)
 *
 * Exit: 0 done (valgrind's --error-exitcode says whether it was clean),
 * 2 the model disagrees with AES-NI, 77 valgrind/memcheck.h was missing at
 * build time or the CPU lacks AES-NI.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plugins/aesni/aesni.h"

#ifdef HAVE_VALGRIND_MEMCHECK_H
#include <valgrind/memcheck.h>
#define SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))

extern const struct aesni_aes_kernel ct_vaes_model2, ct_vaes_model4;

#define MAX_N 70
#define MAX_M 3

static _Alignas(64) struct aesni_sched secret_ks, public_ks;
static uint8_t keys[MAX_M * 16], in[MAX_N * 16], seeds[MAX_N * 16], cw[MAX_N * 16];
static uint8_t dir[MAX_N], cw2[2][16];
static uint8_t out[2 * MAX_M * MAX_N * 16], want[2 * MAX_M * MAX_N * 16];

static uint64_t rng = 0x9e3779b97f4a7c15u;

static void fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        p[i] = (uint8_t)rng;
    }
}

static int agree(const struct aesni_aes_kernel *k, const char *op, size_t n, size_t bytes)
{
    PUBLIC(out, bytes);
    if (memcmp(out, want, bytes) == 0)
        return 0;
    fprintf(stderr, "ct_vaes: %s %s n=%zu differs from the AES-NI kernel's: the model is not "
            "the VAES kernels' function\n", k->name, op, n);
    return 1;
}

/* The schedules of m keys: public, and from keys marked secret (key
 * expansion and the lane-laid tables are checked too). */
static void schedules(size_t m)
{
    aesni_sched_init(&public_ks, keys, m);
    SECRET(keys, sizeof(keys));
    aesni_sched_init(&secret_ks, keys, m);
    PUBLIC(keys, sizeof(keys));
}

/* One kernel's ops at length n with m keys, secrets marked; 0 when all
 * agree. The DPF ops use the two keys kL, kR: only with m = 2. */
static int run(const struct aesni_aes_kernel *k, size_t n, size_t m)
{
    const struct aesni_aes_kernel *ref = &aesni_kernel_ni;
    int bad = 0;
    for (size_t j = 0; j < m; j++) {
        ref->ecb(&public_ks, j, in, want, n);
        SECRET(in, sizeof(in));
        k->ecb(&secret_ks, j, in, out, n);
        PUBLIC(in, sizeof(in));
        bad |= agree(k, "ecb", n, 16 * n);
        ref->ctr(&public_ks, j, UINT64_MAX - 2, want, n); /* the counter wraps */
        k->ctr(&secret_ks, j, UINT64_MAX - 2, out, n);
        bad |= agree(k, "ctr", n, 16 * n);
    }
    ref->mmo(&public_ks, seeds, want, n);
    SECRET(seeds, sizeof(seeds));
    k->mmo(&secret_ks, seeds, out, n);
    PUBLIC(seeds, sizeof(seeds));
    bad |= agree(k, "mmo", n, 16 * m * n);
    if (m != 2)
        return bad;

    ref->dpf_expand(&public_ks, seeds, want, n, (const uint8_t(*)[16])cw2);
    SECRET(seeds, sizeof(seeds));
    SECRET(cw2, sizeof(cw2));
    k->dpf_expand(&secret_ks, seeds, out, n, (const uint8_t(*)[16])cw2);
    PUBLIC(seeds, sizeof(seeds));
    PUBLIC(cw2, sizeof(cw2));
    bad |= agree(k, "dpf_expand", n, 32 * n);

    memcpy(want, seeds, 16 * n);
    ref->dpf_step(&public_ks, want, dir, cw, n);
    memcpy(out, seeds, 16 * n);
    SECRET(out, 16 * n);
    SECRET(cw, sizeof(cw));
    k->dpf_step(&secret_ks, out, dir, cw, n);
    PUBLIC(cw, sizeof(cw));
    bad |= agree(k, "dpf_step", n, 16 * n);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "leak") == 0) {
        fill(in, 16);
        SECRET(in, 16);
        volatile int taken = 0;
        if (in[0] & 1) /* the leak memcheck must see */
            taken = 1;
        PUBLIC(in, 16);
        printf("ct_vaes leak: branched on a marked block (%d)\n", taken);
        return 0;
    }
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("aes")) {
        printf("skipped: this CPU has no AES-NI, on which the model runs\n");
        return 77;
    }
    fill(keys, sizeof(keys));
    fill(in, sizeof(in));
    fill(seeds, sizeof(seeds));
    fill(cw, sizeof(cw));
    fill(&cw2[0][0], sizeof(cw2));
    fill(dir, sizeof(dir));
    const struct aesni_aes_kernel *models[] = {&ct_vaes_model2, &ct_vaes_model4};
    int bad = 0;
    /* m = 1, 2 and 3: MMO's one-key, pair and general layouts. */
    for (size_t m = 1; m <= MAX_M; m++) {
        schedules(m);
        for (size_t k = 0; k < 2; k++)
            for (size_t n = 0; n <= MAX_N; n++)
                bad |= run(models[k], n, m);
    }
    if (bad)
        return 2;
    printf("ct_vaes: the VAES body at 2 and 4 blocks a register agrees with AES-NI on lengths "
           "0 to %d (ecb, ctr and mmo with 1, 2 and 3 keys; dpf_expand, dpf_step)\n", MAX_N);
    return 0;
}
#else
int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("skipped: valgrind/memcheck.h was not found at build time (Debian: valgrind)\n");
    return 77;
}
#endif
