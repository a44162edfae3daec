/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine ntt forward|inverse|mul: the negacyclic NTT on files of
 * little-endian uint64 words, batch * L * N of them. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"
#include "tools/cli_io.h"
#include "tools/cli_verbose.h"

#define NTT_MAX_BATCH (UINT64_C(1) << 32)

#define NTT_SHAPE_HELP                                                             \
    "  --n N              ring degree, a power of two in [8, 131072]\n"            \
    "  --moduli Q,...     1 to 64 primes q < 2^61 with q = 1 mod 2N (decimal or\n" \
    "                     0x-hex)\n"                                               \
    "  --batch B          number of polynomials, 1 .. 2^32\n"

const char cli_usage_ntt_transform[] =
    "usage: mpcengine ntt forward|inverse --n N --moduli Q[,Q...] --batch B --in FILE --out FILE\n"
    "                 [--verbose] [--impl NAME] [--config FILE]\n"
    "  Negacyclic NTT (Lattigo v6 convention): forward takes natural order and\n"
    "  writes bit-reversed order; inverse undoes it, including the 1/N factor.\n"
    "  Files hold batch * L * N little-endian uint64 words: B polynomials of L rows\n"
    "  of N words, row l reduced mod the l-th modulus.\n" NTT_SHAPE_HELP
    "  --in FILE          input words (batch * L * N * 8 bytes; '-': stdin)\n"
    "  --out FILE         output words, same layout ('-': stdout)\n" CLI_OP_HELP CLI_COMMON_HELP;

const char cli_usage_ntt_mul[] =
    "usage: mpcengine ntt mul --n N --moduli Q[,Q...] --batch B --in FILE --in2 FILE --out FILE\n"
    "                 [--verbose] [--impl NAME] [--config FILE]\n"
    "  Pointwise product mod q of two batches in NTT form (layout as for forward).\n" NTT_SHAPE_HELP
    "  --in FILE          first operand (batch * L * N * 8 bytes; '-': stdin)\n"
    "  --in2 FILE         second operand, same size ('-': stdin, if --in is a file)\n"
    "  --out FILE         the product ('-': stdout)\n" CLI_OP_HELP CLI_COMMON_HELP;

enum ntt_op { NTT_FORWARD, NTT_INVERSE, NTT_MUL };

struct ntt_shape {
    size_t n, l, batch, bytes;
    uint64_t *moduli;
    char hint[96]; /* the expected file size, spelled out for messages */
};

static int parse_shape(const struct cli_cmd *cmd, struct ntt_shape *s)
{
    uint64_t n = 0, batch = 0;
    int rc = cli_u64(cmd, "n", MPCE_NTT_MIN_N, MPCE_NTT_MAX_N, &n);

    if (rc == 0 && (n & (n - 1)) != 0)
        rc = cli_fail(cmd, CLI_EXIT_USAGE, "--n: expected a power of two in [%u, %u], got '%s'",
                      MPCE_NTT_MIN_N, MPCE_NTT_MAX_N, cli_value(cmd, "n"));
    if (rc == 0)
        rc = cli_u64_list(cmd, "moduli", 2, MPCE_NTT_MAX_Q - 1, MPCE_NTT_MAX_MODULI, &s->moduli,
                          &s->l);
    if (rc == 0)
        rc = cli_u64(cmd, "batch", 1, NTT_MAX_BATCH, &batch);
    if (rc != 0)
        return rc;
    s->n = (size_t)n;
    s->batch = (size_t)batch;
    /* n * l * 8 is at most 2^17 * 64 * 8; only the batch can overflow. */
    if (s->batch > SIZE_MAX / (s->n * s->l * 8))
        return cli_fail(cmd, CLI_EXIT_USAGE, "--batch: %zu polynomials do not fit in memory",
                        s->batch);
    s->bytes = s->batch * s->l * s->n * 8;
    snprintf(s->hint, sizeof(s->hint), "%zu * %zu * %zu * 8 (batch * L * N * 8)", s->batch,
             s->l, s->n);
    return 0;
}

static const char *const ntt_op_names[] = {"ntt.forward", "ntt.inverse", "ntt.mul"};

