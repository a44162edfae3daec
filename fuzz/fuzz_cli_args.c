/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The command's option parser and value parsers (tools/cli_args.c):
 * cli_parse over an argument vector, then cli_u64, cli_u64_list, cli_hex
 * and cli_hex_list over what it accepted. An input is a header of 4 bytes
 * (the range and count limits the value parsers get) and then the
 * arguments, NUL-separated. Whatever a value parser accepts must lie in the
 * limits it was given.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "tools/cli.h"
#include "tools/cli_args.h"

#define MAX_ARGS 24
#define HEX_LEN 16
#define MAX_HEX_COUNT 8

static const struct cli_opt template_opts[] = {
    {"n", CLI_ARG, NULL},
    {"list", CLI_ARG, NULL},
    {"key", CLI_ARG, NULL},
    {"keys", CLI_ARG, NULL},
    {"in", CLI_ARG | CLI_IN, NULL},
    {"points", CLI_ARG | CLI_IN, NULL},
    {"out", CLI_ARG | CLI_OUT, NULL},
    {"report", CLI_ARG | CLI_OUT | CLI_TEXT, NULL},
    {"quiet", 0, NULL},
    CLI_OP_OPTS,
};

/* Limits from a header byte: small, edge and full-range values. */
static uint64_t limit(uint8_t b)
{
    static const uint64_t edges[] = {0, 1, 2, 15, 16, 255, 4096, UINT64_C(1) << 32,
                                     UINT64_MAX - 1, UINT64_MAX};
    return b < 10 ? edges[b] : (uint64_t)b * 7;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    uint64_t lo = limit(data[0] % 32), hi = limit(data[1] % 32);
    size_t max_count = (size_t)(data[2] % 12);
    size_t min_hex = (size_t)(data[3] % 4);
    char *text = fuzz_strndup(data + 4, size - 4);

    char *argv[MAX_ARGS + 1];
    int argc = 0;
    argv[argc++] = "fuzz";
    for (char *p = text, *end = text + (size - 4); p <= end && argc < MAX_ARGS;
         p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;

    struct cli_opt opts[sizeof(template_opts) / sizeof(template_opts[0])];
    memcpy(opts, template_opts, sizeof(opts));
    struct cli_cmd cmd = {"mpcengine fuzz", "usage: mpcengine fuzz [options]\n", opts};
    int rc = cli_parse(&cmd, argc, argv);
    FUZZ_CHECK(rc == CLI_PARSED || rc == CLI_HELP_SHOWN || rc == CLI_EXIT_USAGE, "rc %d", rc);
    if (rc == CLI_PARSED) {
        for (const struct cli_opt *o = opts; o->name; o++)
            FUZZ_CHECK(o->value == NULL || (o->flags & CLI_ARG) || o->value[0] == '\0',
                       "flag --%s with a value", o->name);
        uint64_t v = UINT64_C(0x5a5a5a5a5a5a5a5a);
        if (cli_u64(&cmd, "n", lo, hi, &v) == 0 && cli_value(&cmd, "n") != NULL)
            FUZZ_CHECK(v >= lo && v <= hi, "--n %s read as %llu outside [%llu, %llu]",
                       cli_value(&cmd, "n"), (unsigned long long)v, (unsigned long long)lo,
                       (unsigned long long)hi);
        uint64_t *list = NULL;
        size_t count = 0;
        if (cli_value(&cmd, "list") != NULL &&
            cli_u64_list(&cmd, "list", lo, hi, max_count, &list, &count) == 0) {
            FUZZ_CHECK(count >= 1 && count <= max_count, "%zu items, at most %zu", count,
                       max_count);
            for (size_t i = 0; i < count; i++)
                FUZZ_CHECK(list[i] >= lo && list[i] <= hi, "item %zu out of range", i);
            free(list);
        }
        uint8_t key[HEX_LEN];
        (void)cli_hex(&cmd, "key", key, sizeof(key));
        uint8_t keys[MAX_HEX_COUNT * HEX_LEN];
        size_t nkeys = 0;
        size_t max_hex = max_count < MAX_HEX_COUNT ? max_count : MAX_HEX_COUNT;
        if (cli_value(&cmd, "keys") != NULL && min_hex <= max_hex &&
            cli_hex_list(&cmd, "keys", HEX_LEN, min_hex, max_hex, keys, &nkeys) == 0)
            FUZZ_CHECK(nkeys >= min_hex && nkeys <= max_hex, "%zu hex items outside [%zu, %zu]",
                       nkeys, min_hex, max_hex);
        char buf[256];
        (void)cli_origin("in", buf, sizeof(buf));
    }
    free(text);
    return 0;
}
