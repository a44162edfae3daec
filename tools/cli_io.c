/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli.h"
#include "tools/cli_io.h"
#include "tools/cli_secret.h"

/* How a message names an input or output: "standard input" or 'path'. */
static const char *shown(const char *path, const char *std_name, char *buf, size_t len)
{
    if (cli_is_std(path))
        return std_name;
    snprintf(buf, len, "'%s'", path);
    return buf;
}

static int size_fail(const struct cli_cmd *cmd, const char *name, const char *where, size_t got,
                     size_t unit, size_t exact, const char *hint)
{
    const char *sep = hint != NULL ? " = " : "";

    if (exact != 0)
        return cli_fail(cmd, CLI_EXIT_USAGE, "--%s: %s is %zu bytes, expected %s%s%zu", name,
                        where, got, hint != NULL ? hint : "", sep, exact);
    return cli_fail(cmd, CLI_EXIT_USAGE,
                    "--%s: %s is %zu bytes, expected a non-zero multiple of %zu", name, where,
                    got, unit);
}

static int size_ok(size_t got, size_t unit, size_t exact)
{
    return exact != 0 ? got == exact : got != 0 && got % unit == 0;
}

int cli_read_fd(int fd, size_t cap, size_t max, uint8_t **buf, size_t *len)
{
    size_t got = 0;
    uint8_t *data = NULL;

    /* What is read may be a secret (a key file, a DPF key share): every
     * buffer given up is wiped first, so no copy outlives the command in
     * freed memory. Hence malloc and copy rather than realloc, which may
     * free the old block as it was. */
    if (cap == 0)
        cap = 1 << 16;
    for (;;) {
        if (data == NULL || got == cap) {
            if (data != NULL && cap > SIZE_MAX / 2 - 1) {
                cli_wipe(data, got);
                free(data);
                errno = ENOMEM;
                return -1;
            }
            size_t bigger_cap = data != NULL ? cap * 2 : cap;
            /* +1: room for the terminating NUL that text readers rely on */
            uint8_t *bigger = malloc(bigger_cap + 1);
            if (bigger == NULL) {
                cli_wipe(data, got);
                free(data);
                errno = ENOMEM;
                return -1;
            }
            if (data != NULL) {
                memcpy(bigger, data, got);
                cli_wipe(data, got);
                free(data);
            }
            data = bigger;
            cap = bigger_cap;
        }
        ssize_t r = read(fd, data + got, cap - got);
        if (r == 0)
            break;
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            cli_wipe(data, got);
            free(data);
            errno = err;
            return -1;
        }
        got += (size_t)r;
        if (got > max) {
            cli_wipe(data, got);
            free(data);
            errno = EFBIG;
            return -1;
        }
    }
    data[got] = 0;
    *buf = data;
    *len = got;
    return 0;
}

int cli_read(const struct cli_cmd *cmd, const char *name, size_t unit, size_t exact,
             const char *hint, uint8_t **buf, size_t *len)
{
    const char *path = cli_value(cmd, name);
    const int std = cli_is_std(path);
    char where_buf[4200];
    const char *where = shown(path, "standard input", where_buf, sizeof(where_buf));
    struct stat st;
    size_t cap = 0, got = 0;
    uint8_t *data = NULL;
    int fd;

    fd = std ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cli_fail(cmd, CLI_EXIT_USAGE, "--%s: cannot open %s: %s", name, where,
                        strerror(errno));
    /* Standard input is read to its end whatever it is: a pipe has no size,
     * and a redirected file may not start at offset 0. */
    if (!std && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        /* Refuse a wrong regular file before reading gigabytes of it. */
        if (!size_ok((size_t)st.st_size, unit, exact)) {
            close(fd);
            return size_fail(cmd, name, where, (size_t)st.st_size, unit, exact, hint);
        }
        cap = (size_t)st.st_size + 1; /* +1: EOF is seen without a regrow */
    }
    int rc = cli_read_fd(fd, cap, SIZE_MAX - 1, &data, &got);
    int err = errno;
    if (!std)
        close(fd);
    if (rc != 0)
        return cli_fail(cmd, err == ENOMEM ? CLI_EXIT_ENGINE : CLI_EXIT_USAGE,
                        "--%s: cannot read %s: %s", name, where, strerror(err));
    if (!size_ok(got, unit, exact)) {
        cli_wipe(data, got); /* it may be a key */
        free(data);
        return size_fail(cmd, name, where, got, unit, exact, hint);
    }
    *buf = data;
    *len = got;
    return 0;
}

