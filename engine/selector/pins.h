/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pins file: the selector's machine-written state (DESIGN.md "Selector
 * and pins"), kept apart from engine.conf. One INI file per scope (the
 * system's under $(localstatedir)/lib/mpcengine/STATE, a user's under
 * $XDG_CACHE_HOME/mpcengine/STATE, STATE naming the CPU family and the
 * soname, e.g. x86_64-linux-gnu-so0), written whole and atomically under an
 * exclusive lock, and sealed with a SHA-256 of its own text so that a torn,
 * corrupt or hand-edited file is recognised and replaced, never trusted.
 *
 * This file is the data and its file handling only; what a row means and
 * whether it is current is the selector's business (selector.h).
 */
#ifndef MPCE_SELECTOR_PINS_H
#define MPCE_SELECTOR_PINS_H

#include <stddef.h>
#include <stdint.h>

/* Bumped when the layout changes. 3 added a row's optional crossover (a
 * device implementation's, below); the reader still reads format 2 files
 * (MPCE_PINS_FORMAT_OLDEST), which have none. */
#define MPCE_PINS_FORMAT 3u
#define MPCE_PINS_FORMAT_OLDEST 2u
/* The first format whose tuner timed asynchronous (device) implementations
 * instead of declining them: an older file's row that declined one loaded
 * now is stale, so that the device's crossover gets measured. */
#define MPCE_PINS_FORMAT_TIMES_ASYNC 3u
/* The file's name in its directory, and its lock's. */
#define MPCE_PINS_FILE "pins.ini"
#define MPCE_PINS_LOCK "pins.lock"
/* The per-architecture, per-soname subdirectory (configure.ac). */
#ifndef MPCE_STATE_NAME
#define MPCE_STATE_NAME "unknown-so0"
#endif

/* A module file as it was when it was tuned. */
struct mpce_pins_module {
    char *plugin;           /* plugin name ("soft" for the built-in one) */
    char *path;             /* absolute path, or "(built-in)" */
    uint64_t size;          /* bytes; 0 for built-in */
    int64_t mtime;          /* seconds since the epoch; 0 for built-in */
    char *sha256;           /* 64 hex digits, "" for built-in */
    char *devices;          /* each device's name and driver, "" if none */
};

/* One implementation's result in one row. */
struct mpce_pins_cand {
    char *impl;
    /* "ok", "screened", "wrong", "crashed", "hung", "failed", "declined".
     * "screened": measured by one warm call only, because it was over 3x
     * behind the fastest; median holds that call's time. */
    char *status;
    double median;          /* seconds per call; 0 unless status is "ok" or "screened" */
    double spread;          /* (max - min) / median over the rounds; 0 unless "ok" */
    char *why;              /* "" for ok; the reason otherwise */
};

/* One (operation, variant, size class) the selector measured. */
struct mpce_pins_row {
    char *key;              /* "ntt.forward.q50.medium" */
    char *shape;            /* the production shape timed: "N=4096 B=16 q=0x..." */
    char *winner;           /* "" when no candidate was ok */
    char *runner_up;        /* "" when there was none */
    char *verdict;          /* one line: how the gate decided */
    char **plugins;         /* the plugins whose implementations took part */
    size_t n_plugins;
    struct mpce_pins_cand *cands;
    size_t n_cands;
    /* The pool's threshold for the winner, in work elements per slice: the
     * measured crossover where splitting a call over the engine's threads
     * starts to pay. 0: not measured; MPCE_PINS_NEVER: never split calls of
     * this op (read and honoured; the tuner itself records a floor at the
     * largest size it tried instead, since it knows nothing beyond it). */
    uint64_t slice_min;
    char *slice_verdict;    /* how it was found; "" when not measured */
    /* The winner's knob values measured best on this row's shape, as
     * "KNOB=VALUE:..." (what "auto" passes it, engine/runtime/knobs.h);
     * "" for the defaults or a winner without knobs. */
    char *knobs;
    char *knob_verdict;     /* what was swept and how it was decided; "" if nothing */
    /* Format 3: where a device (asynchronous) implementation starts to win
     * inside the row's class, timed end to end on host memory against the
     * row's best host implementation. crossover: work elements from which
     * crossover_impl is "auto"'s first choice (calls of the class below it
     * go to the best host implementation); 0: none measured (the row's
     * order holds for every call of the class). */
    uint64_t crossover;
    char *crossover_impl;   /* "" when crossover is 0 */
    char *crossover_verdict; /* how it was found; "" if not searched */
};

#define MPCE_PINS_NEVER UINT64_MAX

