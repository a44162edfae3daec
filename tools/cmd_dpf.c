/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine dpf gen|eval|evalall: two-party DPF keys in format v1 and their
 * evaluation. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"
#include "tools/cli_io.h"
#include "tools/cli_secret.h"
#include "tools/cli_verbose.h"

/* Points given on the command line; a longer list belongs in evalall. */
#define DPF_MAX_POINTS 1048576u

const char cli_usage_dpf_gen[] =
    "usage: mpcengine dpf gen --bits N --alpha X --beta V --group bytes|u64\n"
    "                 [--prg-keys HEX,HEX|--prg-key-file FILE]\n"
    "                 [--seeds HEX,HEX|--seed-file FILE] --out0 FILE --out1 FILE\n"
    "                 [--verbose] [--impl NAME] [--config FILE]\n"
    "  Keys for the point function x -> V at x = X, one per party, format v1.\n"
    "  --bits N           domain bits, 1 .. 64\n"
    "  --alpha X          the point, 0 .. 2^N - 1 (decimal or 0x-hex)\n"
    "  --beta V           bytes: 32 hex digits (bit 0 of byte 12 is forced to 0);\n"
    "                     u64: an integer 0 .. 2^64-1\n"
    "  --group G          bytes (shares XOR) or u64 (shares add mod 2^64)\n"
    "  --prg-keys K,K     the PRG keys kL,kR, 32 hex digits each (default: the\n"
    "                     engine's fixed public keys)\n"
    "  --prg-key-file FILE\n"
    "                     the same text in FILE ('-': stdin)\n"
    "  --seeds S,S        the root seeds of party 0 and 1, 32 hex digits each\n"
    "                     (default: drawn from the system random generator)\n"
    "  --seed-file FILE   the seeds as --seeds takes them, as text in FILE ('-':\n"
    "                     stdin); surrounding whitespace is ignored in both files.\n"
    "                     Use the files for secrets: a value on the command line is\n"
    "                     visible in ps and kept in shell history\n"
    "  --out0 FILE        party 0's key ('-': stdout); a file is made readable by its\n"
    "                     owner only (mode 0600)\n"
    "  --out1 FILE        party 1's key ('-': stdout, if --out0 is a file), mode 0600\n"
    "                     likewise\n" CLI_OP_HELP
    CLI_COMMON_HELP;

const char cli_usage_dpf_eval[] =
    "usage: mpcengine dpf eval --key FILE --points X[,X...] --out FILE [--verbose]\n"
    "                 [--impl NAME] [--config FILE]\n"
    "  One party's share at each point, in order: 16 bytes per point for the\n"
    "  bytes group, 8 little-endian bytes for u64.\n"
    "  --key FILE         a key written by 'mpcengine dpf gen' ('-': stdin)\n"
    "  --points X,...     up to 1048576 points in 0 .. 2^N - 1 (decimal or 0x-hex)\n"
    "  --out FILE         the shares ('-': stdout)\n" CLI_OP_HELP CLI_COMMON_HELP;

const char cli_usage_dpf_evalall[] =
    "usage: mpcengine dpf evalall --key FILE --out FILE [--verbose] [--impl NAME]\n"
    "                 [--config FILE]\n"
    "  One party's share at every point 0 .. 2^N - 1 in order (N <= 32), 16 bytes\n"
    "  per point for the bytes group, 8 little-endian bytes for u64.\n"
    "  --key FILE         a key written by 'mpcengine dpf gen' ('-': stdin)\n"
    "  --out FILE         the shares ('-': stdout)\n" CLI_OP_HELP CLI_COMMON_HELP;