/* Symbolic links followed to find the file an output replaces (the
 * kernel's own limit). */
#define MAX_LINKS 40

/*
 * Where an output goes. A regular file, or a name not there yet, gets a
 * temporary file beside it that is renamed over it, so that it appears whole
 * or not at all; for a symbolic link that is beside the file it leads to, so
 * that the file is replaced and the link kept. Standard output, a device or
 * a FIFO cannot be replaced (a rename would put a plain file where /dev/null
 * was, or leave the reader of a FIFO waiting on a name that is gone): they
 * are written in place, and only once every file is ready, since what is
 * sent there cannot be taken back.
 */
enum dest_kind { DEST_FILE, DEST_STREAM, DEST_STDOUT };

struct pending {
    const struct cli_output *out;
    const char *path;   /* as the user named it */
    enum dest_kind kind;
    char *target;       /* DEST_FILE: the file replaced, links followed;
                           DEST_STREAM: what is opened */
    char *tmp;          /* DEST_FILE: the temporary file beside target */
    int moved;          /* DEST_FILE: tmp has been renamed to target */
    char *backup;       /* DEST_FILE of several: a second link to the file
                           target names before the renames, or NULL */
    int restored;       /* backup was renamed back over target */
    int restore_errno;  /* why it was not, when that was tried */
};

/* How messages name p's destination: 'path', or 'target' (where 'path'
 * leads) once links were followed. */
static const char *dest_name(const struct pending *p, char *buf, size_t len)
{
    if (p->target == NULL || strcmp(p->target, p->path) == 0)
        snprintf(buf, len, "'%s'", p->path);
    else
        snprintf(buf, len, "'%s' (where '%s' leads)", p->target, p->path);
    return buf;
}

/* What symbolic link `link` points to, a relative target taken from the
 * link's own directory; malloc'd, or NULL with errno. */
static char *link_target(const char *link)
{
    size_t cap = 256;
    char *buf;
    ssize_t n;

    for (;;) {
        buf = malloc(cap);
        if (buf == NULL)
            return NULL;
        n = readlink(link, buf, cap);
        if (n < 0) {
            int err = errno;
            free(buf);
            errno = err;
            return NULL;
        }
        if ((size_t)n < cap)
            break;
        free(buf);
        if (cap >= (size_t)1 << 20) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        cap *= 2;
    }
    buf[n] = '\0';
    const char *slash = strrchr(link, '/');
    if (buf[0] == '/' || slash == NULL)
        return buf;
    size_t dirlen = (size_t)(slash - link) + 1;
    char *joined = malloc(dirlen + (size_t)n + 1);
    if (joined != NULL) {
        memcpy(joined, link, dirlen);
        memcpy(joined + dirlen, buf, (size_t)n + 1);
    }
    free(buf);
    return joined;
}

/* Decide where p goes (see struct pending): p->kind and p->target. */
static int locate(const struct cli_cmd *cmd, struct pending *p)
{
    const char *name = p->out->name;
    char shown_buf[8400];
    struct stat st;
    int err;

    p->target = strdup(p->path);
    if (p->target == NULL)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: out of memory", name);
    for (int links = 0;; links++) {
        const char *shown = dest_name(p, shown_buf, sizeof(shown_buf));
        if (stat(p->target, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                return cli_fail(cmd, CLI_EXIT_USAGE, "--%s %s: is a directory: name a file",
                                name, shown);
            if (S_ISSOCK(st.st_mode))
                return cli_fail(cmd, CLI_EXIT_USAGE, "--%s %s: is a socket, which cannot be "
                                "opened as a file: name a file, a device or a FIFO", name,
                                shown);
            if (!S_ISREG(st.st_mode)) {
                p->kind = DEST_STREAM;
                return 0;
            }
        } else if (errno != ENOENT) {
            return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot look up %s: %s", name, shown,
                            strerror(errno));
        }
        /* A regular file, or nothing yet: a rename replaces it. Over a
         * symbolic link the rename would replace the link itself, so go
         * where it leads (there may be nothing there yet either). */
        if (lstat(p->target, &st) != 0 || !S_ISLNK(st.st_mode)) {
            p->kind = DEST_FILE;
            return 0;
        }
        if (links == MAX_LINKS)
            return cli_fail(cmd, CLI_EXIT_USAGE, "--%s %s: more than %d symbolic links in a "
                            "row: name the file itself", name, shown, MAX_LINKS);
        char *next = link_target(p->target);
        if (next == NULL) {
            err = errno;
            return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot read the symbolic link %s: %s",
                            name, shown, strerror(err));
        }
        free(p->target);
        p->target = next;
    }
}

