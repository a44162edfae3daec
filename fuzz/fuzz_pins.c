/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pins file reader (engine/selector/pins_read.c, pins_scan.c) and the
 * value checks it shares with the writer (pins_text.c). The first byte of an
 * input says what the rest is:
 *   bit 0 clear: a pins file as it is, so the seal check itself is fuzzed;
 *   bit 0 set:   a pins file body, to which the harness appends the seal
 *                line a writer would, so the fuzzer gets past the seal to
 *                the parser;
 *   bit 1 set:   also a string for every pins_text.c check.
 * A file that reads back is written, read and written again: the two
 * written files must be identical (what one writes the other reads).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/selector/pins.h"
#include "engine/selector/pins_text.h"
#include "fuzz/fuzz.h"

static const char *(*const checks[])(const char *) = {
    mpce_pins_check_date,          mpce_pins_check_effort, mpce_pins_check_sha256,
    mpce_pins_check_name,          mpce_pins_check_optional_name,
    mpce_pins_check_status,        mpce_pins_check_policy, mpce_pins_check_row_key,
};

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    FUZZ_CHECK(f != NULL, "cannot open %s", path);
    size_t cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    FUZZ_CHECK(buf != NULL, "out of memory");
    *len = 0;
    size_t got;
    while ((got = fread(buf + *len, 1, cap - *len, f)) > 0) {
        *len += got;
        if (*len == cap) {
            buf = realloc(buf, cap *= 2);
            FUZZ_CHECK(buf != NULL, "out of memory");
        }
    }
    fclose(f);
    return buf;
}

static void round_trip(const struct mpce_pins *p)
{
    char why[1024];
    char path2[4096], path3[4096];
    snprintf(path2, sizeof(path2), "%s/pins2.ini", fuzz_temp_dir());
    snprintf(path3, sizeof(path3), "%s/pins3.ini", fuzz_temp_dir());
    /* The writer may refuse what it would never write (it checks too); it
     * must not refuse what it could read, bar the header it always needs. */
    if (mpce_pins_write(path2, p, why, sizeof(why)) != 0)
        FUZZ_CHECK(0, "a file that reads back is not written again: %s", why);
    struct mpce_pins q;
    enum mpce_pins_read_result r = mpce_pins_read(path2, &q, why, sizeof(why));
    FUZZ_CHECK(r == MPCE_PINS_READ_OK, "the writer's file does not read back: %s", why);
    FUZZ_CHECK(q.n_rows == p->n_rows && q.n_modules == p->n_modules &&
                   q.n_blacklist == p->n_blacklist,
               "rows, modules or blacklist entries changed on the way");
    FUZZ_CHECK(mpce_pins_write(path3, &q, why, sizeof(why)) == 0, "second write: %s", why);
    mpce_pins_free(&q);
    size_t l2, l3;
    uint8_t *b2 = slurp(path2, &l2), *b3 = slurp(path3, &l3);
    FUZZ_CHECK(l2 == l3 && memcmp(b2, b3, l2) == 0, "a written file changes when re-read");
    free(b2);
    free(b3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    data++, size--;

    if (mode & 2) {
        char *s = fuzz_strndup(data, size);
        for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
            const char *what = checks[i](s);
            FUZZ_CHECK(what == NULL || what[0] != '\0', "check %zu said nothing", i);
        }
        (void)mpce_pins_is_hex(s, strlen(s));
        free(s);
    }

    char *path;
    if (mode & 1) {
        char hex[65];
        FUZZ_CHECK(mpce_pins_seal_hex(data, size, hex) == 0, "no digest");
        size_t len = size + PINS_SEAL_LINE_LEN;
        char *text = malloc(len + 1);
        FUZZ_CHECK(text != NULL, "out of memory");
        memcpy(text, data, size);
        snprintf(text + size, len + 1 - size, "%s%s\"\n", PINS_SEAL_PREFIX, hex);
        path = fuzz_write(fuzz_temp_dir(), "pins.ini", text, len);
        free(text);
    } else {
        path = fuzz_write(fuzz_temp_dir(), "pins.ini", data, size);
    }

    struct mpce_pins p;
    char why[1024] = "";
    enum mpce_pins_read_result r = mpce_pins_read(path, &p, why, sizeof(why));
    if (r == MPCE_PINS_READ_OK) {
        FUZZ_CHECK(p.format >= MPCE_PINS_FORMAT_OLDEST && p.format <= MPCE_PINS_FORMAT,
                   "format %u read as OK", p.format);
        for (size_t i = 0; i < p.n_rows; i++)
            FUZZ_CHECK(mpce_pins_find_row(&p, p.rows[i].key) == &p.rows[i],
                       "row %zu not found by its own key (two rows, one key?)", i);
        round_trip(&p);
        mpce_pins_free(&p);
    } else {
        FUZZ_CHECK(r != MPCE_PINS_READ_MISSING, "the file just written is missing");
        /* Nothing fails here (memory, I/O): READ_ERROR means "try again",
         * which a file that always reads so would be told forever. */
        FUZZ_CHECK(r != MPCE_PINS_READ_ERROR, "a transient error without a fault: %s", why);
        FUZZ_CHECK(why[0] != '\0', "refused without a reason");
        /* The reader zeroes what it refuses: freeing it again is harmless. */
        mpce_pins_free(&p);
    }
    free(path);
    return 0;
}
