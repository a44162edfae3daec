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

    if (cap == 0)
        cap = 1 << 16;
    for (;;) {
        if (data == NULL || got == cap) {
            if (data != NULL) {
                if (cap > SIZE_MAX / 2) {
                    free(data);
                    errno = ENOMEM;
                    return -1;
                }
                cap *= 2;
            }
            /* +1: room for the terminating NUL that text readers rely on */
            uint8_t *bigger = realloc(data, cap + 1);
            if (bigger == NULL) {
                free(data);
                errno = ENOMEM;
                return -1;
            }
            data = bigger;
        }
        ssize_t r = read(fd, data + got, cap - got);
        if (r == 0)
            break;
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            free(data);
            errno = err;
            return -1;
        }
        got += (size_t)r;
        if (got > max) {
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
        free(data);
        return size_fail(cmd, name, where, got, unit, exact, hint);
    }
    *buf = data;
    *len = got;
    return 0;
}

/* A temporary file next to the destination, so that rename() is atomic. */
struct pending {
    const char *name; /* the option */
    const char *path;
    char *tmp;
};

static char *temp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    int dirlen = slash != NULL ? (int)(slash - path) + 1 : 0;
    size_t size = strlen(path) + sizeof(".tmp-XXXXXX") + 1;
    char *t = malloc(size);

    if (t != NULL)
        snprintf(t, size, "%.*s.%s.tmp-XXXXXX", dirlen, path, base);
    return t;
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

/* Write one output to its temporary file; on failure nothing is left. */
static int write_temp(const struct cli_cmd *cmd, const struct cli_output *o,
                      struct pending *p)
{
    mode_t mask = umask(0);
    int fd, err;

    umask(mask);
    p->name = o->name;
    p->path = cli_value(cmd, o->name);
    p->tmp = temp_template(p->path);
    if (p->tmp == NULL)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: out of memory", o->name);
    fd = mkstemp(p->tmp);
    if (fd < 0) {
        err = errno;
        free(p->tmp);
        p->tmp = NULL;
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot create a file next to '%s': %s",
                        o->name, p->path, strerror(err));
    }
    /* mkstemp makes the file 0600; give it the mode a plain create would. */
    if (fchmod(fd, 0666 & ~mask) != 0 || write_all(fd, o->data, o->len) != 0 ||
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
    return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot write '%s': %s", o->name, p->path,
                    strerror(err));
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
    struct sigaction ignore, old;
    int rc, err;

    /* Text the command already printed goes first. */
    if (fflush(stdout) != 0)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "%s: cannot write to standard output: %s", what,
                        strerror(errno));
    /* A reader that stops early (`| head`) must not kill the command half
     * way: the write fails instead, the caller removes what it wrote beside
     * it, and the message says what happened. */
    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old);
    rc = write_all(STDOUT_FILENO, data, len);
    err = errno;
    sigaction(SIGPIPE, &old, NULL);
    if (rc != 0)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "%s: cannot write to standard output: %s", what,
                        strerror(err));
    return 0;
}

int cli_write(const struct cli_cmd *cmd, const struct cli_output *outs, size_t n)
{
    struct pending p[4] = {{0}};
    const struct cli_output *to_stdout = NULL;
    size_t files = 0, renamed = 0;
    int rc = 0;

    if (n > sizeof(p) / sizeof(p[0]))
        return cli_fail(cmd, CLI_EXIT_ENGINE, "internal error: too many outputs");
    for (size_t i = 0; i < n; i++) {
        /* cli_parse let at most one output be "-"; it goes out last (below). */
        if (cli_is_std(cli_value(cmd, outs[i].name))) {
            to_stdout = &outs[i];
            continue;
        }
        rc = write_temp(cmd, &outs[i], &p[files]);
        if (rc != 0)
            goto out;
        files++;
    }
    for (; renamed < files; renamed++) {
        if (rename(p[renamed].tmp, p[renamed].path) != 0) {
            rc = cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot rename to '%s': %s",
                          p[renamed].name, p[renamed].path, strerror(errno));
            goto out;
        }
        sync_dir(p[renamed].path);
    }
    /* Standard output last: files can still be taken back if it fails,
     * bytes already sent down a pipe cannot. */
    if (to_stdout != NULL) {
        char what[64];
        snprintf(what, sizeof(what), "--%s -", to_stdout->name);
        rc = cli_write_stdout(cmd, what, to_stdout->data, to_stdout->len);
    }
out:
    /* All or nothing: outputs already moved into place go too. */
    for (size_t i = 0; i < files; i++) {
        if (rc != 0)
            unlink(i < renamed ? p[i].path : p[i].tmp);
        free(p[i].tmp);
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
