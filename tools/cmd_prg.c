/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine prg ecb|mmo|ctr: the AES-128 PRG on files of 16-byte blocks. */
#include "config.h"

#include <stdlib.h>

#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"
#include "tools/cli_io.h"
#include "tools/cli_secret.h"
#include "tools/cli_verbose.h"

/* 16 GiB of output: far beyond a demonstration, short of size_t overflow. */
#define CTR_MAX_BLOCKS (UINT64_C(1) << 30)

/* Said once for every command that takes a key: why the file form exists. */
#define KEY_FILE_HELP                                                                   \
    "  --key-file FILE    the key as text in FILE ('-': stdin), surrounding\n"          \
    "                     whitespace ignored; use it for secret keys: a value on the\n" \
    "                     command line is visible in ps and kept in shell history\n"

const char cli_usage_prg_ecb[] =
    "usage: mpcengine prg ecb --key HEX|--key-file FILE --in FILE --out FILE [--verbose]\n"
    "                 [--impl NAME] [--config FILE]\n"
    "  Encrypt every 16-byte block of --in with AES-128 under the key.\n"
    "  --key HEX          the key, 32 hex digits\n" KEY_FILE_HELP
    "  --in FILE          input blocks (size a non-zero multiple of 16; '-': stdin)\n"
    "  --out FILE         output blocks, as many as in --in ('-': stdout)\n" CLI_OP_HELP
    CLI_COMMON_HELP;

const char cli_usage_prg_mmo[] =
    "usage: mpcengine prg mmo --keys HEX[,HEX...]|--key-file FILE --in FILE --out FILE\n"
    "                 [--verbose] [--impl NAME] [--config FILE]\n"
    "  Matyas-Meyer-Oseas: out[i*m+j] = AES_{key j}(in[i]) ^ in[i] for m keys.\n"
    "  --keys HEX,...     1 to 8 keys of 32 hex digits, comma-separated\n"
    "  --key-file FILE    the keys as --keys takes them, as text in FILE ('-':\n"
    "                     stdin), surrounding whitespace ignored; use it for secret\n"
    "                     keys: a value on the command line is visible in ps and kept\n"
    "                     in shell history\n"
    "  --in FILE          seed blocks (size a non-zero multiple of 16; '-': stdin)\n"
    "  --out FILE         m output blocks per seed ('-': stdout)\n" CLI_OP_HELP CLI_COMMON_HELP;

const char cli_usage_prg_ctr[] =
    "usage: mpcengine prg ctr --key HEX|--key-file FILE --counter N --blocks N --out FILE\n"
    "                 [--verbose] [--impl NAME] [--config FILE]\n"
    "  Counter mode: out[i] = AES_key(LE64(N + i mod 2^64) || 8 zero bytes).\n"
    "  --key HEX          the key, 32 hex digits\n" KEY_FILE_HELP
    "  --counter N        first counter, 0 .. 2^64-1 (decimal or 0x-hex)\n"
    "  --blocks N         number of output blocks, 1 .. 2^30\n"
    "  --out FILE         the output blocks ('-': stdout)\n" CLI_OP_HELP CLI_COMMON_HELP;

enum prg_op { PRG_ECB, PRG_MMO, PRG_CTR };

struct prg_job {
    enum prg_op op;
    const uint8_t *keys;
    size_t nkeys;
    const uint8_t *in;
    uint64_t c0;
    size_t n;     /* input blocks (ecb, mmo) or output blocks (ctr) */
    uint8_t *out; /* n * nkeys blocks for mmo, n otherwise */
    size_t out_len;
};

/* The three commands differ only in their inputs: make the context, run
 * the op, write `out` (out_len bytes) to --out. */
static const char *const prg_op_names[] = {"prg.ecb", "prg.mmo", "prg.ctr"};

static int prg_run(const struct cli_cmd *cmd, const struct prg_job *job)
{
    mpce_prg *prg = NULL;
    mpce_status st;
    int rc = cli_engine_start(cmd);

    if (rc != 0)
        return rc;
    st = mpce_prg_new(NULL, job->keys, job->nkeys, &prg);
    if (st == MPCE_OK) {
        switch (job->op) {
        case PRG_ECB:
            st = mpce_prg_ecb(prg, cli_impl(cmd), 0, job->in, job->out, job->n);
            break;
        case PRG_MMO:
            st = mpce_prg_mmo(prg, cli_impl(cmd), job->in, job->out, job->n);
            break;
        case PRG_CTR:
            st = mpce_prg_ctr(prg, cli_impl(cmd), 0, job->c0, job->out, job->n);
            break;
        }
    }
    const char *ran = NULL;
    if (st == MPCE_OK && cli_verbose(cmd) &&
        mpce_prg_resolve(prg, cli_impl(cmd), prg_op_names[job->op], job->n, &ran) == MPCE_OK) {
        const struct mpce_params params = {.struct_size = sizeof(params),
                                           .primitive = MPCE_PRIM_PRG,
                                           .prg_keys = job->nkeys};
        /* MMO's work is every key on every seed. */
        cli_verbose_ran(cmd, prg_op_names[job->op], &params,
                        (uint64_t)job->n * (job->op == PRG_MMO ? job->nkeys : 1), ran);
    }
    if (prg != NULL)
        mpce_prg_free(prg);
    if (st != MPCE_OK)
        return cli_engine_fail(cmd, st);
    /* Secret: a pad under the key is worth what the key is. */
    const struct cli_output out = {"out", job->out, job->out_len, 1};
    return cli_write(cmd, &out, 1);
}

