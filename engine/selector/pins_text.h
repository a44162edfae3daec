/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the pins file's reader (pins_read.c) and writer (pins_write.c) must
 * agree on, kept in one place so that whatever is written reads back: the
 * layout, the limits, the seal and the checks every value passes both ways.
 * Also the one-line messages of the reader, the writer and the lock
 * (pins_lock.c), and the directory creation the writer and the lock share.
 *
 * The file is INI read back with iniparser 4.1, laid out as
 *
 *   # libmpcengine pins: written by the selector (`mpcengine tune`). ...
 *   [pins]
 *   format = 3      (2 is still read: it has no crossover keys)
 *   engine = "0.1.0"
 *   date = "2026-11-30T17:04:05Z"
 *   effort = "quick"
 *   cpu = "..."
 *   policy = "constant-time"
 *
 *   [module.1]      plugin path size mtime sha256 devices
 *   [row.1]         key shape winner runner_up verdict plugins
 *                   cand.N = "IMPL STATUS MEDIAN SPREAD", why.N = "..."
 *                   optional: slice_min, slice_verdict, knobs, knob_verdict,
 *                   and (format 3) crossover, crossover_impl, crossover_verdict
 *   [blacklist.1]   path size mtime reason
 *
 *   seal = "sha256:<64 hex>"
 *
 * Sections and cand.N/why.N are numbered densely from 1. iniparser lowercases
 * section and key names, so names only ever appear in values. The seal is
 * the last line, the SHA-256 of every byte before it; iniparser sees it as a
 * key of the last section.
 *
 * Not installed, and private to engine/selector/pins_*.c.
 */
#ifndef MPCE_SELECTOR_PINS_TEXT_H
#define MPCE_SELECTOR_PINS_TEXT_H

#include <locale.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/selector/pins.h"

/* Larger files are no pins file; refusing them bounds the work. */
#define PINS_MAX_BYTES (4u << 20)
/* Longest line written or accepted, newline excluded (iniparser 4.1 reads
 * at most 1022). */
#define PINS_MAX_LINE 1000

#define PINS_SEAL_PREFIX "seal = \"sha256:"
#define PINS_SEAL_PREFIX_LEN (sizeof(PINS_SEAL_PREFIX) - 1)
/* The whole seal line: prefix, 64 hex digits, closing quote, newline. */
#define PINS_SEAL_LINE_LEN (PINS_SEAL_PREFIX_LEN + 64 + 2)

/* The statuses of a candidate, in words, for messages that list them. */
#define PINS_STATUS_WORDS "ok, screened, wrong, crashed, hung, failed or declined"

/* The largest slice threshold a row may hold: far beyond any call, and small
 * enough that the pool's arithmetic on it (times threads, element sizes)
 * cannot overflow 64 bits. */
#define PINS_SLICE_MAX (UINT64_C(1) << 48)
#define PINS_SLICE_WORDS "never or a number of work elements from 1 to 2^48"
/* A crossover is bounded the same way (never is no crossover). */
#define PINS_CROSSOVER_WORDS "a number of work elements from 1 to 2^48"

#define PINS_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The seal's digest of data: 64 lowercase hex digits. 0, or -1 when OpenSSL
 * fails. */
int mpce_pins_seal_hex(const void *data, size_t len, char hex[65]);

/* Whether s[0..n) is lowercase hex digits only. */
int mpce_pins_is_hex(const char *s, size_t n);

/* The position of s in list, or -1. */
int mpce_pins_index_of(const char *s, const char *const *list, size_t n);

/*
 * The checks a value passes to be written and to be read back. Each takes a
 * string (never NULL) and returns NULL when it passes, or else what it
 * should have been, for a message "'VALUE' is not WHAT".
 */
const char *mpce_pins_check_date(const char *s);          /* [pins] date */
const char *mpce_pins_check_effort(const char *s);        /* [pins] effort */
const char *mpce_pins_check_sha256(const char *s);        /* a module's, "" allowed */
const char *mpce_pins_check_name(const char *s);          /* a plugin or implementation */
const char *mpce_pins_check_optional_name(const char *s); /* the same, or "" */
const char *mpce_pins_check_status(const char *s);        /* a candidate's */
const char *mpce_pins_check_policy(const char *s);        /* [pins] policy */
/* A row's key: "OP.NAME[.VARIANT].SIZE", 3 or 4 dot-separated names of
 * letters, digits and '_', the last a size class. Only the form: which keys
 * the engine knows is the selector's business (it ignores the others), and
 * this file stays readable by an engine with other ops. */
const char *mpce_pins_check_row_key(const char *s);
/* A median or spread: finite and not negative. */
int mpce_pins_valid_time(double v);
/* A measured slice threshold: 1 to PINS_SLICE_MAX, or MPCE_PINS_NEVER. */
int mpce_pins_valid_slice_min(uint64_t v);