static uint64_t domain_max(unsigned bits)
{
    return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

static int parse_group(const struct cli_cmd *cmd, mpce_dpf_group *group)
{
    const char *g = cli_value(cmd, "group");

    if (strcmp(g, "bytes") == 0)
        *group = MPCE_DPF_BYTES;
    else if (strcmp(g, "u64") == 0)
        *group = MPCE_DPF_U64;
    else
        return cli_fail(cmd, CLI_EXIT_USAGE, "--group: expected 'bytes' or 'u64', got '%s'", g);
    return 0;
}

/* beta as mpce_dpf_gen takes it: a block, or a u64 as 8 LE bytes + 8 zeros. */
static int parse_beta(const struct cli_cmd *cmd, mpce_dpf_group group, uint8_t beta[16])
{
    uint64_t v = 0;
    int rc;

    if (group == MPCE_DPF_BYTES)
        return cli_hex(cmd, "beta", beta, 16);
    rc = cli_u64(cmd, "beta", 0, UINT64_MAX, &v);
    memset(beta, 0, 16);
    for (int i = 0; i < 8; i++)
        beta[i] = (uint8_t)(v >> (8 * i));
    return rc;
}

/* --verbose: what a call of op over `units` points ran, and why. */
static void dpf_verbose(const struct cli_cmd *cmd, mpce_dpf *dpf, const char *op, unsigned bits,
                        mpce_dpf_group group, uint64_t units)
{
    const char *ran = NULL;
    if (mpce_dpf_resolve(dpf, cli_impl(cmd), op, (size_t)units, &ran) != MPCE_OK)
        return;
    const struct mpce_params params = {.struct_size = sizeof(params),
                                       .primitive = MPCE_PRIM_DPF,
                                       .dpf_bits = bits,
                                       .dpf_group = group == MPCE_DPF_U64};
    cli_verbose_ran(cmd, op, &params, units, ran);
}

/* Serialize both keys and write them together: one without the other is
 * useless, so neither file appears unless both do. */
static int write_keys(const struct cli_cmd *cmd, unsigned bits, const mpce_dpf_key *k0,
                      const mpce_dpf_key *k1)
{
    size_t size = mpce_dpf_key_size(bits);
    uint8_t *buf = malloc(2 * size);
    mpce_status st;
    int rc;

    if (buf == NULL)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "out of memory");
    st = mpce_dpf_key_serialize(k0, buf, size, NULL);
    if (st == MPCE_OK)
        st = mpce_dpf_key_serialize(k1, buf + size, size, NULL);
    if (st != MPCE_OK) {
        rc = cli_engine_fail(cmd, st);
    } else {
        /* Each key is its party's secret: 0600, whatever the umask. */
        const struct cli_output outs[2] = {{"out0", buf, size, 1}, {"out1", buf + size, size, 1}};
        rc = cli_write(cmd, outs, 2);
    }
    cli_wipe(buf, 2 * size);
    free(buf);
    return rc;
}

/* What dpf gen hands the engine; the PRG keys and seeds may be NULL. */
struct gen_args {
    unsigned bits;
    mpce_dpf_group group;
    uint64_t alpha;
    const uint8_t *beta, *kl, *kr, *s0, *s1;
};

static int gen_keys(const struct cli_cmd *cmd, const struct gen_args *a)
{
    mpce_dpf *dpf = NULL;
    mpce_dpf_key *k0 = NULL, *k1 = NULL;
    mpce_status st = mpce_dpf_new(NULL, a->bits, a->group, a->kl, a->kr, &dpf);
    int rc;

    if (st == MPCE_OK)
        st = mpce_dpf_gen(dpf, cli_impl(cmd), a->alpha, a->beta, a->s0, a->s1, &k0, &k1);
    if (st == MPCE_OK && cli_verbose(cmd))
        dpf_verbose(cmd, dpf, "dpf.gen", a->bits, a->group, 1);
    rc = st == MPCE_OK ? write_keys(cmd, a->bits, k0, k1) : cli_engine_fail(cmd, st);
    if (k0 != NULL)
        mpce_dpf_key_free(k0);
    if (k1 != NULL)
        mpce_dpf_key_free(k1);
    if (dpf != NULL)
        mpce_dpf_free(dpf);
    return rc;
}

