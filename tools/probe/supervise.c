/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `mpcengine-probe tune`: under the pins directory's lock, find the rows
 * that are missing or stale, measure them in worker processes, and write
 * the new pins atomically. A worker that dies or goes silent past the
 * effort's budget names its last candidate in its `enter` line: that module
 * is blacklisted by (path, size, mtime) with the reason, and a new worker
 * carries on without it. A candidate that answered wrongly is blacklisted
 * too. Processes that start together tune once: the second finds the rows
 * current when it gets the lock.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/runtime/knobs.h"
#include "tools/bench/bench.h"
#include "tools/probe/probe.h"

extern char **environ;

struct result {
    const struct probe_row *row;
    struct mpce_pins_cand cands[64];
    size_t n_cands;
    char note[400];                 /* why the row could not be measured */
    int done;
    /* The gate's decision, then the winner's knob values and (large rows)
     * the pool's threshold. */
    char winner[64], runner_up[64], verdict[512];
    int measured;                   /* gated: goes into the file */
    char worker_arg[900];           /* "KEY=WINNER[:KNOBS]" for a knobs or slices worker,
                                       "KEY=SPEC|SPEC..." for the pipeline */
    char knobs[160];                /* "" for the defaults */
    char knob_verdict[1400];
    /* The knobs worker's first ranking (kcand lines), fastest first: what
     * the pipeline phase tries beside the pick. */
    char ranked[4][200];
    double ranked_med[4];
    size_t n_ranked;
    uint64_t slice_min;
    char slice_verdict[480];
    /* Where a device implementation starts to beat the best host one in
     * the row's class (crossover.c): 0 and "" when none. */
    uint64_t crossover;
    char crossover_impl[64];
    char crossover_verdict[700];
};

struct tune_state {
    mpce_engine *e;
    const struct probe_opts *o;
    const char *self;
    struct mpce_pins *pins;         /* the file being rebuilt */
    char **skip;                    /* module files workers must not call */
    size_t n_skip;
    int bar;                        /* progress bar on a terminal */
    size_t n_done, n_total;
    const char *phase;              /* "measure", "knobs", "slices", "pipeline" or
                                       "crossover": the worker's subcommand */
    size_t n_wrong;                 /* candidates a phase found wrong for a row
                                       without blacklisting them (xwrong) */
};


static void add_cand(struct result *r, const char *impl, const char *status, double median,
                     double spread, const char *why)
{
    for (size_t i = 0; i < r->n_cands; i++)
        if (strcmp(r->cands[i].impl, impl) == 0) {
            /* What got it blacklisted here outranks "failed: blacklisted". */
            if (strcmp(status, "failed") == 0 && (strcmp(r->cands[i].status, "crashed") == 0 ||
                                                   strcmp(r->cands[i].status, "hung") == 0 ||
                                                   strcmp(r->cands[i].status, "wrong") == 0))
                return;
            free(r->cands[i].impl);
            free(r->cands[i].status);
            free(r->cands[i].why);
            r->cands[i] = r->cands[--r->n_cands];
            break;
        }
    if (r->n_cands >= sizeof(r->cands) / sizeof(r->cands[0]))
        return;
    struct mpce_pins_cand *c = &r->cands[r->n_cands];
    c->impl = strdup(impl);
    c->status = strdup(status);
    c->why = strdup(why ? why : "");
    c->median = median;
    c->spread = spread;
    if (!c->impl || !c->status || !c->why) {
        free(c->impl);
        free(c->status);
        free(c->why);
        return;
    }
    r->n_cands++;
}

static void clear_cands(struct result *r, int keep_bad)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n_cands; i++) {
        int bad = strcmp(r->cands[i].status, "crashed") == 0 ||
                  strcmp(r->cands[i].status, "hung") == 0 ||
                  strcmp(r->cands[i].status, "wrong") == 0;
        if (keep_bad && bad) {
            r->cands[k++] = r->cands[i];
            continue;
        }
        free(r->cands[i].impl);
        free(r->cands[i].status);
        free(r->cands[i].why);
    }
    r->n_cands = k;
}

static void progress(struct tune_state *ts, const struct result *r)
{
    ts->n_done++;
    if (ts->bar) {
        const int width = 30;
        int fill = (int)(width * ts->n_done / (ts->n_total ? ts->n_total : 1));
        fprintf(stderr, "\r[%.*s%*s] %zu/%zu %s %-32s", fill, "##############################",
                width - fill, "", ts->n_done, ts->n_total, ts->phase, r->row->key);
        if (ts->n_done == ts->n_total)
            fputc('\n', stderr);
    } else {
        fprintf(stderr, "%s %zu/%zu %s%s%s\n",
                ts->phase[0] == 'm'   ? "measured"
                : ts->phase[0] == 'k' ? "knobs"
                : ts->phase[0] == 'p' ? "pipeline"
                                      : "threads",
                ts->n_done, ts->n_total, r->row->key, r->note[0] ? ": " : "", r->note);
    }
    fflush(stderr);
}

static struct result *result_of(struct result *res, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(res[i].row->key, key) == 0)
            return &res[i];
    return NULL;
}

