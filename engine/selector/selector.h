/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The selector (DESIGN.md "Selector and pins"): the measured order "auto"
 * follows, per operation, variant and size class, read from a pins file whose
 * signature matches this machine and these modules. The measuring itself
 * runs out of process, in the probe helper (tools/probe), which this side
 * only spawns and waits for.
 */
#ifndef MPCE_SELECTOR_H
#define MPCE_SELECTOR_H

#include <stddef.h>
#include <sys/types.h>

#include "engine/internal.h"
#include "engine/selector/pins.h"

/* ---- shape classes (shape.c) ------------------------------------------------ */

unsigned mpce_variant_count(mpce_primitive prim);
/* "" for a primitive with one variant, "q50"/"qwide" (NTT moduli below 2^50
 * or not), "k16"/"kbig" (LPN table of at most 2^16 blocks or more); NULL out
 * of range. */
const char *mpce_variant_name(mpce_primitive prim, unsigned variant);
/* A context's variant. */
unsigned mpce_shape_variant(const struct mpce_params *p);

/* A row's key: "prg.ecb.medium", "ntt.forward.q50.large". */
void mpce_row_key(enum mpce_op_id op, unsigned variant, unsigned size_class, char *buf,
                  size_t len);
/* 0 and the parts, or -1 for a key that names no routed op, variant and class. */
int mpce_row_parse(const char *key, enum mpce_op_id *op, unsigned *variant,
                   unsigned *size_class);

/* ---- signature (signature.c) ---------------------------------------------------- */

/* This CPU: vendor, family, model, stepping, feature words. */
void mpce_signature_cpu(char *buf, size_t len);
/* Tests set this to stand for another CPU. */
extern const char *mpce_signature_cpu_override;

/* ---- the engine's pins (selector.c) ----------------------------------------------- */

/* Pins files are read from up to two directories (mpce_selector_dirs): the
 * system's, then the user's. A row current in the system file wins; the
 * user's file fills the rows the system's lacks or has stale. */
#define MPCE_SELECTOR_FILES 2

struct mpce_selector {
    struct mpce_pins pins[MPCE_SELECTOR_FILES];
    int loaded[MPCE_SELECTOR_FILES];
    char path[MPCE_SELECTOR_FILES][4200];
    const struct mpce_pins_row **by_key; /* [op][variant][size class]: current rows */
    unsigned char *by_file;         /* ... and which file each came from */
    uint64_t *slice_min;            /* [op][slot index]: measured thresholds */
    unsigned n_stale;               /* row keys stale in a file and current in none */
    char cpu[512];                  /* this CPU's signature, computed once */
};

/*
 * At engine creation, after the modules are loaded and before the dispatch
 * table is built: read the pins, decide which rows are current, and, as
 * [tune] mode says, tune (spawning the helper) and read them again. Never
 * fails the engine for a pins file or a helper: what went wrong is logged
 * and "auto" keeps priority order. opts are the engine's, handed on to the
 * helper so that it measures the same configuration.
 */
mpce_status mpce_selector_start(mpce_engine *e, const mpce_options *opts);
void mpce_selector_free(mpce_engine *e);

/* The current row for (op, variant, size class), or NULL; *path and *date
 * (either may be NULL) name the file it came from. */
const struct mpce_pins_row *mpce_selector_row(const mpce_engine *e, enum mpce_op_id op,
                                              unsigned variant, unsigned size_class,
                                              const char **path, const char **date);
/* The measured slice threshold (work elements) for op on slot: 0 when none,
 * MPCE_PINS_NEVER when a row says never to split. */
uint64_t mpce_selector_slice_min(const mpce_engine *e, enum mpce_op_id op,
                                 const struct mpce_slot *slot);

/* Why auto skips module m (crashed, hung or was wrong while tuning), or NULL. */
const char *mpce_selector_blacklisted(const mpce_engine *e, const struct mpce_module *m);

/* ---- the census (census.c) -------------------------------------------------------- */

struct mpce_census_entry {
    char key[96];                   /* a row key */
    unsigned long long calls;
};

/* Counters when [tune] census = yes (and tuning is not off). */
void mpce_census_start(mpce_engine *e);
void mpce_census_count_slow(mpce_engine *e, enum mpce_op_id op, unsigned variant,
                            unsigned size_class);
/* Merge the counts into DIR/census.txt (the first writable pins directory)
 * and zero them; freeing flushes first. */
void mpce_census_flush(mpce_engine *e);
void mpce_census_free(mpce_engine *e);
/* The counts of dir's census file (0 and none when it is missing; -1 when it
 * cannot be read). *out is malloc'd. */
int mpce_census_read(const char *dir, struct mpce_census_entry **out, size_t *count);

