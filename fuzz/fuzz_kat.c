/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The known-answer vector parser (engine/verify/kat.c): the text of a
 * vector file, then every field of every record through each accessor. An
 * accessor that accepts a value must have read exactly what the format
 * (tests/vectors/README.md) allows: digits for a number, lowercase hex
 * pairs, numbers separated by single spaces.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/verify/kat.h"
#include "fuzz/fuzz.h"

static int all_digits(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* The decimal value of s[0..n), which is all digits, if it fits. */
static int decimal(const char *s, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

static void check_field(const struct mpce_kat_record *rec, const char *name)
{
    /* A name given twice: the accessors read the first. */
    const char *value = mpce_kat_get(rec, name);
    FUZZ_CHECK(value != NULL, "field '%s' not found", name);
    uint64_t v;
    uint64_t ref;
    size_t vlen = strlen(value);
    if (mpce_kat_u64(rec, name, &v) == 0) {
        FUZZ_CHECK(all_digits(value, vlen), "'%s' read as the number %" PRIu64, value, v);
        FUZZ_CHECK(decimal(value, vlen, &ref) == 0 && ref == v, "'%s' read as %" PRIu64,
                   value, v);
    } else {
        FUZZ_CHECK(!all_digits(value, vlen) || decimal(value, vlen, &ref) != 0,
                   "the number '%s' refused", value);
    }

    uint8_t *bytes = NULL;
    size_t len = 0;
    if (mpce_kat_hex(rec, name, &bytes, &len) == 0) {
        FUZZ_CHECK(bytes != NULL && len * 2 == vlen, "'%s' read as %zu bytes", value, len);
        for (size_t i = 0; i < len; i++) {
            char two[3];
            snprintf(two, sizeof(two), "%02x", bytes[i]);
            FUZZ_CHECK(memcmp(two, value + 2 * i, 2) == 0, "'%s': byte %zu is %s", value, i,
                       two);
        }
        free(bytes);
    }

    uint64_t *list = NULL;
    size_t count = 0;
    if (mpce_kat_u64_list(rec, name, &list, &count) == 0) {
        const char *p = value;
        for (size_t i = 0; i < count; i++) {
            size_t n = strcspn(p, " ");
            FUZZ_CHECK(all_digits(p, n) && decimal(p, n, &ref) == 0 && ref == list[i],
                       "'%s': item %zu read as %" PRIu64, value, i, list[i]);
            p += n;
            if (*p == ' ')
                p++;
        }
        FUZZ_CHECK(*p == '\0', "'%s': %zu items read, text left", value, count);
        free(list);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    struct mpce_kat_set set;
    fuzz_clear_error();
    if (mpce_kat_parse("fuzz.txt", text, &set) == 0) {
        for (size_t i = 0; i < set.count; i++) {
            const struct mpce_kat_record *rec = &set.records[i];
            FUZZ_CHECK(rec->op != NULL && rec->nfields > 0, "record %zu has no op", i);
            FUZZ_CHECK(mpce_kat_get(rec, "op") == rec->op, "record %zu: op is not its first",
                       i);
            for (size_t f = 0; f < rec->nfields; f++)
                check_field(rec, rec->fields[f].name);
            FUZZ_CHECK(mpce_kat_get(rec, "x = y") == NULL, "a field from nowhere");
        }
        mpce_kat_free(&set);
    } else {
        FUZZ_CHECK(mpce_last_error()[0] != '\0', "refused without a reason");
    }
    free(text);
    return 0;
}