int cmd_dpf_gen(int argc, char **argv)
{
    struct cli_opt opts[] = {
        {"bits", CLI_ARG | CLI_REQUIRED, NULL},
        {"alpha", CLI_ARG | CLI_REQUIRED, NULL},
        {"beta", CLI_ARG | CLI_REQUIRED, NULL},
        {"group", CLI_ARG | CLI_REQUIRED, NULL},
        {"prg-keys", CLI_ARG, NULL},
        {"prg-key-file", CLI_ARG | CLI_IN, NULL},
        {"seeds", CLI_ARG, NULL},
        {"seed-file", CLI_ARG | CLI_IN, NULL},
        {"out0", CLI_ARG | CLI_REQUIRED | CLI_OUT, NULL},
        {"out1", CLI_ARG | CLI_REQUIRED | CLI_OUT, NULL},
        CLI_OP_OPTS,
    };
    const struct cli_cmd cmd = {"mpcengine dpf gen", cli_usage_dpf_gen, opts};
    uint64_t bits = 0, alpha = 0;
    mpce_dpf_group group = MPCE_DPF_BYTES;
    uint8_t beta[16], keys[32], seeds[32];
    const uint8_t *kl = NULL, *kr = NULL, *s0 = NULL, *s1 = NULL;
    size_t count;
    int rc = cli_parse(&cmd, argc, argv);

    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    rc = cli_u64(&cmd, "bits", 1, MPCE_DPF_MAX_BITS, &bits);
    if (rc == 0)
        rc = cli_u64(&cmd, "alpha", 0, domain_max((unsigned)bits), &alpha);
    if (rc == 0)
        rc = parse_group(&cmd, &group);
    if (rc == 0)
        rc = parse_beta(&cmd, group, beta);
    if (rc == 0)
        rc = cli_secret(&cmd, "prg-keys", "prg-key-file", 0);
    if (rc == 0)
        rc = cli_secret(&cmd, "seeds", "seed-file", 0);
    if (rc == 0 && cli_value(&cmd, "prg-keys") != NULL) {
        rc = cli_hex_list(&cmd, "prg-keys", 16, 2, 2, keys, &count);
        kl = keys;
        kr = keys + 16;
    }
    if (rc == 0 && cli_value(&cmd, "seeds") != NULL) {
        rc = cli_hex_list(&cmd, "seeds", 16, 2, 2, seeds, &count);
        s0 = seeds;
        s1 = seeds + 16;
    }
    if (rc == 0)
        rc = cli_engine_start(&cmd);
    if (rc == 0) {
        const struct gen_args a = {(unsigned)bits, group, alpha, beta, kl, kr, s0, s1};
        rc = gen_keys(&cmd, &a);
    }
    /* beta is the function's secret value, the others the keys' seeds. */
    cli_wipe(beta, sizeof(beta));
    cli_wipe(keys, sizeof(keys));
    cli_wipe(seeds, sizeof(seeds));
    return rc;
}

/* Read and parse --key: CLI_EXIT_USAGE if unreadable, CLI_EXIT_ENGINE if
 * malformed (the engine's message names the field). */
static int load_key(const struct cli_cmd *cmd, mpce_dpf_key **key)
{
    uint8_t *buf = NULL;
    size_t len = 0;

    /* A key share is as secret as a --key-file: the same warning. */
    cli_warn_if_readable(cmd, "key", cli_value(cmd, "key"));
    int rc = cli_read(cmd, "key", 1, 0, NULL, &buf, &len);
    if (rc == 0) {
        mpce_status st = mpce_dpf_key_parse(buf, len, key);
        if (st != MPCE_OK)
            rc = cli_engine_fail(cmd, st);
    }
    cli_wipe(buf, len);
    free(buf);
    return rc;
}

