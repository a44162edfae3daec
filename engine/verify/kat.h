/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known-answer vectors: the files of tests/vectors/ are embedded in the
 * library at build time (tools/embed-vectors.sh) and parsed here, so the
 * self-test and the test suites read one copy through one parser.
 * Format: tests/vectors/README.md.
 */
#ifndef MPCE_ENGINE_KAT_H
#define MPCE_ENGINE_KAT_H

#include <stddef.h>
#include <stdint.h>

struct mpce_kat_field {
    const char *name;
    const char *value;
};

struct mpce_kat_record {
    const char *file;   /* "prg.txt" */
    unsigned line;      /* line of the record's first field */
    const char *op;     /* value of the first field, "op" */
    size_t nfields;
    struct mpce_kat_field *fields;
};

struct mpce_kat_set {
    size_t count;
    struct mpce_kat_record *records;
    char *text;         /* owned copy the fields point into */
};

/* Parse the embedded file `name` ("prg.txt", "ntt.txt", "lpn.txt", "dpf.txt").
 * Returns 0, or -1 with the reason in the thread's error detail. */
int mpce_kat_load(const char *name, struct mpce_kat_set *out);
/* The same parser over any text (the fuzz target's way in); records name
 * `name` as their file. */
int mpce_kat_parse(const char *name, const char *text, struct mpce_kat_set *out);
void mpce_kat_free(struct mpce_kat_set *set);

/* Field accessors; each returns 0 on success, -1 if the field is missing or
 * malformed (with the record's file and line in the error detail), and
 * MPCE_KAT_NO_MEMORY when memory ran out (which says nothing of the field). */
#define MPCE_KAT_NO_MEMORY (-2)
const char *mpce_kat_get(const struct mpce_kat_record *rec, const char *name);
int mpce_kat_u64(const struct mpce_kat_record *rec, const char *name, uint64_t *value);
/* Lowercase hex into a malloc'd buffer (*len bytes; a zero-length value gives
 * a non-NULL 1-byte buffer and *len = 0). */
int mpce_kat_hex(const struct mpce_kat_record *rec, const char *name, uint8_t **bytes,
                 size_t *len);
/* Space-separated decimal list into a malloc'd array. */
int mpce_kat_u64_list(const struct mpce_kat_record *rec, const char *name, uint64_t **values,
                      size_t *count);

/* The embedded files, generated into kat_text.c. */
struct mpce_kat_file {
    const char *name;
    const char *text;
};
extern const struct mpce_kat_file mpce_kat_files[];
extern const size_t mpce_kat_file_count;

#endif