static int add_skip(struct tune_state *ts, const char *path)
{
    char **grown = realloc(ts->skip, (ts->n_skip + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    ts->skip = grown;
    if (!(ts->skip[ts->n_skip] = strdup(path)))
        return -1;
    ts->n_skip++;
    return 0;
}

/* Blacklist the module of impl (not the built-in one): 0, or -1 if it cannot
 * be (then the row is given up). */
static int blacklist(struct tune_state *ts, const char *impl, const char *reason)
{
    /* impl may carry the knob values it was running with. */
    const struct mpce_slot *s = mpce_registry_find_named(ts->e, impl);
    if (!s || strcmp(s->module->path, "(built-in)") == 0)
        return -1;
    for (size_t i = 0; i < ts->pins->n_blacklist; i++)
        if (strcmp(ts->pins->blacklist[i].path, s->module->path) == 0)
            return 0;
    struct mpce_pins_blacklist b = {.path = s->module->path,
                                    .size = s->module->size,
                                    .mtime = s->module->mtime,
                                    .reason = (char *)reason};
    if (mpce_pins_add_blacklist(ts->pins, &b) != 0)
        return -1;
    fprintf(stderr, "blacklisted %s: %s\n", s->module->path, reason);
    return add_skip(ts, s->module->path);
}

/* A worker over rows[from..n): its stdout on *fd. */
static pid_t spawn_worker(struct tune_state *ts, struct result *res, size_t from, size_t n,
                          int *fd)
{
    const struct probe_opts *o = ts->o;
    size_t max = 16 + 2 * ts->n_skip + (n - from);
    const char **argv = calloc(max, sizeof(*argv));
    char flags[32];
    if (!argv)
        return -1;
    snprintf(flags, sizeof(flags), "%u", o->flags);
    size_t k = 0;
    argv[k++] = ts->self;
    argv[k++] = ts->phase;
    argv[k++] = "--effort";
    argv[k++] = o->effort;
    argv[k++] = "--flags";
    argv[k++] = flags;
    if (o->config) {
        argv[k++] = "--config";
        argv[k++] = o->config;
    }
    if (o->plugin_path) {
        argv[k++] = "--plugin-path";
        argv[k++] = o->plugin_path;
    }
    for (size_t i = 0; i < ts->n_skip; i++) {
        argv[k++] = "--skip-module";
        argv[k++] = ts->skip[i];
    }
    argv[k++] = "--";
    for (size_t i = from; i < n; i++)
        if (!res[i].done)
            argv[k++] = res[i].worker_arg[0] ? res[i].worker_arg : res[i].row->key;
    argv[k] = NULL;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        free(argv);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    /* For an engine, stderr is the engine's pipe, which it closes when its
     * wait is over: a worker's warning must not kill it then. */
    if (o->for_engine)
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, ts->self, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    free(argv);
    if (rc != 0) {
        close(fds[0]);
        errno = rc;
        return -1;
    }
    *fd = fds[0];
    return pid;
}

/* Where a worker's lines go. */
struct take {
    struct tune_state *ts;
    struct result *res;
    size_t n;
    char entered[96];               /* the candidate called last */
};

/* The rows the pipeline phase scores together (pipeline.c). */
#define PIPELINE_DPF_ROW "dpf.evalall.large"
#define PIPELINE_LPN_ROW "lpn.fold.kbig.large"

/* Keep spec among r's four fastest first-run combinations (kcand lines;
 * the confirming run's are kconf), unless it moves an informational knob
 * (never pinned, so never a pipeline candidate). */
static void rank_combo(mpce_engine *e, struct result *r, const char *spec, double median)
{
    struct mpce_slot *s;
    uint32_t v[MPCE_KNOB_MAX];
    int has;
    if (mpce_registry_find_spec(e, spec, "", &s, v, &has) != MPCE_OK)
        return;
    for (unsigned k = 0; k < s->n_knobs; k++)
        if ((s->knobs[k]->flags & MPCE_KNOB_INFORMATIONAL) && v[k] != s->knobs[k]->default_value)
            return;
    for (size_t i = 0; i < r->n_ranked; i++)
        if (strcmp(r->ranked[i], spec) == 0)
            return;
    size_t at = r->n_ranked < 4 ? r->n_ranked : 4;
    while (at > 0 && median < r->ranked_med[at - 1]) {
        if (at < 4) {
            memcpy(r->ranked[at], r->ranked[at - 1], sizeof(r->ranked[0]));
            r->ranked_med[at] = r->ranked_med[at - 1];
        }
        at--;
    }
    if (at >= 4)
        return;
    snprintf(r->ranked[at], sizeof(r->ranked[0]), "%s", spec);
    r->ranked_med[at] = median;
    if (r->n_ranked < 4)
        r->n_ranked++;
}

/* Parse one protocol line; the row it finished, if any, becomes done. */
static void take_line(void *arg, char *line)
{
    struct take *t = arg;
    struct tune_state *ts = t->ts;
    struct result *res = t->res;
    size_t n = t->n;
    char *entered = t->entered;
    const size_t elen = sizeof(t->entered);
    char key[96], impl[96], status[16];
    double med, mn, mx;
    int pos = 0;
    if (sscanf(line, "enter %95s %95s", key, impl) == 2) {
        /* The implementation alone: a knobs or slices worker names it with
         * the knob values it runs, but blame and results go to the name. */
        impl[mpce_impl_spec_name_len(impl)] = '\0';
        snprintf(entered, elen, "%s", impl);
        return;
    }
    if (sscanf(line, "cand %95s %95s %15s %lf %lf %lf %n", key, impl, status, &med, &mn, &mx,
               &pos) >= 6) {
        struct result *r = result_of(res, n, key);
        if (r)
            add_cand(r, impl, status, med, med > 0 ? (mx - mn) / med : 0, pos ? line + pos : "");
        return;
    }
    char pick[160], pick2[160], spec[200];
    if (sscanf(line, "knobs %95s %95s %159s %n", key, impl, pick, &pos) >= 3) {
        struct result *r = result_of(res, n, key);
        if (r) {
            snprintf(r->knobs, sizeof(r->knobs), "%s", strcmp(pick, "-") == 0 ? "" : pick);
            snprintf(r->knob_verdict, sizeof(r->knob_verdict), "%.890s", pos ? line + pos : "");
        }
        return;
    }
    if (sscanf(line, "kcand %95s %199s %15s %lf", key, spec, status, &med) == 4) {
        struct result *r = result_of(res, n, key);
        if (r && strcmp(status, "ok") == 0)
            rank_combo(ts->e, r, spec, med);
        return;
    }
    if (sscanf(line, "pipeline %159s %159s %n", pick, pick2, &pos) >= 2) {
        /* Both rows take the pipeline's picks, and its verdict. */
        const char *keys[2] = {PIPELINE_DPF_ROW, PIPELINE_LPN_ROW};
        const char *picks[2] = {pick, pick2};
        for (int k = 0; k < 2; k++) {
            struct result *r = result_of(res, n, keys[k]);
            if (!r)
                continue;
            if (strncmp(line + pos, "not measured", 12) != 0)
                snprintf(r->knobs, sizeof(r->knobs), "%s",
                         strcmp(picks[k], "-") == 0 ? "" : picks[k]);
            size_t have = strlen(r->knob_verdict);
            snprintf(r->knob_verdict + have, sizeof(r->knob_verdict) - have, "; %s%.600s",
                     strncmp(line + pos, "not measured", 12) == 0 ? "pipeline " : "",
                     pos ? line + pos : "");
        }
        return;
    }
    if (sscanf(line, "kwrong %95s %95s %n", key, impl, &pos) >= 2) {
        /* A knob whose values change outputs: the module is broken, as
         * surely as one that answers wrongly. */
        struct result *r = result_of(res, n, key);
        char reason[700];
        snprintf(reason, sizeof(reason), "answered wrongly while tuning %s: %.500s", key,
                 pos ? line + pos : "");
        if (r && blacklist(ts, impl, reason) == 0)
            add_cand(r, impl, "wrong", 0, 0, pos ? line + pos : "");
        return;
    }
    if (sscanf(line, "xwrong %95s %95s %n", key, impl, &pos) >= 2) {
        /* A device whose outputs differ from the row's host reference
         * somewhere in its class: never ranked for the row (which one is
         * wrong is not proven, so its module is not blacklisted). */
        struct result *r = result_of(res, n, key);
        if (r) {
            add_cand(r, impl, "wrong", 0, 0, pos ? line + pos : "");
            ts->n_wrong++;
        }
        return;
    }
    char value[32];
    if (sscanf(line, "slice %95s %95s %31s %n", key, impl, value, &pos) >= 3) {
        struct result *r = result_of(res, n, key);
        if (r) {
            r->slice_min = strcmp(value, "never") == 0 ? MPCE_PINS_NEVER
                                                       : strtoull(value, NULL, 10);
            snprintf(r->slice_verdict, sizeof(r->slice_verdict), "%.470s",
                     pos ? line + pos : "");
        }
        return;
    }
    if (sscanf(line, "xover %95s %95s %31s %n", key, impl, value, &pos) >= 3) {
        struct result *r = result_of(res, n, key);
        if (r) {
            r->crossover = strtoull(value, NULL, 10);
            snprintf(r->crossover_impl, sizeof(r->crossover_impl), "%.63s",
                     r->crossover ? impl : "");
            snprintf(r->crossover_verdict, sizeof(r->crossover_verdict), "%.690s",
                     pos ? line + pos : "");
        }
        return;
    }
    if (sscanf(line, "skip %95s %n", key, &pos) >= 1) {
        struct result *r = result_of(res, n, key);
        if (r)
            snprintf(r->note, sizeof(r->note), "%.390s", pos ? line + pos : "not measured");
        return;
    }
    if (sscanf(line, "done %95s", key) == 1) {
        struct result *r = result_of(res, n, key);
        if (r && !r->done) {
            r->done = 1;
            entered[0] = '\0';
            progress(ts, r);
        }
    }
}

/* Run workers until every row is done, surviving crashes and hangs. */
static void run_rows(struct tune_state *ts, struct result *res, size_t n)
{
    const unsigned budget_ms = ts->e->cfg.tune.hang_ms;
    size_t from = 0;
    while (from < n) {
        while (from < n && res[from].done)
            from++;
        if (from >= n)
            break;
        int fd;
        pid_t pid = spawn_worker(ts, res, from, n, &fd);
        if (pid < 0) {
            for (size_t i = from; i < n; i++)
                snprintf(res[i].note, sizeof(res[i].note), "cannot start a worker (%s): %s",
                         ts->self, strerror(errno));
            return;
        }
        struct take take = {.ts = ts, .res = res, .n = n, .entered = ""};
        struct mpce_lines lines = {.have = 0};
        long long deadline = mpce_monotonic_ms() + budget_ms;
        int hung = 0;
        for (;;) {
            long long left = deadline - mpce_monotonic_ms();
            if (left <= 0) {
                hung = 1;
                break;
            }
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            int r = poll(&pfd, 1, (int)left);
            if (r < 0 && errno != EINTR)
                break;
            if (r <= 0)
                continue;
            ssize_t got = mpce_lines_read(&lines, fd, take_line, &take);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                break;
            deadline = mpce_monotonic_ms() + budget_ms;
        }
        const char *entered = take.entered;
        if (hung)
            kill(pid, SIGKILL);
        close(fd);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        while (from < n && res[from].done)
            from++;
        if (from >= n)
            break;
        /* The worker stopped inside row `from`, in the candidate it entered last. */
        struct result *r = &res[from];
        if (ts->phase[0] == 'p' && entered[0]) {
            /* The pipeline runs both rows' code at once: the row is that of
             * the module it entered last. */
            const struct mpce_slot *bs = mpce_registry_find(ts->e, entered);
            for (size_t i = from; bs && i < n; i++)
                if (!res[i].done && mpce_op_info[res[i].row->op].prim == bs->prim)
                    r = &res[i];
        }
        char reason[512];
        const char *what = hung ? "hung" : "crashed";
        if (hung)
            snprintf(reason, sizeof(reason), "hung (no progress for %.1f s, [tune] "
                     "hang_timeout) while tuning %s", budget_ms / 1000.0, r->row->key);
        else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) {
            /* Its output went nowhere: not the module's doing. */
            snprintf(r->note, sizeof(r->note), "not measured: the worker lost its output "
                     "(SIGPIPE)");
            r->done = 1;
            progress(ts, r);
            continue;
        } else if (WIFSIGNALED(status))
            snprintf(reason, sizeof(reason), "crashed (signal %d, %s) while tuning %s",
                     WTERMSIG(status), strsignal(WTERMSIG(status)), r->row->key);
        else /* a sanitizer's handler, or exit() inside a module */
            snprintf(reason, sizeof(reason), "crashed (the worker exited with status %d) while "
                     "tuning %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1, r->row->key);
        if (ts->phase[0] == 'p') {
            /* The module it entered last is blamed, in its own row; both
             * rows say why the pipeline was not measured (it needs both, so
             * it is not run again), and their knobs stay as their own tunes
             * left them until the gate decides again without the module. */
            for (size_t i = from; i < n; i++) {
                if (res[i].done)
                    continue;
                size_t have = strlen(res[i].knob_verdict);
                snprintf(res[i].knob_verdict + have, sizeof(res[i].knob_verdict) - have,
                         "; pipeline not measured: %.400s%s%.64s", reason,
                         entered[0] ? " in " : "", entered);
                res[i].done = 1;
                progress(ts, &res[i]);
            }
            if (entered[0] && blacklist(ts, entered, reason) == 0)
                add_cand(r, entered, what, 0, 0, reason);
            continue;
        }
        if (ts->phase[0] == 's' || ts->phase[0] == 'k') {
            /* The winner crashed or hung when its calls were split over
             * threads, as the application's would be, or with other knob
             * values: it is blacklisted like any other, and the row is
             * decided again without it. */
            if (ts->phase[0] == 's')
                snprintf(r->slice_verdict, sizeof(r->slice_verdict), "not measured: %.400s",
                         reason);
            else
                snprintf(r->knob_verdict, sizeof(r->knob_verdict), "not measured: %.400s",
                         reason);
            if (entered[0] && blacklist(ts, entered, reason) == 0)
                add_cand(r, entered, what, 0, 0, reason);
            r->done = 1;
            progress(ts, r);
            continue;
        }
        clear_cands(r, 1);
        if (entered[0] && blacklist(ts, entered, reason) == 0) {
            add_cand(r, entered, what, 0, 0, reason);
            continue; /* the row again, without that module */
        }
        snprintf(r->note, sizeof(r->note), "not measured: %.300s%s%.64s", reason,
                 entered[0] ? " in " : "", entered);
        r->done = 1;
        progress(ts, r);
    }
}

/* Whether w declares a knob, tuned or informational, that changes op; a
 * device or asynchronous implementation is not timed here at all. */
static int has_knobs_for(const struct mpce_slot *w, enum mpce_op_id op)
{
    if ((w->flags & MPCE_IMPL_ASYNC) || (w->memory & MPCE_MEM_DEVICE))
        return 0;
    for (unsigned k = 0; k < w->n_knobs; k++)
        if (mpce_knob_affects(w, k, op))
            return 1;
    return 0;
}

/* spec as "IMPL:every knob's value" (or "IMPL"), so that two names of the
 * same values compare equal; "" if it names nothing usable. */
static void full_spec(mpce_engine *e, const char *spec, char *out, size_t len)
{
    struct mpce_slot *s;
    uint32_t v[MPCE_KNOB_MAX];
    int has;
    char list[160];
    out[0] = '\0';
    if (mpce_registry_find_spec(e, spec, "", &s, v, &has) != MPCE_OK)
        return;
    mpce_knobs_format(s, v, list, sizeof(list));
    snprintf(out, len, "%s%s%.150s", s->impl->name, list[0] ? ":" : "", list);
}

/* Whether r's winner had its knobs measured just now. */
static int pipeline_ready(mpce_engine *e, const struct result *r)
{
    const struct mpce_slot *w = r->measured && r->winner[0] ? mpce_registry_find(e, r->winner)
                                                            : NULL;
    return w != NULL && has_knobs_for(w, r->row->op) && r->knob_verdict[0] &&
           strncmp(r->knob_verdict, "not measured", 12) != 0 && r->n_ranked > 0;
}

/* r's side of the pipeline: its pick, its defaults, then its fastest other
 * combinations, at most four. */
static void pipeline_arg(mpce_engine *e, struct result *r)
{
    char specs[4][200], cand[200], pick[240];
    size_t n = 0;
    snprintf(pick, sizeof(pick), "%s%s%s", r->winner, r->knobs[0] ? ":" : "", r->knobs);
    full_spec(e, pick, specs[n++], sizeof(specs[0]));
    full_spec(e, r->winner, cand, sizeof(cand));
    if (strcmp(cand, specs[0]) != 0)
        snprintf(specs[n++], sizeof(specs[0]), "%s", cand);
    for (size_t i = 0; i < r->n_ranked && n < 4; i++) {
        full_spec(e, r->ranked[i], cand, sizeof(cand));
        int seen = cand[0] == '\0';
        for (size_t k = 0; k < n && !seen; k++)
            seen = strcmp(specs[k], cand) == 0;
        if (!seen)
            snprintf(specs[n++], sizeof(specs[0]), "%s", cand);
    }
    size_t used = (size_t)snprintf(r->worker_arg, sizeof(r->worker_arg), "%s=", r->row->key);
    for (size_t i = 0; i < n && used < sizeof(r->worker_arg); i++)
        used += (size_t)snprintf(r->worker_arg + used, sizeof(r->worker_arg) - used, "%s%s",
                                 i ? "|" : "", specs[i]);
    r->done = 0;
}

/* The priority order "auto" follows for a row without pins (this engine
 * reads none). */
static size_t priority_order(mpce_engine *e, const struct probe_row *row, const char **names,
                             size_t max)
{
    const struct mpce_table *t = e->table;
    const struct mpce_route_entry *en = &t->e[row->op][row->variant][row->size_class];
    size_t n = 0;
    for (unsigned i = 0; i < en->n && n < max; i++)
        names[n++] = e->slots[en->cand[i]]->impl->name;
    return n;
}

/* Every plugin with an implementation of prim: the row depends on all of them. */
static size_t row_plugins(mpce_engine *e, mpce_primitive prim, char **names, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < e->n_slots; i++) {
        const struct mpce_slot *s = e->slots[i];
        if (s->prim != prim || mpce_slot_state(s) == MPCE_ST_SKIPPED || !s->module->name)
            continue;
        size_t k = 0;
        while (k < n && strcmp(names[k], s->module->name) != 0)
            k++;
        if (k == n && n < max)
            names[n++] = s->module->name;
    }
    return n;
}

/* dir, made with its missing parents (mode: the last component's; parents
 * 0755), and writable by this process. */
static int writable_dir(const char *dir, mode_t mode)
{
    char path[4096];
    int w = snprintf(path, sizeof(path), "%s", dir);
    if (w < 0 || (size_t)w >= sizeof(path))
        return 0; /* no path this long can be opened either */
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return 0;
        *p = '/';
    }
    if (mkdir(path, mode) != 0 && errno != EEXIST)
        return 0;
    return access(path, W_OK | X_OK) == 0;
}

