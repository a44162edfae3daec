/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The command's option parser and value parsers (tools/cli_args.c):
 * cli_parse over an argument vector, then cli_u64, cli_u64_list, cli_hex
 * and cli_hex_list over what it accepted. An input is a header of 4 bytes
 * (the range and count limits the value parsers get) and then the
 * arguments, NUL-separated. Whatever a value parser accepts must lie in the
 * limits it was given, and each value parser must agree with a reference
 * written here without its code: the same inputs accepted and refused, and
 * what it accepts decoded to the same numbers (strtoull over text checked
 * against the grammar: decimal digits, or "0x"/"0X" and hex digits) and the
 * same bytes (strtoul over each pair of hex digits).
 */
#include "config.h"

#include <errno.h>
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

static const char hex_digits[] = "0123456789abcdefABCDEF";

/* The reference number parser: s[0..len) as decimal, or hex after "0x" or
 * "0X" with at least one digit; no sign, spaces or overflow. 0 or -1. */
static int ref_u64(const char *s, size_t len, uint64_t *out)
{
    char buf[80];
    int base = 10;
    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        len -= 2;
    }
    if (len == 0 || len >= sizeof(buf))
        return -1; /* past 20 digits without leading zeros (ref_u64_any): overflow */
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (strspn(buf, base == 16 ? hex_digits : "0123456789") != len)
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(buf, &end, base);
    if (errno == ERANGE || end != buf + len)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

/* The reference number parser for a value longer than ref_u64's buffer:
 * leading zeros stripped (they change nothing), then ref_u64. */
static int ref_u64_any(const char *s, size_t len, uint64_t *out)
{
    size_t skip = 0, pre = len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 2 : 0;
    while (pre + skip + 1 < len && s[pre + skip] == '0')
        skip++;
    if (skip == 0)
        return ref_u64(s, len, out);
    char *t = malloc(len - skip + 1);
    FUZZ_CHECK(t != NULL, "out of memory");
    memcpy(t, s, pre);
    memcpy(t + pre, s + pre + skip, len - pre - skip);
    int rc = ref_u64(t, len - skip, out);
    free(t);
    return rc;
}

/* The reference hex decoder: exactly 2*len hex digits into out. 0 or -1. */
static int ref_hex(const char *s, size_t slen, uint8_t *out, size_t len)
{
    if (slen != 2 * len)
        return -1;
    for (size_t i = 0; i < slen; i++)
        if (s[i] == '\0' || strchr(hex_digits, s[i]) == NULL)
            return -1;
    for (size_t i = 0; i < len; i++) {
        char pair[3] = {s[2 * i], s[2 * i + 1], '\0'};
        out[i] = (uint8_t)strtoul(pair, NULL, 16);
    }
    return 0;
}

