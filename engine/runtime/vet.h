/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Vetting a module out of process before the host loads it (DESIGN.md
 * "Loader"): the probe helper (`mpcengine-probe vet`) loads the one module
 * from the descriptor the host checked and hashed, runs its constructors,
 * entry point, probe, init, implementation probes and every
 * implementation's known-answer self-test, and reports each step on a pipe.
 * A module that crashes, aborts, calls exit(), hangs past [tune] vet_timeout
 * or leaves file descriptors open there fails, with the step named, and the
 * host never dlopens it. The verdict is cached with the module's fingerprint
 * (engine/selector/verdicts.c), so each file is vetted once per machine and
 * engine version.
 */
#ifndef MPCE_RUNTIME_VET_H
#define MPCE_RUNTIME_VET_H

#include <stddef.h>

#include "engine/internal.h"
#include "engine/runtime/module_file.h"

/* One implementation's known-answer test as the helper ran it. */
struct mpce_vet_impl {
    char name[MPCE_NAME_MAX + 1];
    int pass;
    char reason[300];
};

struct mpce_verdict {
    int pass;                 /* its code ran to the end without a fault */
    char reason[400];         /* failed: what happened, and in which step */
    char warning[300];        /* passed, but: descriptors kept after init */
    struct mpce_vet_impl *impls; /* malloc'd */
    size_t n_impls;
    char source[4200];        /* the cache file it came from, or "" when fresh */
    int cache;                /* a property of the file: may be cached (not a
                               * timeout, SIGKILL, out of memory, a refusal) */
    int unvetted;             /* failed closed: no verdict could be had */
    int no_memory;            /* ... because this process ran out of memory:
                               * nothing about the module, so the loader
                               * fails the engine (MPCE_ERR_NOMEM) */
    char plugin[MPCE_NAME_MAX + 1]; /* the plugin's name, once its entry ran */
    int late;                 /* failed after the entry point (probe or later) */
};

enum mpce_vet_result {
    MPCE_VET_OFF = 0,         /* not vetted: load in process, as without isolation */
    MPCE_VET_PASS,
    MPCE_VET_FAIL,
    MPCE_VET_DISABLED         /* failed only in code a disabled plugin never runs
                               * ([plugin.NAME] enabled = no): not loaded, listed
                               * as disabled (its destructors were never vetted) */
};

/*
 * The verdict on the module open on f (checked and hashed): a valid cached
 * one, else a fresh one from the helper, cached when a state directory can
 * be written and the outcome is a property of the file. OFF when isolation
 * is off here ([tune] vet = no, a setuid process, no helper installed),
 * logged once per engine; *v is then empty. A helper that is there but
 * gives no verdict fails the module closed (FAIL with v->unvetted), never
 * OFF: the module is not loaded into this process unvetted; where that was
 * for want of memory here, v->no_memory is set too.
 */
enum mpce_vet_result mpce_vet_module(mpce_engine *e, const struct mpce_module_file *f,
                                     struct mpce_verdict *v);

/* The self-test results of a passed verdict onto the slots of module m:
 * passed ones PASS, failed ones FAIL with the reason (never called). One
 * that this process offers but the verdict has no result for (its probe
 * refused it in the helper: another environment, a device since plugged
 * in) was never vetted: FAIL too, never self-tested here. Returns how many
 * such slots there were: then the verdict is stale (mpce_verdict_forget). */
size_t mpce_vet_apply(mpce_engine *e, const struct mpce_module *m, const struct mpce_verdict *v);

/* Remove the cached verdict on the module open on f (file and memory), so
 * that the next engine vets it again. */
void mpce_verdict_forget(const mpce_engine *e, const struct mpce_module_file *f);

void mpce_verdict_free(struct mpce_verdict *v);

/* Forget the verdicts kept in this process's memory (where no state
 * directory could be written): they are a cache for the process's life,
 * freed here for leak checkers (the fault tests) that count every block. */
void mpce_verdict_memory_clear(void);

/* Set by mpcengine-probe: this process is the isolation. Its engines read
 * cached verdicts and skip failed modules, but never spawn a vet, and
 * self-test the others in process as without isolation. */
extern int mpce_vet_in_helper;

/* Called by the loader as each step of a module's code begins ("load",
 * "entry", "probe", "init", "implprobe", "fini"; `what` names the
 * implementation for "implprobe"), and with "plugin" and the plugin's name
 * once its entry point returned a valid descriptor (no step of its own). NULL except in the vetting helper; while
 * it is set, the loader starts a module whatever [plugin.NAME] enabled says,
 * so that its probe and init are vetted too. */
extern void (*mpce_vet_step_hook)(const char *step, const char *what);

/* ---- the cache (engine/selector/verdicts.c) ------------------------------------ */

/* A valid cached verdict for f on this machine and engine version: 1 with
 * *v filled; 0 when there is none (or it is stale, or f's path cannot be
 * cached). */
int mpce_verdict_read(const mpce_engine *e, const struct mpce_module_file *f,
                      struct mpce_verdict *v);
/* The body of a verdict file after its fingerprint line(s), parsed in place
 * into *v (zeroed by the caller): 0 for a whole, well-formed one ending in
 * "end"; -1 otherwise (torn, foreign or out of memory), *v then to be freed. */
int mpce_verdict_parse(char *body, struct mpce_verdict *v);
/* The whole text of a verdict file, want (the fingerprint) then v's body,
 * as mpce_verdict_parse reads it: malloc'd with its length, NULL when
 * memory ran out. */
char *mpce_verdict_text(const char *want, const struct mpce_verdict *v, size_t *len);
/* v->source of a verdict kept in memory rather than in a file. */
#define MPCE_VERDICT_IN_MEMORY "this process's memory"
/* Write v for f atomically into the first state directory that can take it;
 * 0 with the file's path in where. When none can, it is kept in this
 * process's memory for its later engines: 1, with why the directories
 * could not take it in where; -1 (the same) when even that failed. */
int mpce_verdict_write(const mpce_engine *e, const struct mpce_module_file *f,
                       const struct mpce_verdict *v, char *where, size_t len);

#endif