/* points == NULL: every point (evalall). */
static int dpf_evaluate(const struct cli_cmd *cmd, const mpce_dpf_key *key,
                        const uint64_t *points, size_t npoints, size_t out_len)
{
    mpce_dpf *dpf = NULL;
    uint8_t *out = malloc(out_len);
    mpce_status st;
    int rc;

    if (out == NULL)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "out of memory for %zu output bytes", out_len);
    rc = cli_engine_start(cmd);
    if (rc == 0) {
        st = mpce_dpf_new_for_key(NULL, key, &dpf);
        if (st == MPCE_OK && points != NULL)
            st = mpce_dpf_eval(dpf, cli_impl(cmd), key, points, npoints, out);
        else if (st == MPCE_OK)
            st = mpce_dpf_evalall(dpf, cli_impl(cmd), key, out, out_len);
        if (st == MPCE_OK && cli_verbose(cmd)) {
            const unsigned bits = mpce_dpf_key_bits(key);
            /* evalall's work is the whole domain (it is at most 2^32 here). */
            dpf_verbose(cmd, dpf, points != NULL ? "dpf.eval" : "dpf.evalall", bits,
                        mpce_dpf_key_group(key),
                        points != NULL ? (uint64_t)npoints : UINT64_C(1) << bits);
        }
        if (dpf != NULL)
            mpce_dpf_free(dpf);
        if (st != MPCE_OK) {
            rc = cli_engine_fail(cmd, st);
        } else {
            /* Secret: one party's share of the function's values. */
            const struct cli_output o = {"out", out, out_len, 1};
            rc = cli_write(cmd, &o, 1);
        }
    }
    free(out);
    return rc;
}

int cmd_dpf_eval(int argc, char **argv)
{
    struct cli_opt opts[] = {
        {"key", CLI_ARG | CLI_REQUIRED | CLI_IN, NULL},
        {"points", CLI_ARG | CLI_REQUIRED, NULL},
        {"out", CLI_ARG | CLI_REQUIRED | CLI_OUT, NULL},
        CLI_OP_OPTS,
    };
    const struct cli_cmd cmd = {"mpcengine dpf eval", cli_usage_dpf_eval, opts};
    mpce_dpf_key *key = NULL;
    uint64_t *points = NULL;
    size_t npoints = 0;
    int rc = cli_parse(&cmd, argc, argv);

    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    rc = load_key(&cmd, &key);
    if (rc == 0)
        rc = cli_u64_list(&cmd, "points", 0, domain_max(mpce_dpf_key_bits(key)), DPF_MAX_POINTS,
                          &points, &npoints);
    if (rc == 0)
        rc = dpf_evaluate(&cmd, key, points, npoints,
                          npoints * mpce_dpf_output_size(mpce_dpf_key_group(key)));
    free(points);
    if (key != NULL)
        mpce_dpf_key_free(key);
    return rc;
}

int cmd_dpf_evalall(int argc, char **argv)
{
    struct cli_opt opts[] = {
        {"key", CLI_ARG | CLI_REQUIRED | CLI_IN, NULL},
        {"out", CLI_ARG | CLI_REQUIRED | CLI_OUT, NULL},
        CLI_OP_OPTS,
    };
    const struct cli_cmd cmd = {"mpcengine dpf evalall", cli_usage_dpf_evalall, opts};
    mpce_dpf_key *key = NULL;
    int rc = cli_parse(&cmd, argc, argv);

    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    rc = load_key(&cmd, &key);
    if (rc == 0) {
        unsigned bits = mpce_dpf_key_bits(key);
        size_t size = mpce_dpf_output_size(mpce_dpf_key_group(key));
        if (bits > MPCE_DPF_MAX_EVALALL_BITS)
            rc = cli_fail(&cmd, CLI_EXIT_USAGE,
                          "--key: evalall takes keys of at most %u domain bits, this one has %u",
                          MPCE_DPF_MAX_EVALALL_BITS, bits);
        else if ((UINT64_C(1) << bits) > (uint64_t)(SIZE_MAX / size))
            rc = cli_fail(&cmd, CLI_EXIT_USAGE, "--key: 2^%u outputs do not fit in memory", bits);
        else
            rc = dpf_evaluate(&cmd, key, NULL, 0, ((size_t)1 << bits) * size);
    }
    if (key != NULL)
        mpce_dpf_key_free(key);
    return rc;
}
