/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The census file (engine/selector/census.c), in a state directory the user
 * may edit: read as the tune reads it. Every entry kept names a real row
 * (what a damaged file loses is counts, never a tune misdirected), and the
 * entries, written back one "KEY CALLS" line each as the census writes
 * them, read back as the same entries.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/selector/selector.h"
#include "fuzz/fuzz.h"

#define CENSUS_NAME "census.txt"

static void read_back(struct mpce_census_entry **out, size_t *n)
{
    FUZZ_CHECK(mpce_census_read(fuzz_temp_dir(), out, n) == 0, "a census file did not read");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    free(fuzz_write(fuzz_temp_dir(), CENSUS_NAME, data, size));
    struct mpce_census_entry *e;
    size_t n;
    read_back(&e, &n);
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    FUZZ_CHECK(n <= lines + size / 254, "%zu entries from %zu lines", n, lines);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    FUZZ_CHECK(out != NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        enum mpce_op_id op;
        unsigned variant, size_class;
        FUZZ_CHECK(mpce_row_parse(e[i].key, &op, &variant, &size_class) == 0,
                   "entry %zu names no row: %s", i, e[i].key);
        fprintf(out, "%s %llu\n", e[i].key, e[i].calls);
    }
    FUZZ_CHECK(fclose(out) == 0, "out of memory");
    free(fuzz_write(fuzz_temp_dir(), CENSUS_NAME, text, len));
    free(text);
    struct mpce_census_entry *again;
    size_t m;
    read_back(&again, &m);
    FUZZ_CHECK(m == n, "%zu entries written, %zu read back", n, m);
    for (size_t i = 0; i < n && i < m; i++)
        FUZZ_CHECK(strcmp(e[i].key, again[i].key) == 0 && e[i].calls == again[i].calls,
                   "entry %zu changed on the way", i);
    free(e);
    free(again);
    return 0;
}