/* A module that crashed, hung or answered wrongly while tuning: auto never
 * uses it until the file at path changes (size or mtime). */
struct mpce_pins_blacklist {
    char *path;
    uint64_t size;
    int64_t mtime;
    char *reason;
};

struct mpce_pins {
    unsigned format;        /* the file's: MPCE_PINS_FORMAT_OLDEST to MPCE_PINS_FORMAT */
    char *engine_version;   /* mpce_version_string() of the writer */
    char *date;             /* UTC, ISO 8601: "2026-11-30T17:04:05Z" */
    char *effort;           /* "quick", "measure", "patient" or "imported" */
    char *cpu;              /* the CPU signature (selector.h) */
    /* "constant-time" or "variable-time": whether variable-time
     * implementations were allowed when the file was measured (a row
     * measured under one policy says nothing about the other). */
    char *policy;
    struct mpce_pins_module *modules;
    size_t n_modules;
    struct mpce_pins_row *rows;
    size_t n_rows;
    struct mpce_pins_blacklist *blacklist;
    size_t n_blacklist;
};

/* Outcomes of mpce_pins_read. */
enum mpce_pins_read_result {
    MPCE_PINS_READ_OK = 0,
    MPCE_PINS_READ_MISSING,  /* no file: not an error */
    MPCE_PINS_READ_CORRUPT,  /* present but not trustworthy: why says what */
    MPCE_PINS_READ_ERROR     /* could not be read (permissions, I/O): why says what */
};

/*
 * Read and check a pins file: the seal must match the text, every section
 * and key must be known, every value well-formed, and the format must be
 * MPCE_PINS_FORMAT_OLDEST to MPCE_PINS_FORMAT (a format 2 file has no
 * crossover keys). On MPCE_PINS_READ_OK *out owns the data (free it with
 * mpce_pins_free); otherwise *out is zeroed and why (if not NULL) holds one
 * line: "FILE:LINE: what is wrong", "FILE: seal does not match the contents
 * (edited by hand or torn)". The file is opened without following a final
 * symlink and read through one descriptor.
 */
enum mpce_pins_read_result mpce_pins_read(const char *path, struct mpce_pins *out, char *why,
                                          size_t why_len);

/*
 * Write p to path atomically: a temporary file in the same directory (the
 * directory is created, mode 0755, if missing), written, sealed, fsync'd,
 * renamed over path and the directory fsync'd, so that a reader sees the old
 * file or the new one and a writer killed midway leaves no torn file (at
 * worst a stray temporary, which later writes ignore). The file is 0644.
 * Returns 0, or -1 with why holding "PATH: what failed: strerror".
 */
int mpce_pins_write(const char *path, const struct mpce_pins *p, char *why, size_t why_len);

/*
 * The directory's exclusive lock (MPCE_PINS_LOCK, created if missing), taken
 * with flock, waiting at most wait_ms (0: try once). Returns a descriptor to
 * pass to mpce_pins_unlock, or -1 with why set ("DIR/pins.lock: held by
 * another process for 5000 ms" or the system error). The directory is
 * created if missing.
 */
int mpce_pins_lock(const char *dir, unsigned wait_ms, char *why, size_t why_len);
/* The same for the lock file DIR/name: a writer whose file needs no pins.lock
 * (the census, census.lock) then never waits behind a tune. */
int mpce_pins_lock_file(const char *dir, const char *name, unsigned wait_ms, char *why,
                        size_t why_len);
void mpce_pins_unlock(int fd);

/* The row with key, or NULL. */
const struct mpce_pins_row *mpce_pins_find_row(const struct mpce_pins *p, const char *key);

/* Deep copies and frees; mpce_pins_free leaves *p zeroed. The add functions
 * copy their arguments and return 0, or -1 when out of memory. */
void mpce_pins_free(struct mpce_pins *p);
int mpce_pins_set_header(struct mpce_pins *p, const char *engine_version, const char *date,
                         const char *effort, const char *cpu);
/* policy: "constant-time" or "variable-time" (struct mpce_pins). Set apart
 * from the header, whose callers stay as they are; the writer refuses a
 * file without it. */
int mpce_pins_set_policy(struct mpce_pins *p, const char *policy);
int mpce_pins_add_module(struct mpce_pins *p, const struct mpce_pins_module *m);
int mpce_pins_add_row(struct mpce_pins *p, const struct mpce_pins_row *row);
int mpce_pins_add_blacklist(struct mpce_pins *p, const struct mpce_pins_blacklist *b);
/* Replace the row with the same key, or add it. */
int mpce_pins_put_row(struct mpce_pins *p, const struct mpce_pins_row *row);

#endif