int cmd_prg_ecb(int argc, char **argv)
{
    struct cli_opt opts[] = {
        {"key", CLI_ARG, NULL},
        {"key-file", CLI_ARG | CLI_IN, NULL},
        {"in", CLI_ARG | CLI_REQUIRED | CLI_IN, NULL},
        {"out", CLI_ARG | CLI_REQUIRED | CLI_OUT, NULL},
        CLI_OP_OPTS,
    };
    const struct cli_cmd cmd = {"mpcengine prg ecb", cli_usage_prg_ecb, opts};
    uint8_t key[16], *buf = NULL;
    size_t len = 0;
    int rc = cli_parse(&cmd, argc, argv);

    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    rc = cli_secret(&cmd, "key", "key-file", 1);
    if (rc == 0)
        rc = cli_hex(&cmd, "key", key, sizeof(key));
    if (rc == 0)
        rc = cli_read(&cmd, "in", MPCE_BLOCK_BYTES, 0, NULL, &buf, &len);
    if (rc == 0) {
        /* In place: the API allows in == out and the input is not needed after. */
        const struct prg_job job = {PRG_ECB, key, 1, buf, 0, len / MPCE_BLOCK_BYTES, buf, len};
        rc = prg_run(&cmd, &job);
    }
    cli_wipe(key, sizeof(key));
    free(buf);
    return rc;
}

int cmd_prg_mmo(int argc, char **argv)
{
    struct cli_opt opts[] = {
        {"keys", CLI_ARG, NULL},
        {"key-file", CLI_ARG | CLI_IN, NULL},
        {"in", CLI_ARG | CLI_REQUIRED | CLI_IN, NULL},
        {"out", CLI_ARG | CLI_REQUIRED | CLI_OUT, NULL},
        CLI_OP_OPTS,
    };
    const struct cli_cmd cmd = {"mpcengine prg mmo", cli_usage_prg_mmo, opts};
    uint8_t keys[MPCE_PRG_MAX_KEYS * 16], *buf = NULL, *out = NULL;
    size_t nkeys = 0, len = 0;
    int rc = cli_parse(&cmd, argc, argv);

    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    rc = cli_secret(&cmd, "keys", "key-file", 1);
    if (rc == 0)
        rc = cli_hex_list(&cmd, "keys", 16, 1, MPCE_PRG_MAX_KEYS, keys, &nkeys);
    if (rc == 0)
        rc = cli_read(&cmd, "in", MPCE_BLOCK_BYTES, 0, NULL, &buf, &len);
    if (rc == 0 && len > SIZE_MAX / nkeys)
        rc = cli_fail(&cmd, CLI_EXIT_USAGE, "--in: too large for %zu keys", nkeys);
    if (rc == 0 && (out = malloc(len * nkeys)) == NULL)
        rc = cli_fail(&cmd, CLI_EXIT_ENGINE, "out of memory for %zu output bytes", len * nkeys);
    if (rc == 0) {
        const struct prg_job job = {PRG_MMO, keys, nkeys, buf, 0, len / MPCE_BLOCK_BYTES,
                                    out, len * nkeys};
        rc = prg_run(&cmd, &job);
    }
    cli_wipe(keys, sizeof(keys));
    free(out);
    free(buf);
    return rc;
}

int cmd_prg_ctr(int argc, char **argv)
{
    struct cli_opt opts[] = {
        {"key", CLI_ARG, NULL},
        {"key-file", CLI_ARG | CLI_IN, NULL},
        {"counter", CLI_ARG | CLI_REQUIRED, NULL},
        {"blocks", CLI_ARG | CLI_REQUIRED, NULL},
        {"out", CLI_ARG | CLI_REQUIRED | CLI_OUT, NULL},
        CLI_OP_OPTS,
    };
    const struct cli_cmd cmd = {"mpcengine prg ctr", cli_usage_prg_ctr, opts};
    uint8_t key[16], *out = NULL;
    uint64_t c0 = 0, n = 0;
    int rc = cli_parse(&cmd, argc, argv);

    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    rc = cli_secret(&cmd, "key", "key-file", 1);
    if (rc == 0)
        rc = cli_hex(&cmd, "key", key, sizeof(key));
    if (rc == 0)
        rc = cli_u64(&cmd, "counter", 0, UINT64_MAX, &c0);
    if (rc == 0)
        rc = cli_u64(&cmd, "blocks", 1, CTR_MAX_BLOCKS, &n);
    if (rc == 0 && (out = malloc((size_t)n * MPCE_BLOCK_BYTES)) == NULL)
        rc = cli_fail(&cmd, CLI_EXIT_ENGINE, "out of memory for %llu blocks",
                      (unsigned long long)n);
    if (rc == 0) {
        const struct prg_job job = {PRG_CTR, key, 1, NULL, c0, (size_t)n,
                                    out, (size_t)n * MPCE_BLOCK_BYTES};
        rc = prg_run(&cmd, &job);
    }
    cli_wipe(key, sizeof(key));
    free(out);
    return rc;
}