/*
 * What a row's values mean together, beyond the form of each (NULL strings
 * count as ""): no two candidates of one implementation; the winner, if
 * any, a candidate whose status is "ok"; the runner-up, if any, an "ok" or
 * "screened" candidate other than the winner; a slice threshold valid and
 * with the slice_verdict that says how it was found. Returns 0 when it
 * holds, -1 when out of memory, or 1 with key holding the key to blame
 * ("winner", "cand.3"...) and msg one line saying what is wrong.
 */
int mpce_pins_check_row(const struct mpce_pins_row *r, char *key, size_t key_len, char *msg,
                        size_t msg_len);

/*
 * Two items with the same name: n items of size bytes from items, the name
 * a char * (NULL counting as "") offset bytes into each. Returns 1 with
 * *again the index of the first item whose name an earlier one has and
 * *first that earlier one's; 0 when all differ; -1 when out of memory.
 * O(n log n), for files a hostile writer may have filled.
 */
int mpce_pins_find_dup(const void *items, size_t n, size_t size, size_t offset, size_t *first,
                       size_t *again);

/* The C locale for numbers, whatever the application set: a file written
 * under "de_DE" must read back under "C" and the other way round. (locale_t)0
 * with errno set when it cannot be made; freelocale it. */
locale_t mpce_pins_c_locale(void);

/* Format a one-line message into why (nothing when why is NULL or why_len
 * 0), keeping errno. */
/* What to do about a failed write or lock (ENOSPC, EROFS, ...), for the end
 * of its message: the old pins file is always kept. */
const char *mpce_pins_write_hint(int err);
void mpce_pins_why(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Create dir and its missing parents (mode 0755) unless it exists. 0, or
 * -1 with errno set and why
 * holding "PATH: cannot create directory DIR: strerror", where path is the
 * file the directory is made for. */
int mpce_pins_make_dir(const char *dir, const char *path, char *why, size_t why_len);

/* The selector's state files (pins, vet verdicts) are replaced whole: buf
 * (len bytes) into a temporary file beside path, on disk, renamed over it,
 * the directory made if missing and temporaries over an hour old (a killed
 * writer's) removed, so that a reader sees the old file or the new one.
 * 0, or -1 with errno and why: "PATH: what failed: strerror" followed, for
 * the steps that leave the old file, by hint(errno) unless hint is NULL. */
int mpce_state_file_replace(const char *path, const char *buf, size_t len,
                            const char *(*hint)(int err), char *why, size_t why_len);

/*
 * ---- The reader's two halves only: pins_scan.c and pins_read.c ----
 *
 * pins_scan.c opens the file, reads it whole, checks the seal and indexes
 * the text's sections and keys with their lines; pins_read.c then has
 * iniparser parse the same descriptor, checks the dictionary against that
 * index and converts the values. The writer uses none of this.
 */

/* A section or key as the text has it (not NUL-terminated). */
struct pins_raw_sec {
    const char *name;
    size_t len;
    unsigned line;
};

struct pins_raw_key {
    size_t sec;                /* its section, an index into secs */
    const char *name;
    size_t len;
    const char *val;           /* the value without its quotes */
    size_t vlen;
    unsigned line;
};

/* One read: where its message goes, then what the scan found. The reader
 * frees text, secs and keys, whatever the result. */
struct pins_rd {
    const char *path;
    char *why;
    size_t why_len;
    char *text;                /* the whole file, NUL-terminated */
    size_t len;
    struct pins_raw_sec *secs; /* in the order of the text */
    size_t nsec, capsec;
    struct pins_raw_key *keys; /* the same */
    size_t nkey, capkey;
    unsigned format;           /* [pins] format, once checked */
};

/* why = "PATH:LINE: message" ("PATH: message" when line is 0); returns res. */
enum mpce_pins_read_result mpce_pins_rd_fail(struct pins_rd *r, enum mpce_pins_read_result res,
                                             unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Out of memory: errno ENOMEM, its message, MPCE_PINS_READ_ERROR. */
enum mpce_pins_read_result mpce_pins_rd_nomem(struct pins_rd *r);

/* a[0..al) against b[0..bl), ignoring case as iniparser folds names. */
int mpce_pins_span_cmp(const char *a, size_t al, const char *b, size_t bl);

/*
 * Open r->path (no symbolic link, a regular file), read it whole, check the
 * seal and scan the text into r->secs and r->keys, refusing duplicates.
 * *fdp is -1 only when nothing was opened (and nothing allocated);
 * otherwise the caller closes it, whatever the result: iniparser parses
 * the file through it.
 */
enum mpce_pins_read_result mpce_pins_scan(struct pins_rd *r, int *fdp);

#endif