static void utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void print_row(const struct mpce_pins_row *row, FILE *out)
{
    fprintf(out, "%-28s %-24s %-24s %s\n", row->key, row->winner[0] ? row->winner : "-",
            row->runner_up[0] ? row->runner_up : "-", row->verdict);
    if (row->knob_verdict && row->knob_verdict[0])
        fprintf(out, "%-28s %-24s %-24s knobs: %s; %s\n", "", "", "",
                row->knobs && row->knobs[0] ? row->knobs : "defaults", row->knob_verdict);
    if (row->slice_verdict && row->slice_verdict[0])
        fprintf(out, "%-28s %-24s %-24s threads: %s\n", "", "", "", row->slice_verdict);
    if (row->crossover_verdict && row->crossover_verdict[0])
        fprintf(out, "%-28s %-24s %-24s device: %s\n", "", "", "", row->crossover_verdict);
}

/* The verdicts in force for the planned rows, when nothing needed tuning. */
static void print_current(const struct probe_row *plan, size_t n, const struct mpce_pins *p,
                          const struct mpce_pins *sys, FILE *out)
{
    fprintf(out, "%-28s %-24s %-24s %s\n", "row", "winner", "runner-up", "verdict");
    for (size_t i = 0; i < n; i++) {
        const struct mpce_pins_row *row = mpce_pins_find_row(sys, plan[i].key);
        if (!row)
            row = mpce_pins_find_row(p, plan[i].key);
        if (row)
            print_row(row, out);
    }
}