/* The pins directories in the order they are read: [tune] dir alone, else the
 * system's and (unprivileged only) the user's cache. Returns how many. */
/* Tests set this to stand for the compiled-in system directory. */
extern const char *mpce_selector_system_dir_override;
size_t mpce_selector_dirs(const struct mpce_config *cfg, char dirs[2][4096]);

/*
 * Whether a row of pins p still describes engine e: same CPU, engine version
 * and variable-time policy, every plugin that took part loaded from the same
 * file (path, size, mtime, SHA-256), and no loaded plugin with an
 * implementation of the row's primitive missing from it. 1, or 0 with why.
 */
int mpce_selector_row_current(const mpce_engine *e, const struct mpce_pins *p,
                              const struct mpce_pins_row *row, char *why, size_t len);

/* Whether pins p were measured on this CPU, by this engine version and under
 * e's variable-time policy: 1, or 0 with why. */
int mpce_selector_header_current(const mpce_engine *e, const struct mpce_pins *p, char *why,
                                 size_t len);
/* "variable-time" or "constant-time": e's policy as pins record it. */
const char *mpce_selector_policy(const mpce_engine *e);

/*
 * Read dir's pins file for e: MPCE_PINS_READ_OK with *out filled, or why (a
 * corrupt, untrusted or unreadable file). A privileged process reads only a
 * file that it could trust as configuration (root-owned, not writable by
 * others, and the same for every directory above it).
 */
enum mpce_pins_read_result mpce_selector_read(const mpce_engine *e, const char *dir,
                                              struct mpce_pins *out, char *path, size_t plen,
                                              char *why, size_t wlen);

/* ---- the probe helper (spawn.c) ---------------------------------------------------- */

/* The helper engine e runs: [tune] helper, or the one installed with the
 * library. */
const char *mpce_selector_helper(const mpce_engine *e);
/* Tests set this to stand for the installed helper, so that whether one is
 * installed at the build's prefix changes no suite (tests/testutil.c). */
extern const char *mpce_selector_default_helper_override;
/* Whether this process may run helper: 1; 0 when there is none (no such
 * file), or -1 when there is one it may not run (not an executable file,
 * not root-owned in a privileged process, cannot be looked at), each with
 * the reason. */
int mpce_selector_helper_ok(const mpce_engine *e, const char *helper, char *why, size_t len);
/* Whether this is a setuid or setgid process (AT_SECURE), which starts no
 * helper. */
int mpce_selector_secure(void);

/* Lines from a pipe as they come: a helper's progress, a worker's results. */
struct mpce_lines {
    char buf[8192];
    size_t have;
};
typedef void (*mpce_line_fn)(void *arg, char *line);
/*
 * One read from fd; fn gets each complete line (a line longer than the
 * buffer comes in pieces). Returns what read() did: > 0, 0 at end of file
 * (a last unterminated line is passed first), < 0 on error (errno; EINTR:
 * call again).
 */
ssize_t mpce_lines_read(struct mpce_lines *l, int fd, mpce_line_fn fn, void *arg);

/*
 * Start the helper for e: `mpcengine-probe tune --for-engine` detaches at
 * once and writes its progress to a pipe, which is relayed to e's log for at
 * most wait_ms (0: not at all). Returns 1 if it finished within wait_ms.
 * Says why once, and starts nothing, when there is no helper, no pins
 * directory this process could write, or the process is setuid/setgid.
 */
int mpce_selector_spawn(mpce_engine *e, const mpce_options *opts, int force, unsigned wait_ms);

/* Start the probe helper as it is always started: posix_spawn (a device
 * runtime's context does not survive fork), stdin and stdout on /dev/null,
 * each fds[i].from placed on fds[i].to (stderr on /dev/null unless one is
 * placed there), every descriptor above them closed where the C library
 * can, the application's signal mask and dispositions reset, and in a
 * process group of its own when own_group. 0 with *pid, or an errno value. */
struct mpce_spawn_fd {
    int from, to;
};
int mpce_selector_spawn_helper(const char *helper, const char *const *argv,
                               const struct mpce_spawn_fd *fds, size_t n_fds, int own_group,
                               pid_t *pid);

/* Append to argv at n what makes the helper's engines match an engine made
 * with opts (its flags, config path and plugin path), written into flags:
 * `--flags F [--config P] [--plugin-path D]`. Returns the new n (at most
 * n + 6). */
size_t mpce_selector_opts_argv(const mpce_options *opts, const char **argv, size_t n,
                               char flags[32]);

/* The pins record of a loaded module. Strings point into m. */
void mpce_selector_module_record(const mpce_engine *e, const struct mpce_module *m,
                                 struct mpce_pins_module *out, char *devices, size_t dlen);

#endif