static char *name_beside(const char *path, const char *suffix)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    int dirlen = slash != NULL ? (int)(slash - path) + 1 : 0;
    size_t size = strlen(path) + strlen(suffix) + 2;
    char *t = malloc(size);

    if (t != NULL)
        snprintf(t, size, "%.*s.%s%s", dirlen, path, base, suffix);
    return t;
}

static char *temp_template(const char *path)
{
    return name_beside(path, ".tmp-XXXXXX");
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* write_all where the reader may stop early (`| head`, a FIFO's reader
 * gone): the write fails with EPIPE instead of SIGPIPE killing the command
 * half way, so that it can take its files back and say what happened. */
static int write_all_nosigpipe(int fd, const uint8_t *p, size_t len)
{
    struct sigaction ignore, old;
    int rc, err;

    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old);
    rc = write_all(fd, p, len);
    err = errno;
    sigaction(SIGPIPE, &old, NULL);
    errno = err;
    return rc;
}

/* What to do about an output that could not be written, for the message's
 * end: the destination is always left as it was. */
static const char *write_hint(int err)
{
    switch (err) {
    case ENOSPC:
    case EDQUOT:
        return ": free space there or name another directory; the file is left as it was";
    case EROFS:
    case EACCES:
    case EPERM:
        return ": name a file in a writable directory; the file is left as it was";
    default:
        return "; the file is left as it was";
    }
}

/* Write one output to its temporary file; on failure nothing is left. */
static int write_temp(const struct cli_cmd *cmd, struct pending *p)
{
    const struct cli_output *o = p->out;
    char shown[8400];
    mode_t mask = umask(0);
    int fd, err;

    umask(mask);
    dest_name(p, shown, sizeof(shown));
    p->tmp = temp_template(p->target);
    if (p->tmp == NULL)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: out of memory", o->name);
    fd = mkstemp(p->tmp);
    if (fd < 0) {
        err = errno;
        free(p->tmp);
        p->tmp = NULL;
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot create a file next to %s: %s%s",
                        o->name, shown, strerror(err), write_hint(err));
    }
    /* mkstemp makes the file 0600, which a secret keeps whatever the umask
     * (a key share others can read is no longer the party's alone); other
     * outputs get the mode a plain create would give them. */
    if ((!o->secret && fchmod(fd, 0666 & ~mask) != 0) || write_all(fd, o->data, o->len) != 0 ||
        fsync(fd) != 0) {
        err = errno;
        close(fd);
        goto fail;
    }
    if (close(fd) != 0) {
        err = errno;
        goto fail;
    }
    return 0;
fail:
    unlink(p->tmp);
    free(p->tmp);
    p->tmp = NULL;
    return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot write %s: %s%s", o->name, shown,
                    strerror(err), write_hint(err));
}

/* A device or FIFO, written in place: opened without O_CREAT or O_TRUNC,
 * which mean nothing to it (a FIFO's open waits for its reader). */
static int write_stream(const struct cli_cmd *cmd, const struct pending *p)
{
    char shown[8400];
    const char *where = dest_name(p, shown, sizeof(shown));
    int fd = open(p->target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    int err;

    if (fd < 0)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot open %s for writing: %s",
                        p->out->name, where, strerror(errno));
    if (write_all_nosigpipe(fd, p->out->data, p->out->len) != 0) {
        err = errno;
        close(fd);
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot write to %s: %s", p->out->name,
                        where, strerror(err));
    }
    if (close(fd) != 0)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot write to %s: %s", p->out->name,
                        where, strerror(errno));
    return 0;
}

