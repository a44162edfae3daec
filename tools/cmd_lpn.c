/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine lpn: the Ferret LPN fold (d = 10) on files of 16-byte blocks. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"
#include "tools/cli_io.h"
#include "tools/cli_secret.h"
#include "tools/cli_verbose.h"

const char cli_usage_lpn[] =
    "usage: mpcengine lpn --seed HEX|--seed-file FILE --logk L --counter C --table FILE\n"
    "                 --in FILE --out FILE [--verbose] [--impl NAME] [--config FILE]\n"
    "  Ferret LPN fold, d = 10: out[o] = in[o] ^ the XOR of 10 table blocks whose\n"
    "  indices come from AES-128-CTR(seed) starting at block counter C. Prints the\n"
    "  number of stream blocks consumed (on stderr when --out is '-'); continue\n"
    "  with --counter C + that number.\n"
    "  --seed HEX         index-stream key, 32 hex digits\n"
    "  --seed-file FILE   the seed as text in FILE ('-': stdin), surrounding\n"
    "                     whitespace ignored; use it for a secret seed: a value on\n"
    "                     the command line is visible in ps and kept in shell history\n"
    "  --logk L           table size k = 2^L blocks, 1 <= L <= 30\n"
    "  --counter C        first block counter, 0 .. 2^64-1 (decimal or 0x-hex)\n"
    "  --table FILE       the table, exactly 2^L * 16 bytes ('-': stdin)\n"
    "  --in FILE          the blocks to fold into (size a non-zero multiple of 16;\n"
    "                     '-': stdin)\n"
    "  --out FILE         the folded blocks ('-': stdout)\n" CLI_OP_HELP CLI_COMMON_HELP;

int cmd_lpn(int argc, char **argv)
{
    struct cli_opt opts[] = {
        {"seed", CLI_ARG, NULL},
        {"seed-file", CLI_ARG | CLI_IN, NULL},
        {"logk", CLI_ARG | CLI_REQUIRED, NULL},
        {"counter", CLI_ARG | CLI_REQUIRED, NULL},
        {"table", CLI_ARG | CLI_REQUIRED | CLI_IN, NULL},
        {"in", CLI_ARG | CLI_REQUIRED | CLI_IN, NULL},
        {"out", CLI_ARG | CLI_REQUIRED | CLI_OUT, NULL},
        CLI_OP_OPTS,
    };
    const struct cli_cmd cmd = {"mpcengine lpn", cli_usage_lpn, opts};
    uint8_t seed[16], *table = NULL, *buf = NULL;
    uint64_t logk = 0, c0 = 0, consumed = 0;
    size_t table_len = 0, len = 0;
    char hint[48];
    int rc = cli_parse(&cmd, argc, argv);

    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    rc = cli_secret(&cmd, "seed", "seed-file", 1);
    if (rc == 0)
        rc = cli_hex(&cmd, "seed", seed, sizeof(seed));
    if (rc == 0)
        rc = cli_u64(&cmd, "logk", MPCE_LPN_MIN_LOGK, MPCE_LPN_MAX_LOGK, &logk);
    if (rc == 0)
        rc = cli_u64(&cmd, "counter", 0, UINT64_MAX, &c0);
    /* logk <= 30 keeps the shift defined; only a 32-bit size_t can overflow. */
    if (rc == 0 && ((size_t)1 << logk) > SIZE_MAX / MPCE_BLOCK_BYTES)
        rc = cli_fail(&cmd, CLI_EXIT_USAGE, "--logk: 2^%llu blocks do not fit in memory",
                      (unsigned long long)logk);
    if (rc == 0) {
        size_t k = (size_t)1 << logk;
        snprintf(hint, sizeof(hint), "2^%llu * 16", (unsigned long long)logk);
        rc = cli_read(&cmd, "table", MPCE_BLOCK_BYTES, k * MPCE_BLOCK_BYTES, hint, &table,
                      &table_len);
    }
    if (rc == 0)
        rc = cli_read(&cmd, "in", MPCE_BLOCK_BYTES, 0, NULL, &buf, &len);
    if (rc == 0)
        rc = cli_engine_start(&cmd);
    if (rc == 0) {
        mpce_lpn *lpn = NULL;
        mpce_status st = mpce_lpn_new(NULL, seed, (unsigned)logk, &lpn);
        if (st == MPCE_OK)
            st = mpce_lpn_fold(lpn, cli_impl(&cmd), c0, table, table_len / MPCE_BLOCK_BYTES, buf,
                               len / MPCE_BLOCK_BYTES, &consumed);
        const char *ran = NULL;
        if (st == MPCE_OK && cli_verbose(&cmd) &&
            mpce_lpn_resolve(lpn, cli_impl(&cmd), len / MPCE_BLOCK_BYTES, &ran) == MPCE_OK) {
            const struct mpce_params params = {.struct_size = sizeof(params),
                                               .primitive = MPCE_PRIM_LPN,
                                               .lpn_logk = (unsigned)logk};
            cli_verbose_ran(&cmd, "lpn.fold", &params, len / MPCE_BLOCK_BYTES, ran);
        }
        if (lpn != NULL)
            mpce_lpn_free(lpn);
        if (st != MPCE_OK) {
            rc = cli_engine_fail(&cmd, st);
        } else {
            /* Secret: folded under the seed's index stream. */
            const struct cli_output out = {"out", buf, len, 1};
            rc = cli_write(&cmd, &out, 1);
        }
    }
    /* The count is printed only once the output is in place, so a caller
     * that reads it can rely on the file; with the blocks on stdout it
     * goes to stderr, where it cannot be taken for one. */
    if (rc == 0)
        fprintf(cli_is_std(cli_value(&cmd, "out")) ? stderr : stdout, "%" PRIu64 "\n", consumed);
    cli_wipe(seed, sizeof(seed));
    free(buf);
    free(table);
    return rc;
}
