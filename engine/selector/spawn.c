/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Starting the probe helper for an engine. The helper detaches at once (its
 * first process exits, so nothing is left to reap) and writes its progress
 * to a pipe that is relayed to the engine's log: the library itself never
 * writes to stderr. The wait is bounded by [tune] timeout, whatever the
 * helper does; after it, the helper goes on alone and writes pins for the
 * next process.
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
#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "engine/selector/selector.h"

extern char **environ;


/* Each reason to start nothing is logged once per process. */
static void once(const mpce_engine *e, int *said, mpce_log_level level, const char *fmt,
                 const char *a, const char *b)
{
    if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
        mpce_log(&e->log, level, NULL, fmt, a, b);
}

/* Whether dir exists and can be written, or could be created: the nearest
 * existing ancestor can be written. */
static int could_write(const char *dir)
{
    char path[4096];
    int w = snprintf(path, sizeof(path), "%s", dir);
    if (w < 0 || (size_t)w >= sizeof(path))
        return 0; /* no path this long can be opened either */
    for (;;) {
        struct stat sb;
        if (stat(path, &sb) == 0)
            return S_ISDIR(sb.st_mode) && access(path, W_OK | X_OK) == 0;
        char *slash = strrchr(path, '/');
        if (slash == NULL || slash == path)
            return access("/", W_OK | X_OK) == 0;
        *slash = '\0';
    }
}

size_t mpce_selector_opts_argv(const mpce_options *opts, const char **argv, size_t n,
                               char flags[32])
{
    snprintf(flags, 32, "%u", opts ? opts->flags : 0u);
    argv[n++] = "--flags";
    argv[n++] = flags;
    if (opts && opts->config_path) {
        argv[n++] = "--config";
        argv[n++] = opts->config_path;
    }
    if (opts && opts->plugin_path) {
        argv[n++] = "--plugin-path";
        argv[n++] = opts->plugin_path;
    }
    return n;
}

const char *mpce_selector_default_helper_override;

const char *mpce_selector_helper(const mpce_engine *e)
{
    if (e->cfg.tune.helper)
        return e->cfg.tune.helper;
    return mpce_selector_default_helper_override ? mpce_selector_default_helper_override
                                                 : MPCE_PROBE_HELPER;
}

int mpce_selector_secure(void)
{
#if defined(__linux__)
    return getauxval(AT_SECURE) != 0;
#else
    return 0;
#endif
}

int mpce_selector_helper_ok(const mpce_engine *e, const char *helper, char *why, size_t len)
{
    struct stat sb;
    if (stat(helper, &sb) != 0) {
        const int err = errno;
        snprintf(why, len, "%s: %s", helper, strerror(err));
        return err == ENOENT || err == ENOTDIR ? 0 : -1;
    }
    if (!S_ISREG(sb.st_mode) || !(sb.st_mode & S_IXUSR)) {
        snprintf(why, len, "%s is not an executable file", helper);
        return -1;
    }
    if (e->cfg.privileged && (sb.st_uid != 0 || (sb.st_mode & (S_IWGRP | S_IWOTH)))) {
        snprintf(why, len, "%s is not owned by root or is writable by others: a privileged "
                 "process does not run it", helper);
        return -1;
    }
    return 1;
}

ssize_t mpce_lines_read(struct mpce_lines *l, int fd, mpce_line_fn fn, void *arg)
{
    ssize_t got = read(fd, l->buf + l->have, sizeof(l->buf) - 1 - l->have);
    if (got < 0)
        return got;
    l->have += (size_t)got;
    l->buf[l->have] = '\0';
    char *line = l->buf, *nl;
    while ((nl = strchr(line, '\n')) != NULL) {
        *nl = '\0';
        fn(arg, line);
        line = nl + 1;
    }
    l->have = strlen(line);
    memmove(l->buf, line, l->have + 1);
    if (l->have == sizeof(l->buf) - 1 || (got == 0 && l->have)) {
        fn(arg, l->buf);
        l->have = 0;
    }
    return got;
}

/* One line of the helper's progress into the log. */
static void log_line(void *arg, char *line)
{
    const mpce_engine *e = arg;
    if (line[0])
        mpce_log(&e->log, MPCE_LOG_INFO, NULL, "tune: %s", line);
}

/* Relay the helper's lines until it closes its end (0) or the deadline
 * passes (1); reap its first process when it exits. */
/* Whether the helper's first process is gone: reaped now, or already (an
 * application that ignores SIGCHLD or reaps every child itself). */
static int first_gone(pid_t first)
{
    pid_t r = waitpid(first, NULL, WNOHANG);
    return r == first || (r < 0 && errno == ECHILD);
}

static int relay(mpce_engine *e, int fd, pid_t first, int *reaped, long long deadline)
{
    struct mpce_lines lines = {.have = 0};
    for (;;) {
        if (!*reaped && first_gone(first))
            *reaped = 1;
        long long left = deadline - mpce_monotonic_ms();
        if (left <= 0)
            return 1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        /* Wake at least every 100 ms to reap the first process. */
        int r = poll(&pfd, 1, (int)(left < 100 ? left : 100));
        if (r <= 0)
            continue;
        ssize_t got = mpce_lines_read(&lines, fd, log_line, e);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
    }
}

