/* SPDX-License-Identifier: Apache-2.0 */
/* Parser for the embedded known-answer vector files (tests/vectors/README.md). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/verify/kat.h"

static const char *find_text(const char *name)
{
    for (size_t i = 0; i < mpce_kat_file_count; i++)
        if (strcmp(mpce_kat_files[i].name, name) == 0)
            return mpce_kat_files[i].text;
    return NULL;
}

static int push_field(struct mpce_kat_record *rec, const char *name, const char *value)
{
    struct mpce_kat_field *grown = realloc(rec->fields, (rec->nfields + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    rec->fields = grown;
    rec->fields[rec->nfields].name = name;
    rec->fields[rec->nfields].value = value;
    rec->nfields++;
    return 0;
}

void mpce_kat_free(struct mpce_kat_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->count; i++)
        free(set->records[i].fields);
    free(set->records);
    free(set->text);
    memset(set, 0, sizeof(*set));
}

int mpce_kat_load(const char *name, struct mpce_kat_set *out)
{
    memset(out, 0, sizeof(*out));
    const char *text = find_text(name);
    if (!text) {
        mpce_error(MPCE_ERR_ARG, "known-answer file '%s' is not embedded in this build", name);
        return -1;
    }
    return mpce_kat_parse(name, text, out);
}

int mpce_kat_parse(const char *name, const char *text, struct mpce_kat_set *out)
{
    memset(out, 0, sizeof(*out));
    out->text = strdup(text);
    if (!out->text)
        goto nomem;

    struct mpce_kat_record *cur = NULL;
    unsigned line_no = 0;
    char *save = NULL;
    /* strtok_r would merge blank lines, which separate records; split by hand. */
    for (char *line = out->text; line; line = save) {
        char *nl = strchr(line, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl)
            *nl = '\0';
        line_no++;
        if (line[0] == '#')
            continue;
        if (line[0] == '\0') {
            cur = NULL;
            continue;
        }
        char *eq = strstr(line, " = ");
        if (!eq) {
            mpce_error(MPCE_ERR_FORMAT, "%s:%u: expected 'name = value'", name, line_no);
            mpce_kat_free(out);
            return -1;
        }
        *eq = '\0';
        const char *value = eq + 3;
        if (!cur) {
            struct mpce_kat_record *grown =
                realloc(out->records, (out->count + 1) * sizeof(*grown));
            if (!grown)
                goto nomem;
            out->records = grown;
            cur = &out->records[out->count++];
            memset(cur, 0, sizeof(*cur));
            cur->file = name;
            cur->line = line_no;
            if (strcmp(line, "op") != 0) {
                mpce_error(MPCE_ERR_FORMAT, "%s:%u: a record must start with 'op'", name,
                           line_no);
                mpce_kat_free(out);
                return -1;
            }
            cur->op = value;
        }
        if (push_field(cur, line, value) != 0)
            goto nomem;
    }
    return 0;

nomem:
    mpce_kat_free(out);
    mpce_error(MPCE_ERR_NOMEM, "out of memory parsing known-answer file %s", name);
    return -1;
}

const char *mpce_kat_get(const struct mpce_kat_record *rec, const char *name)
{
    for (size_t i = 0; i < rec->nfields; i++)
        if (strcmp(rec->fields[i].name, name) == 0)
            return rec->fields[i].value;
    return NULL;
}

static const char *need(const struct mpce_kat_record *rec, const char *name)
{
    const char *v = mpce_kat_get(rec, name);
    if (!v)
        mpce_error(MPCE_ERR_FORMAT, "%s:%u: record has no field '%s'", rec->file, rec->line,
                   name);
    return v;
}

static int bad_value(const struct mpce_kat_record *rec, const char *name, const char *what)
{
    mpce_error(MPCE_ERR_FORMAT, "%s:%u: field '%s' is not %s", rec->file, rec->line, name, what);
    return -1;
}

int mpce_kat_u64(const struct mpce_kat_record *rec, const char *name, uint64_t *value)
{
    const char *v = need(rec, name);
    if (!v)
        return -1;
    char *end;
    errno = 0;
    /* strtoull would also take leading spaces and a sign (" -1" wraps to
     * 2^64 - 1): the format has digits only. */
    unsigned long long x = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
    if (v[0] < '0' || v[0] > '9' || errno || *end != '\0')
        return bad_value(rec, name, "a decimal integer");
    *value = (uint64_t)x;
    return 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int mpce_kat_hex(const struct mpce_kat_record *rec, const char *name, uint8_t **bytes,
                 size_t *len)
{
    const char *v = need(rec, name);
    if (!v)
        return -1;
    size_t digits = strlen(v);
    if (digits % 2)
        return bad_value(rec, name, "an even number of hex digits");
    uint8_t *buf = malloc(digits / 2 + 1);
    if (!buf) {
        mpce_error(MPCE_ERR_NOMEM, "out of memory reading %s", name);
        return MPCE_KAT_NO_MEMORY;
    }
    for (size_t i = 0; i < digits / 2; i++) {
        int hi = hex_digit(v[2 * i]), lo = hex_digit(v[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(buf);
            return bad_value(rec, name, "lowercase hex");
        }
        buf[i] = (uint8_t)(hi << 4 | lo);
    }
    *bytes = buf;
    *len = digits / 2;
    return 0;
}

int mpce_kat_u64_list(const struct mpce_kat_record *rec, const char *name, uint64_t **values,
                      size_t *count)
{
    const char *v = need(rec, name);
    if (!v)
        return -1;
    size_t cap = 1;
    for (const char *p = v; *p; p++)
        cap += (*p == ' ');
    uint64_t *arr = malloc(cap * sizeof(*arr));
    if (!arr) {
        mpce_error(MPCE_ERR_NOMEM, "out of memory reading %s", name);
        return MPCE_KAT_NO_MEMORY;
    }
    size_t n = 0;
    const char *p = v;
    while (*p) {
        char *end = NULL;
        errno = 0;
        /* Digits only, one space apart (strtoull alone takes spaces and signs). */
        unsigned long long x = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : 0;
        if (!end || errno || (*end != ' ' && *end != '\0') || (*end == ' ' && end[1] == '\0') ||
            n == cap) {
            free(arr);
            return bad_value(rec, name, "a list of decimal integers");
        }
        arr[n++] = (uint64_t)x;
        p = *end ? end + 1 : end;
    }
    *values = arr;
    *count = n;
    return 0;
}