static void print_table(const struct mpce_pins *p, struct result *res, size_t n, FILE *out)
{
    fprintf(out, "%-28s %-24s %-24s %s\n", "row", "winner", "runner-up", "verdict");
    for (size_t i = 0; i < n; i++) {
        const struct mpce_pins_row *row = mpce_pins_find_row(p, res[i].row->key);
        if (!row) {
            fprintf(out, "%-28s %-24s %-24s %s\n", res[i].row->key, "-", "-",
                    res[i].note[0] ? res[i].note : "not measured");
            continue;
        }
        print_row(row, out);
    }
}

/* A candidate's result in a second, independent measurement of its row. */
static const struct mpce_pins_cand *cand_in(const struct result *r, const char *impl)
{
    for (size_t k = 0; k < r->n_cands; k++)
        if (strcmp(r->cands[k].impl, impl) == 0)
            return &r->cands[k];
    return NULL;
}

/*
 * Every row measured again, in new worker processes (new buffers, new
 * layout): a row's order can hinge on where its buffers landed, and the
 * spread within one run does not show that. Each ok candidate then keeps
 * the mean of its two medians and, as its spread, the larger of its own
 * spreads and of the gap between the two runs; so a challenger must beat
 * the default by more than the run-to-run difference too. A candidate that
 * went wrong, crashed or hung in the second run takes that result.
 */