static void ntt_verbose(const struct cli_cmd *cmd, mpce_ntt *ntt, enum ntt_op op,
                        const struct ntt_shape *s)
{
    const char *ran = NULL;
    if (mpce_ntt_resolve(ntt, cli_impl(cmd), ntt_op_names[op], s->batch, &ran) != MPCE_OK)
        return;
    const struct mpce_params params = {.struct_size = sizeof(params),
                                       .primitive = MPCE_PRIM_NTT,
                                       .ntt_n = s->n,
                                       .ntt_l = s->l,
                                       .ntt_q = s->moduli};
    cli_verbose_ran(cmd, ntt_op_names[op], &params, (uint64_t)s->batch * s->l * s->n, ran);
}

static mpce_status ntt_call(mpce_ntt *ntt, const char *impl, enum ntt_op op, uint64_t *a,
                            const uint64_t *b, size_t batch)
{
    switch (op) {
    case NTT_FORWARD:
        return mpce_ntt_forward(ntt, impl, a, a, batch);
    case NTT_INVERSE:
        return mpce_ntt_inverse(ntt, impl, a, a, batch);
    case NTT_MUL:
        return mpce_ntt_mul(ntt, impl, a, b, a, batch);
    }
    return MPCE_ERR_ARG;
}

/* opts: the shape options, in, out, and for mul in2. */
static int ntt_command(int argc, char **argv, enum ntt_op op, const char *prog,
                       const char *usage, struct cli_opt *opts)
{
    const struct cli_cmd cmd = {prog, usage, opts};
    struct ntt_shape s = {0};
    uint8_t *a = NULL, *b = NULL;
    size_t len;
    mpce_ntt *ntt = NULL;
    int rc = cli_parse(&cmd, argc, argv);

    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    rc = parse_shape(&cmd, &s);
    if (rc == 0)
        rc = cli_read(&cmd, "in", 8, s.bytes, s.hint, &a, &len);
    if (rc == 0 && op == NTT_MUL)
        rc = cli_read(&cmd, "in2", 8, s.bytes, s.hint, &b, &len);
    if (rc == 0)
        rc = cli_engine_start(&cmd);
    if (rc == 0) {
        size_t words = s.bytes / 8;
        mpce_status st = mpce_ntt_new(NULL, s.n, s.moduli, s.l, &ntt);
        cli_le64_decode(a, words);
        if (b != NULL)
            cli_le64_decode(b, words);
        if (st == MPCE_OK)
            st = ntt_call(ntt, cli_impl(&cmd), op, (uint64_t *)(void *)a,
                          (const uint64_t *)(void *)b, s.batch);
        if (st == MPCE_OK && cli_verbose(&cmd))
            ntt_verbose(&cmd, ntt, op, &s);
        if (ntt != NULL)
            mpce_ntt_free(ntt);
        if (st != MPCE_OK) {
            rc = cli_engine_fail(&cmd, st);
        } else {
            cli_le64_encode(a, words);
            const struct cli_output out = {"out", a, s.bytes, 0};
            rc = cli_write(&cmd, &out, 1);
        }
    }
    free(b);
    free(a);
    free(s.moduli);
    return rc;
}

#define NTT_OPTS                                                                   \
    {"n", CLI_ARG | CLI_REQUIRED, NULL}, {"moduli", CLI_ARG | CLI_REQUIRED, NULL},        \
        {"batch", CLI_ARG | CLI_REQUIRED, NULL},                                         \
        {"in", CLI_ARG | CLI_REQUIRED | CLI_IN, NULL},                                   \
        {"out", CLI_ARG | CLI_REQUIRED | CLI_OUT, NULL}

int cmd_ntt_forward(int argc, char **argv)
{
    struct cli_opt opts[] = {NTT_OPTS, CLI_OP_OPTS};

    return ntt_command(argc, argv, NTT_FORWARD, "mpcengine ntt forward", cli_usage_ntt_transform,
                       opts);
}

int cmd_ntt_inverse(int argc, char **argv)
{
    struct cli_opt opts[] = {NTT_OPTS, CLI_OP_OPTS};

    return ntt_command(argc, argv, NTT_INVERSE, "mpcengine ntt inverse", cli_usage_ntt_transform,
                       opts);
}

int cmd_ntt_mul(int argc, char **argv)
{
    struct cli_opt opts[] = {NTT_OPTS, {"in2", CLI_ARG | CLI_REQUIRED | CLI_IN, NULL},
                             CLI_OP_OPTS};

    return ntt_command(argc, argv, NTT_MUL, "mpcengine ntt mul", cli_usage_ntt_mul, opts);
}