/* Make the renames durable too; a failure here loses nothing already
 * written, so it is not reported. */
static void sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash != NULL ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    int fd;

    if (dir == NULL)
        return;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int cli_write_stdout(const struct cli_cmd *cmd, const char *what, const void *data, size_t len)
{
    /* Text the command already printed goes first. */
    if (fflush(stdout) != 0)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "%s: cannot write to standard output: %s", what,
                        strerror(errno));
    if (write_all_nosigpipe(STDOUT_FILENO, data, len) != 0)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "%s: cannot write to standard output: %s", what,
                        strerror(errno));
    return 0;
}

/* A rename failed after others succeeded: the outputs go together, so those
 * are removed again, and the message says which. */
static int rename_fail(const struct cli_cmd *cmd, const struct pending *p, size_t n, size_t at,
                       int err)
{
    char shown[8400], undone[8400] = "";
    size_t used = 0;

    for (size_t i = 0; i < n; i++) {
        if (!p[i].moved || used >= sizeof(undone))
            continue;
        if (p[i].restored)
            used += (size_t)snprintf(undone + used, sizeof(undone) - used,
                                     "; --%s '%s' was already in place and is put back to the "
                                     "file it replaced, as the outputs go together",
                                     p[i].out->name, p[i].target);
        else if (p[i].backup)
            used += (size_t)snprintf(undone + used, sizeof(undone) - used,
                                     "; --%s '%s' was already in place and is removed again, "
                                     "but the file it replaced could not be put back (%s): "
                                     "it is '%s'; rename it to '%s'",
                                     p[i].out->name, p[i].target, strerror(p[i].restore_errno),
                                     p[i].backup, p[i].target);
        else
            used += (size_t)snprintf(undone + used, sizeof(undone) - used,
                                     "; --%s '%s' was already in place and is removed again, "
                                     "as the outputs go together", p[i].out->name, p[i].target);
    }
    return cli_fail(cmd, CLI_EXIT_ENGINE,
                    "--%s: cannot rename the finished file over %s: %s%s%s", p[at].out->name,
                    dest_name(&p[at], shown, sizeof(shown)), strerror(err),
                    undone[0] ? "" : write_hint(err), undone);
}