static int replicate(struct tune_state *ts, struct result *res, size_t n)
{
    struct result *again = calloc(n, sizeof(*again));
    if (!again)
        return -1;
    for (size_t i = 0; i < n; i++) {
        again[i].row = res[i].row;
        again[i].done = res[i].done && res[i].note[0]; /* nothing to repeat */
    }
    ts->n_done = 0;
    fprintf(stderr, "measuring every row again, in new processes\n");
    run_rows(ts, again, n);
    for (size_t i = 0; i < n; i++) {
        struct result *r = &res[i];
        if (again[i].note[0] && !r->note[0])
            snprintf(r->note, sizeof(r->note), "%s", again[i].note);
        for (size_t k = 0; k < r->n_cands; k++) {
            struct mpce_pins_cand *c = &r->cands[k];
            const struct mpce_pins_cand *c2 = cand_in(&again[i], c->impl);
            if (!c2 || strcmp(c->status, "ok") != 0)
                continue;
            if (strcmp(c2->status, "ok") == 0) {
                double mean = (c->median + c2->median) / 2;
                double gap = mean > 0 ? (c->median > c2->median ? c->median - c2->median
                                                                : c2->median - c->median) /
                                            mean
                                      : 0;
                c->spread = c->spread > c2->spread ? c->spread : c2->spread;
                c->spread = c->spread > gap ? c->spread : gap;
                c->median = mean;
            } else if (strcmp(c2->status, "screened") != 0) {
                add_cand(r, c2->impl, c2->status, 0, 0, c2->why);
                k--; /* add_cand replaced c with the last candidate */
            }
        }
        clear_cands(&again[i], 0);
    }
    free(again);
    return 0;
}

/* A module blacklisted in a later row may have run (and won) in an earlier
 * one: nowhere is it a candidate now. */
static void drop_blacklisted(mpce_engine *e, const struct mpce_pins *kept, struct result *r)
{
    for (size_t k = 0; k < r->n_cands; k++) {
        struct mpce_pins_cand *c = &r->cands[k];
        const struct mpce_slot *s = mpce_registry_find(e, c->impl);
        if (!s || (strcmp(c->status, "ok") != 0 && strcmp(c->status, "screened") != 0))
            continue;
        for (size_t b = 0; b < kept->n_blacklist; b++) {
            if (strcmp(kept->blacklist[b].path, s->module->path) != 0)
                continue;
            char why[600];
            snprintf(why, sizeof(why), "its module is blacklisted: %.500s",
                     kept->blacklist[b].reason);
            char *w = strdup(why), *st = strdup("failed");
            if (!w || !st) {
                free(w);
                free(st);
                break;
            }
            free(c->why);
            free(c->status);
            c->why = w;
            c->status = st;
            c->median = c->spread = 0;
            break;
        }
    }
}

static void decide(mpce_engine *e, const struct mpce_pins *kept, struct result *res, size_t n);

/* Rows left without a winner when theirs was blacklisted after the gate
 * (its knobs changed outputs, or it crashed split over threads) are
 * measured again without its module: their other candidates may have been
 * screened out against it and never timed in full. */
static void remeasure_orphans(struct tune_state *ts, struct result *res, size_t n)
{
    size_t again = 0;
    for (size_t i = 0; i < n; i++) {
        int screened = 0;
        for (size_t k = 0; k < res[i].n_cands; k++)
            screened |= strcmp(res[i].cands[k].status, "screened") == 0;
        res[i].done = 1;
        if (!res[i].measured || res[i].winner[0] || !screened || res[i].note[0])
            continue;
        clear_cands(&res[i], 1);
        res[i].worker_arg[0] = '\0';
        res[i].done = 0;
        again++;
    }
    if (again == 0)
        return;
    const char *phase = ts->phase;
    ts->phase = "measure";
    ts->n_done = 0;
    ts->n_total = again;
    fprintf(stderr, "measuring %zu rows again without the module blacklisted since\n", again);
    run_rows(ts, res, n);
    ts->phase = phase;
    decide(ts->e, ts->pins, res, n);
}

/* A phase on the rows' winners (the rows not done, worker_arg KEY=WINNER):
 * a winner blacklisted there changes its rows' decisions, and rows left
 * without one are measured again. */