/* Comma-separated items of s: the count, and item i's start and length. */
static size_t ref_items(const char *s, size_t i, const char **at, size_t *len)
{
    size_t n = 0;
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t l = comma ? (size_t)(comma - p) : strlen(p);
        if (n == i) {
            *at = p;
            *len = l;
        }
        n++;
        if (!comma)
            return n;
        p = comma + 1;
    }
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
        const uint64_t unset = UINT64_C(0x5a5a5a5a5a5a5a5a);
        uint64_t v = unset, rv = 0;
        const char *nv = cli_value(&cmd, "n");
        int ok = cli_u64(&cmd, "n", lo, hi, &v) == 0;
        if (nv == NULL) {
            FUZZ_CHECK(ok && v == unset, "absent --n: rc or value changed");
        } else {
            int rok = ref_u64_any(nv, strlen(nv), &rv) == 0 && rv >= lo && rv <= hi;
            FUZZ_CHECK(ok == rok, "--n '%s' in [%llu, %llu]: %s, the reference %s", nv,
                       (unsigned long long)lo, (unsigned long long)hi,
                       ok ? "accepted" : "refused", rok ? "accepts" : "refuses");
            FUZZ_CHECK(!ok || v == rv, "--n '%s' read as %llu, the reference %llu", nv,
                       (unsigned long long)v, (unsigned long long)rv);
            FUZZ_CHECK(ok || v == unset, "refused --n '%s' changed the value", nv);
        }

        const char *lv = cli_value(&cmd, "list");
        if (lv != NULL) {
            uint64_t *list = NULL;
            size_t count = 0;
            ok = cli_u64_list(&cmd, "list", lo, hi, max_count, &list, &count) == 0;
            const char *at = NULL;
            size_t alen = 0, n = ref_items(lv, 0, &at, &alen);
            int rok = n <= max_count;
            for (size_t i = 0; rok && i < n; i++) {
                ref_items(lv, i, &at, &alen);
                rok = ref_u64_any(at, alen, &rv) == 0 && rv >= lo && rv <= hi;
                FUZZ_CHECK(!rok || !ok || list[i] == rv, "--list '%s' item %zu read as %llu, "
                           "the reference %llu", lv, i, (unsigned long long)list[i],
                           (unsigned long long)rv);
            }
            FUZZ_CHECK(ok == rok, "--list '%s' (at most %zu in [%llu, %llu]): %s, the "
                       "reference %s", lv, max_count, (unsigned long long)lo,
                       (unsigned long long)hi, ok ? "accepted" : "refused",
                       rok ? "accepts" : "refuses");
            if (ok) {
                FUZZ_CHECK(count == n && count >= 1 && count <= max_count,
                           "%zu items, the reference %zu, at most %zu", count, n, max_count);
                for (size_t i = 0; i < count; i++)
                    FUZZ_CHECK(list[i] >= lo && list[i] <= hi, "item %zu out of range", i);
                free(list);
            }
        }

        uint8_t key[HEX_LEN], rkey[HEX_LEN];
        memset(key, 0x5a, sizeof(key));
        const char *kv = cli_value(&cmd, "key");
        ok = cli_hex(&cmd, "key", key, sizeof(key)) == 0;
        if (kv != NULL) {
            int rok = ref_hex(kv, strlen(kv), rkey, sizeof(rkey)) == 0;
            FUZZ_CHECK(ok == rok, "--key '%s': %s, the reference %s", kv,
                       ok ? "accepted" : "refused", rok ? "accepts" : "refuses");
            FUZZ_CHECK(!ok || memcmp(key, rkey, sizeof(key)) == 0,
                       "--key '%s' decoded unlike the reference", kv);
        } else {
            FUZZ_CHECK(ok, "absent --key refused");
        }

        uint8_t keys[MAX_HEX_COUNT * HEX_LEN], rkeys[MAX_HEX_COUNT * HEX_LEN];
        size_t nkeys = 0;
        size_t max_hex = max_count < MAX_HEX_COUNT ? max_count : MAX_HEX_COUNT;
        const char *ksv = cli_value(&cmd, "keys");
        if (ksv != NULL && min_hex <= max_hex) {
            ok = cli_hex_list(&cmd, "keys", HEX_LEN, min_hex, max_hex, keys, &nkeys) == 0;
            const char *at = NULL;
            size_t alen = 0, n = ref_items(ksv, 0, &at, &alen);
            int rok = n >= min_hex && n <= max_hex;
            for (size_t i = 0; rok && i < n; i++) {
                ref_items(ksv, i, &at, &alen);
                rok = ref_hex(at, alen, rkeys + i * HEX_LEN, HEX_LEN) == 0;
            }
            FUZZ_CHECK(ok == rok, "--keys '%s' (%zu to %zu): %s, the reference %s", ksv,
                       min_hex, max_hex, ok ? "accepted" : "refused",
                       rok ? "accepts" : "refuses");
            if (ok) {
                FUZZ_CHECK(nkeys == n && nkeys >= min_hex && nkeys <= max_hex,
                           "%zu hex items, the reference %zu, in [%zu, %zu]", nkeys, n,
                           min_hex, max_hex);
                FUZZ_CHECK(memcmp(keys, rkeys, n * HEX_LEN) == 0,
                           "--keys '%s' decoded unlike the reference", ksv);
            }
        }
        char buf[256];
        (void)cli_origin("in", buf, sizeof(buf));
    }
    free(text);
    return 0;
}