int cli_write(const struct cli_cmd *cmd, const struct cli_output *outs, size_t n)
{
    struct pending p[4];
    int rc = 0;

    if (n > sizeof(p) / sizeof(p[0]))
        return cli_fail(cmd, CLI_EXIT_ENGINE, "internal error: too many outputs");
    memset(p, 0, sizeof(p));
    for (size_t i = 0; i < n && rc == 0; i++) {
        p[i].out = &outs[i];
        p[i].path = cli_value(cmd, outs[i].name);
        /* cli_parse let at most one output be "-". */
        if (cli_is_std(p[i].path))
            p[i].kind = DEST_STDOUT;
        else
            rc = locate(cmd, &p[i]);
    }
    /* Two outputs that are one file (the same name, or links to one file)
     * would leave only the last written: refused before anything is. */
    for (size_t i = 0; i < n && rc == 0; i++)
        for (size_t j = i + 1; j < n && rc == 0; j++) {
            if (p[i].kind != DEST_FILE || p[j].kind != DEST_FILE)
                continue;
            struct stat a, b;
            if (strcmp(p[i].target, p[j].target) == 0 ||
                (stat(p[i].target, &a) == 0 && stat(p[j].target, &b) == 0 &&
                 a.st_dev == b.st_dev && a.st_ino == b.st_ino))
                rc = cli_fail(cmd, CLI_EXIT_USAGE, "--%s and --%s name the same file '%s': "
                              "give each output a file of its own", outs[i].name,
                              outs[j].name, p[i].target);
        }
    /* Files first, complete and synced beside their destinations, where a
     * full disk or a closed directory shows before anything is given out. */
    for (size_t i = 0; i < n && rc == 0; i++)
        if (p[i].kind == DEST_FILE)
            rc = write_temp(cmd, &p[i]);
    /* Then what cannot be taken back, while a failure still leaves every
     * destination file as it was (the temporary files go). */
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (p[i].kind == DEST_STDOUT) {
            char what[64];
            snprintf(what, sizeof(what), "--%s -", outs[i].name);
            rc = cli_write_stdout(cmd, what, outs[i].data, outs[i].len);
        } else if (p[i].kind == DEST_STREAM) {
            rc = write_stream(cmd, &p[i]);
        }
    }
    /* Last the renames, which do not fail on their own in practice: the
     * temporary file is in the destination's directory. Outputs that go
     * together (two key shares) are replaced together: each file a rename
     * will replace gets a second link first, so that a later rename's
     * failure puts the old files back rather than leave a mixed pair or
     * none. Where no link can be made (a file system without them), a
     * replaced file is removed again instead, as the message says. */
    size_t files = 0;
    for (size_t i = 0; i < n; i++)
        files += p[i].kind == DEST_FILE;
    for (size_t i = 0; i < n && rc == 0 && files > 1; i++) {
        if (p[i].kind != DEST_FILE)
            continue;
        /* A fresh name from mkstemp, freed for link: another process may
         * take it in between (EEXIST), so a few tries. */
        int linked = 0;
        for (int tries = 0; tries < 4 && !linked; tries++) {
            free(p[i].backup);
            if ((p[i].backup = name_beside(p[i].target, ".old-XXXXXX")) == NULL)
                break;
            int fd = mkstemp(p[i].backup);
            if (fd < 0)
                break;
            close(fd);
            if (unlink(p[i].backup) != 0)
                break;
            linked = link(p[i].target, p[i].backup) == 0;
            if (!linked && errno != EEXIST)
                break;
        }
        if (!linked) {
            free(p[i].backup); /* no old file, or no link: nothing to put back */
            p[i].backup = NULL;
        }
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (p[i].kind != DEST_FILE)
            continue;
        if (rename(p[i].tmp, p[i].target) != 0) {
            const int err = errno;
            for (size_t j = 0; j < i; j++)
                if (p[j].moved && p[j].backup) {
                    p[j].restored = rename(p[j].backup, p[j].target) == 0;
                    p[j].restore_errno = p[j].restored ? 0 : errno;
                }
            rc = rename_fail(cmd, p, n, i, err);
        } else {
            p[i].moved = 1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i].moved && rc == 0)
            sync_dir(p[i].target);
        else if (p[i].moved && !p[i].restored)
            unlink(p[i].target); /* never a new key beside an old one */
        else if (!p[i].moved && p[i].tmp != NULL)
            unlink(p[i].tmp);
        /* A backup that was not renamed back is the old file's second link:
         * removed, unless the message named it as the only copy left. */
        if (p[i].backup && !p[i].restored && !(rc != 0 && p[i].moved))
            unlink(p[i].backup);
        if (p[i].restored)
            sync_dir(p[i].target);
        free(p[i].backup);
        free(p[i].tmp);
        free(p[i].target);
    }
    return rc;
}

void cli_le64_decode(void *buf, size_t words)
{
    uint8_t *b = buf;
    uint64_t *w = buf;

    for (size_t i = 0; i < words; i++) {
        uint64_t v = 0;
        for (int k = 7; k >= 0; k--)
            v = v << 8 | b[8 * i + (size_t)k];
        w[i] = v;
    }
}

void cli_le64_encode(void *buf, size_t words)
{
    uint8_t *b = buf;
    uint64_t *w = buf;

    for (size_t i = 0; i < words; i++) {
        uint64_t v = w[i];
        for (int k = 0; k < 8; k++)
            b[8 * i + (size_t)k] = (uint8_t)(v >> (8 * k));
    }
}

void cli_json_string_to(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)(s != NULL ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
    fputc('"', fp);
}

void cli_json_string(const char *s)
{
    cli_json_string_to(stdout, s);
}

void cli_json_fields_to(FILE *fp, const char *const *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(fp, "%s\"%s\": ", i ? ", " : "", kv[2 * i]);
        cli_json_string_to(fp, kv[2 * i + 1]);
    }
}

void cli_json_fields(const char *const *kv, size_t n)
{
    cli_json_fields_to(stdout, kv, n);
}