static void run_winner_phase(struct tune_state *ts, struct result *res, size_t n,
                             const char *phase, size_t count)
{
    size_t blacklisted = ts->pins->n_blacklist, wrong = ts->n_wrong;
    ts->phase = phase;
    ts->n_done = 0;
    ts->n_total = count;
    run_rows(ts, res, n);
    if (ts->pins->n_blacklist != blacklisted || ts->n_wrong != wrong) {
        decide(ts->e, ts->pins, res, n);
        remeasure_orphans(ts, res, n);
    }
}

/* The gate for every row that was measured. */
static void decide(mpce_engine *e, const struct mpce_pins *kept, struct result *res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct probe_row *pr = res[i].row;
        if (res[i].note[0] || (!res[i].measured && !res[i].done))
            continue;
        drop_blacklisted(e, kept, &res[i]);
        const char *order[256];
        size_t n_order = priority_order(e, pr, order, 256);
        struct mpce_pins_row row = {.key = (char *)pr->key, .cands = res[i].cands,
                                    .n_cands = res[i].n_cands};
        char winner[64];
        snprintf(winner, sizeof(winner), "%s", res[i].winner);
        probe_gate(&row, order, n_order, res[i].winner, res[i].runner_up, res[i].verdict,
                   sizeof(res[i].verdict));
        /* A threshold or knob values measured for another winner say
         * nothing of this one. */
        if (res[i].measured && winner[0] && strcmp(winner, res[i].winner) != 0) {
            if (res[i].slice_min || res[i].slice_verdict[0]) {
                res[i].slice_min = 0;
                snprintf(res[i].slice_verdict, sizeof(res[i].slice_verdict), "not measured: "
                         "the winner %.64s was blacklisted after it was measured", winner);
            }
            if (res[i].knob_verdict[0] &&
                strncmp(res[i].knob_verdict, "not measured", 12) != 0) {
                res[i].knobs[0] = '\0';
                snprintf(res[i].knob_verdict, sizeof(res[i].knob_verdict), "not measured: the "
                         "winner %.64s was blacklisted after its knobs were measured", winner);
            }
        }
        /* A crossover whose device implementation was blacklisted since. */
        if (res[i].crossover_impl[0]) {
            int ran = 0;
            for (size_t k = 0; k < res[i].n_cands; k++)
                ran |= strcmp(res[i].cands[k].impl, res[i].crossover_impl) == 0 &&
                       (strcmp(res[i].cands[k].status, "ok") == 0 ||
                        strcmp(res[i].cands[k].status, "screened") == 0);
            if (!ran) {
                snprintf(res[i].crossover_verdict, sizeof(res[i].crossover_verdict),
                         "not kept: %.64s was blacklisted after its crossover was measured",
                         res[i].crossover_impl);
                res[i].crossover = 0;
                res[i].crossover_impl[0] = '\0';
            }
        }
        res[i].measured = 1;
    }
}

/* Whether s runs on a device or asynchronously: what the crossover phase
 * times against the host implementations. */
static int device_impl(const struct mpce_slot *s)
{
    return (s->flags & MPCE_IMPL_ASYNC) || (s->memory & MPCE_MEM_DEVICE);
}

/* For the crossover phase: the row's fastest device candidate that ran
 * correctly (ok, or screened at the row's shape: it may still win at the
 * class's top) and its best host one (the winner when that is a host one,
 * with its knob values), as "KEY=DEVICE/HOST[:KNOBS]"; 0 when the row lacks
 * either. */
static int crossover_arg(mpce_engine *e, struct result *r)
{
    const struct mpce_pins_cand *dev = NULL, *host = NULL;
    for (size_t k = 0; k < r->n_cands; k++) {
        const struct mpce_pins_cand *c = &r->cands[k];
        const struct mpce_slot *s = mpce_registry_find(e, c->impl);
        const int ran = strcmp(c->status, "ok") == 0 || strcmp(c->status, "screened") == 0;
        if (s == NULL || !ran)
            continue;
        if (device_impl(s)) {
            if (!dev || c->median < dev->median)
                dev = c;
        } else if (strcmp(c->impl, r->winner) == 0) {
            host = c;
        } else if (!host || (strcmp(host->impl, r->winner) != 0 && c->median < host->median)) {
            host = c;
        }
    }
    if (!dev || !host)
        return 0;
    const int knobs = strcmp(host->impl, r->winner) == 0 && r->knobs[0];
    snprintf(r->worker_arg, sizeof(r->worker_arg), "%s=%s/%s%s%s", r->row->key, dev->impl,
             host->impl, knobs ? ":" : "", knobs ? r->knobs : "");
    return 1;
}