int mpce_selector_spawn_helper(const char *helper, const char *const *argv,
                               const struct mpce_spawn_fd *fds, size_t n_fds, int own_group,
                               pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    int stderr_placed = 0, highest = 2;
    for (size_t i = 0; i < n_fds; i++) {
        stderr_placed |= fds[i].to == 2;
        highest = fds[i].to > highest ? fds[i].to : highest;
    }
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (!stderr_placed)
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    for (size_t i = 0; i < n_fds; i++)
        posix_spawn_file_actions_adddup2(&fa, fds[i].from, fds[i].to);
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP
    posix_spawn_file_actions_addclosefrom_np(&fa, highest + 1);
#else
    (void)highest;
#endif
    /* The application's signal mask and dispositions are its own. */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (own_group) {
        posix_spawnattr_setpgroup(&attr, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&attr, flags);
    int rc = posix_spawn(pid, helper, &fa, &attr, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int mpce_selector_spawn(mpce_engine *e, const mpce_options *opts, int force, unsigned wait_ms)
{
    static int said_helper, said_dir, said_secure;
    const char *helper = mpce_selector_helper(e);
    char why[4200];
    if (mpce_selector_secure()) {
        /* A setuid/setgid process would run the helper with privileges it
         * cannot write pins with anyway. */
        once(e, &said_secure, MPCE_LOG_INFO, "%s%s", "a setuid or setgid process does not "
             "start the probe helper: \"auto\" keeps priority order until `mpcengine tune` "
             "runs as root", "");
        return 0;
    }
    const int helper_state = mpce_selector_helper_ok(e, helper, why, sizeof(why));
    if (helper_state != 1) {
        /* Not there is a normal setup (no tools package); there but not
         * runnable is a broken one. */
        once(e, &said_helper, helper_state == 0 ? MPCE_LOG_INFO : MPCE_LOG_WARNING,
             "no probe helper (%s): \"auto\" keeps priority order until `mpcengine tune` "
             "runs%s", why, helper_state == 0 ? "" : "; fix it, or set [tune] helper");
        return 0;
    }
    char dirs[2][4096];
    size_t nd = mpce_selector_dirs(&e->cfg, dirs);
    int writable = 0;
    for (size_t i = 0; i < nd && !writable; i++)
        writable = could_write(dirs[i]);
    if (!writable) {
        snprintf(why, sizeof(why), "%.2000s%s%.2000s", dirs[0], nd > 1 ? ", " : "",
                 nd > 1 ? dirs[1] : "");
        once(e, &said_dir, MPCE_LOG_WARNING, "no pins directory this process can write (%s): "
             "\"auto\" keeps priority order; set [tune] dir in engine.conf to one it can, or "
             "run `mpcengine tune` as a user who can%s", why, "");
        return 0;
    }

    char flags[32];
    const char *argv[16];
    size_t n = 0;
    argv[n++] = helper;
    argv[n++] = "tune";
    argv[n++] = "--for-engine";
    argv[n++] = "--effort";
    argv[n++] = "quick";
    if (force)
        argv[n++] = "--force";
    n = mpce_selector_opts_argv(opts, argv, n, flags);
    argv[n] = NULL;

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "cannot start the probe helper: pipe: %s",
                 strerror(errno));
        return 0;
    }
    const struct mpce_spawn_fd place[] = {{fds[1], 2}};
    pid_t pid;
    int rc = mpce_selector_spawn_helper(helper, argv, place, 1, 0, &pid);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        mpce_log(&e->log, MPCE_LOG_WARNING, NULL, "cannot start the probe helper %s: %s",
                 helper, strerror(rc));
        return 0;
    }
    int reaped = 0, done = 0;
    const long long start = mpce_monotonic_ms();
    if (wait_ms > 0) {
        done = !relay(e, fds[0], pid, &reaped, start + wait_ms);
        if (!done)
            mpce_log(&e->log, MPCE_LOG_INFO, NULL,
                     "the tune did not finish within [tune] timeout = %.1f s: \"auto\" keeps "
                     "priority order in this process; the helper goes on and writes pins "
                     "for the next one", wait_ms / 1000.0);
    } else {
        mpce_log(&e->log, MPCE_LOG_INFO, NULL, "tuning in the background (%s): \"auto\" keeps "
                 "priority order in this process",
                 e->cfg.tune.mode == MPCE_TUNE_BACKGROUND ? "[tune] mode = background"
                                                          : "[tune] timeout = 0");
    }
    close(fds[0]);
    /* The first process only detaches: it exits at once. It gets what is
     * left of the wait (at least 100 ms when there is none: background);
     * one still there is stuck before detaching and is stopped, never left
     * a zombie. */
    const long long until = start + (wait_ms > 100 ? wait_ms : 100);
    while (!reaped && !(reaped = first_gone(pid)) && mpce_monotonic_ms() < until) {
        struct timespec ms = {0, 5000000};
        nanosleep(&ms, NULL);
    }
    if (!reaped) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        mpce_log(&e->log, MPCE_LOG_INFO, NULL, "the probe helper %s did not detach in time and "
                 "was stopped: no tune this time", helper);
    }
    return done;
}