int probe_tune(mpce_engine *e, const struct probe_opts *o, const char *self)
{
    struct probe_row *plan;
    size_t n_plan;
    if (probe_plan(o->effort, o->primitive, &plan, &n_plan) != 0)
        return 2;
    char dirs[2][4096], dir[4096] = "";
    size_t nd = mpce_selector_dirs(&e->cfg, dirs);
    /* The system's directory, else the user's cache (private to the user). */
    for (size_t i = 0; i < nd && !dir[0]; i++)
        if (writable_dir(dirs[i], i == 0 ? 0755 : 0700) &&
            snprintf(dir, sizeof(dir), "%s", dirs[i]) >= (int)sizeof(dir))
            dir[0] = '\0'; /* writable_dir refused longer ones already */
    if (!dir[0]) {
        fprintf(stderr, "mpcengine-probe: no pins directory this user can write or create "
                "(%s%s%s): set [tune] dir in engine.conf to one, or run as root\n", dirs[0],
                nd > 1 ? ", " : "", nd > 1 ? dirs[1] : "");
        free(plan);
        return 1;
    }
    char why[1024], path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, MPCE_PINS_FILE);
    size_t census_added = 0;
    probe_plan_census(dir, o->primitive, &plan, &n_plan, &census_added);
    if (census_added)
        fprintf(stderr, "the census adds %zu classes this machine's applications call\n",
                census_added);
    /* Bounded: an engine waiting on us has its own timeout; a person can
     * interrupt. */
    int lock = mpce_pins_lock(dir, 0, why, sizeof(why));
    if (lock < 0) {
        fprintf(stderr, "waiting for %s/%s: another tune is running\n", dir, MPCE_PINS_LOCK);
        lock = mpce_pins_lock(dir, o->for_engine ? 120000u : 600000u, why, sizeof(why));
    }
    if (lock < 0) {
        fprintf(stderr, "mpcengine-probe: %s\n", why);
        free(plan);
        return 1;
    }
    struct mpce_pins pins, sys;
    enum mpce_pins_read_result rr =
        mpce_selector_read(e, dir, &pins, path, sizeof(path), why, sizeof(why));
    if (rr == MPCE_PINS_READ_ERROR && !e->cfg.privileged) {
        /* A read that failed (memory, I/O) says nothing of the file: writing
         * afresh would drop the rows this tune does not measure again. (A
         * privileged tune also gets this for a file it cannot trust, and
         * replaces that, as before.) */
        fprintf(stderr, "mpcengine-probe: cannot read %s: %s: the tune stops and the file is "
                "kept; try again\n", path, why);
        mpce_pins_free(&pins);
        mpce_pins_unlock(lock);
        free(plan);
        return 1;
    }
    if (rr == MPCE_PINS_READ_CORRUPT || rr == MPCE_PINS_READ_ERROR)
        fprintf(stderr, "mpcengine-probe: replacing %s: %s\n", path, why);
    if (rr != MPCE_PINS_READ_OK)
        mpce_pins_free(&pins);
    char cpu[512];
    mpce_signature_cpu(cpu, sizeof(cpu));
    if (rr == MPCE_PINS_READ_OK && !mpce_selector_header_current(e, &pins, why, sizeof(why))) {
        fprintf(stderr, "mpcengine-probe: %s was %s: starting afresh\n", path, why);
        mpce_pins_free(&pins);
    }
    /* Writing the user's file: rows the system's file has current need
     * nothing (engines use the system's first). */
    char sys_path[4200];
    memset(&sys, 0, sizeof(sys));
    if (strcmp(dir, dirs[0]) != 0 &&
        mpce_selector_read(e, dirs[0], &sys, sys_path, sizeof(sys_path), why, sizeof(why)) !=
            MPCE_PINS_READ_OK)
        mpce_pins_free(&sys);
    /* Rows stale in either file are measured whatever the effort: an engine
     * that finds one spawns a tune, which must not leave it stale. */
    const struct mpce_pins *files[] = {&pins, &sys};
    for (size_t f = 0; f < 2; f++)
        for (size_t i = 0; i < files[f]->n_rows; i++) {
            const struct mpce_pins_row *row = &files[f]->rows[i];
            const struct mpce_pins_row *other = mpce_pins_find_row(files[1 - f], row->key);
            struct probe_row pr;
            int planned = 0;
            for (size_t k = 0; k < n_plan && !planned; k++)
                planned = strcmp(plan[k].key, row->key) == 0;
            if (planned || probe_plan_find(row->key, &pr) != 0 ||
                (o->primitive && strncmp(pr.key, o->primitive, 3) != 0) ||
                mpce_selector_row_current(e, files[f], row, why, sizeof(why)) ||
                (other && mpce_selector_row_current(e, files[1 - f], other, why, sizeof(why))))
                continue;
            struct probe_row *grown = realloc(plan, (n_plan + 1) * sizeof(*grown));
            if (!grown)
                break;
            plan = grown;
            plan[n_plan++] = pr;
        }

    /* Blacklist entries for files that changed since are forgotten. */
    struct mpce_pins kept;
    memset(&kept, 0, sizeof(kept));
    for (size_t i = 0; i < pins.n_blacklist; i++) {
        struct stat sb;
        const struct mpce_pins_blacklist *b = &pins.blacklist[i];
        if (stat(b->path, &sb) == 0 && (uint64_t)sb.st_size == b->size &&
            (int64_t)sb.st_mtime == b->mtime)
            mpce_pins_add_blacklist(&kept, b);
    }

    struct result *res = calloc(n_plan ? n_plan : 1, sizeof(*res));
    size_t n = 0;
    struct tune_state ts = {.e = e, .o = o, .self = self, .pins = &kept, .phase = "measure",
                            .bar = !o->for_engine && isatty(2)};
    for (size_t i = 0; res && i < kept.n_blacklist; i++)
        add_skip(&ts, kept.blacklist[i].path);
    for (size_t i = 0; res && i < n_plan; i++) {
        const struct mpce_pins_row *old = mpce_pins_find_row(&pins, plan[i].key);
        const struct mpce_pins_row *in_sys = mpce_pins_find_row(&sys, plan[i].key);
        if (!o->force &&
            ((old && mpce_selector_row_current(e, &pins, old, why, sizeof(why))) ||
             (in_sys && mpce_selector_row_current(e, &sys, in_sys, why, sizeof(why)))))
            continue;
        res[n++].row = &plan[i];
    }
    int rc = 0;
    if (!res) {
        fprintf(stderr, "mpcengine-probe: out of memory\n");
        rc = 1;
        goto out;
    }
    if (n == 0) {
        fprintf(stderr, "pins in %s are current: nothing to tune (use --force to re-measure)\n",
                path);
        if (!o->for_engine)
            print_current(plan, n_plan, &pins, &sys, stdout);
        goto out;
    }
    ts.n_total = n;
    fprintf(stderr, "tuning %zu rows (%s effort) into %s\n", n, o->effort, path);
    run_rows(&ts, res, n);
    if (strcmp(o->effort, "quick") != 0 && replicate(&ts, res, n) != 0) {
        fprintf(stderr, "mpcengine-probe: out of memory\n");
        rc = 1;
        goto out;
    }

    /* Wrong answers: the module goes on the blacklist too. */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < res[i].n_cands; k++)
            if (strcmp(res[i].cands[k].status, "wrong") == 0) {
                char reason[700];
                snprintf(reason, sizeof(reason), "answered wrongly while tuning %s: %.500s",
                         res[i].row->key, res[i].cands[k].why);
                blacklist(&ts, res[i].cands[k].impl, reason);
            }
    decide(e, &kept, res, n);
    /* Then, except in a quick tune, the winners' knobs: on the large rows
     * (the production shapes), and in a patient tune on every row. A
     * winner blacklisted there changes its rows' decisions. */
    size_t n_knobs = 0;
    for (size_t i = 0; i < n; i++) {
        const struct mpce_slot *w = res[i].measured && res[i].winner[0]
                                        ? mpce_registry_find(e, res[i].winner) : NULL;
        res[i].done = 1;
        res[i].worker_arg[0] = '\0';
        if (w == NULL || !has_knobs_for(w, res[i].row->op) || strcmp(o->effort, "quick") == 0 ||
            (res[i].row->size_class != MPCE_SIZE_CLASSES - 1u &&
             strcmp(o->effort, "patient") != 0))
            continue;
        snprintf(res[i].worker_arg, sizeof(res[i].worker_arg), "%s=%s", res[i].row->key,
                 res[i].winner);
        res[i].done = 0;
        n_knobs++;
    }
    if (n_knobs) {
        fprintf(stderr, "measuring the knobs of %zu winners\n", n_knobs);
        run_winner_phase(&ts, res, n, "knobs", n_knobs);
    }
    /* Then the DPF tree's and the LPN fold's knobs together, the tree's
     * output feeding the fold (pipeline.c), when both were just tuned. */
    struct result *pd = result_of(res, n, PIPELINE_DPF_ROW);
    struct result *pl = result_of(res, n, PIPELINE_LPN_ROW);
    if (pd && pl && pipeline_ready(e, pd) && pipeline_ready(e, pl)) {
        for (size_t i = 0; i < n; i++)
            res[i].done = 1;
        pipeline_arg(e, pd);
        pipeline_arg(e, pl);
        fprintf(stderr, "measuring the DPF tree's and the LPN fold's knobs together\n");
        run_winner_phase(&ts, res, n, "pipeline", 2);
    }
    /* Then, except in a quick tune, the pool's threshold for each large
     * row's winner, with its knob values: the sizes where splitting pays
     * reach down from the large class. A winner blacklisted there changes
     * its rows' decisions. */
    size_t n_slices = 0;
    for (size_t i = 0; i < n; i++) {
        const struct mpce_slot *w = res[i].measured && res[i].winner[0]
                                        ? mpce_registry_find(e, res[i].winner) : NULL;
        res[i].done = 1;
        if (w == NULL || res[i].row->size_class != MPCE_SIZE_CLASSES - 1u ||
            (w->flags & MPCE_IMPL_ASYNC) || (w->memory & MPCE_MEM_DEVICE) ||
            strcmp(o->effort, "quick") == 0)
            continue;
        snprintf(res[i].worker_arg, sizeof(res[i].worker_arg), "%s=%s%s%s", res[i].row->key,
                 res[i].winner, res[i].knobs[0] ? ":" : "", res[i].knobs);
        res[i].done = 0;
        n_slices++;
    }
    if (n_slices) {
        fprintf(stderr, "measuring where threads pay for %zu winners\n", n_slices);
        run_winner_phase(&ts, res, n, "slices", n_slices);
    }
    /* Then, in every effort, where a device implementation starts to win
     * inside each row's class: timed end to end against the row's best host
     * implementation (crossover.c). A device blacklisted there changes its
     * rows' decisions. */
    size_t n_cross = 0;
    for (size_t i = 0; i < n; i++) {
        res[i].done = 1;
        res[i].worker_arg[0] = '\0';
        if (!res[i].measured || res[i].note[0] || !crossover_arg(e, &res[i]))
            continue;
        res[i].done = 0;
        n_cross++;
    }
    if (n_cross) {
        fprintf(stderr, "measuring where a device starts to win in %zu rows\n", n_cross);
        run_winner_phase(&ts, res, n, "crossover", n_cross);
    }

    /* The new file: the old current rows, then this run's. */
    char date[32];
    utc_now(date, sizeof(date));
    struct mpce_pins out;
    memset(&out, 0, sizeof(out));
    if (mpce_pins_set_header(&out, mpce_version(), date, o->effort, cpu) != 0 ||
        mpce_pins_set_policy(&out, mpce_selector_policy(e)) != 0)
        rc = 1;
    for (size_t i = 0; rc == 0 && i < e->n_modules; i++) {
        const struct mpce_module *m = e->modules[i];
        if (m->skipped || !m->name)
            continue;
        char devices[512];
        struct mpce_pins_module rec;
        mpce_selector_module_record(e, m, &rec, devices, sizeof(devices));
        rc = mpce_pins_add_module(&out, &rec) != 0;
    }
    for (size_t i = 0; rc == 0 && i < pins.n_rows; i++)
        if (mpce_selector_row_current(e, &pins, &pins.rows[i], why, sizeof(why)))
            rc = mpce_pins_add_row(&out, &pins.rows[i]) != 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const struct probe_row *pr = res[i].row;
        if (!res[i].measured)
            continue;
        char *plugins[64];
        struct mpce_pins_row row = {.key = (char *)pr->key,
                                    .shape = (char *)pr->shape,
                                    .winner = res[i].winner,
                                    .runner_up = res[i].runner_up,
                                    .verdict = res[i].verdict,
                                    .plugins = plugins,
                                    .cands = res[i].cands,
                                    .n_cands = res[i].n_cands,
                                    .slice_min = res[i].slice_min,
                                    .slice_verdict = res[i].slice_verdict,
                                    .knobs = res[i].knobs,
                                    .knob_verdict = res[i].knob_verdict,
                                    .crossover = res[i].crossover,
                                    .crossover_impl = res[i].crossover_impl,
                                    .crossover_verdict = res[i].crossover_verdict};
        row.n_plugins = row_plugins(e, mpce_op_info[pr->op].prim, plugins, 64);
        rc = mpce_pins_put_row(&out, &row) != 0;
    }
    for (size_t i = 0; rc == 0 && i < kept.n_blacklist; i++)
        rc = mpce_pins_add_blacklist(&out, &kept.blacklist[i]) != 0;
    if (rc != 0) {
        fprintf(stderr, "mpcengine-probe: out of memory\n");
    } else if (mpce_pins_write(path, &out, why, sizeof(why)) != 0) {
        fprintf(stderr, "mpcengine-probe: %s\n", why);
        rc = 1;
    } else {
        fprintf(stderr, "pins written to %s\n", path);
        if (!o->for_engine)
            print_table(&out, res, n, stdout);
    }
    mpce_pins_free(&out);
out:
    mpce_pins_unlock(lock);
    for (size_t i = 0; res && i < n; i++)
        clear_cands(&res[i], 0);
    for (size_t i = 0; i < ts.n_skip; i++)
        free(ts.skip[i]);
    free(ts.skip);
    free(res);
    mpce_pins_free(&kept);
    mpce_pins_free(&pins);
    mpce_pins_free(&sys);
    free(plan);
    return rc;
}
