/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli.h"
#include "tools/cli_io.h"

static int size_fail(const struct cli_cmd *cmd, const char *name, const char *path, size_t got,
                     size_t unit, size_t exact, const char *hint)
{
    const char *sep = hint != NULL ? " = " : "";

    if (exact != 0)
        return cli_fail(cmd, CLI_EXIT_USAGE, "--%s: '%s' is %zu bytes, expected %s%s%zu", name,
                        path, got, hint != NULL ? hint : "", sep, exact);
    return cli_fail(cmd, CLI_EXIT_USAGE,
                    "--%s: '%s' is %zu bytes, expected a non-zero multiple of %zu", name, path,
                    got, unit);
}

static int size_ok(size_t got, size_t unit, size_t exact)
{
    return exact != 0 ? got == exact : got != 0 && got % unit == 0;
}

int cli_read(const struct cli_cmd *cmd, const char *name, size_t unit, size_t exact,
             const char *hint, uint8_t **buf, size_t *len)
{
    const char *path = cli_value(cmd, name);
    struct stat st;
    size_t cap = 1 << 16, got = 0;
    uint8_t *data = NULL;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cli_fail(cmd, CLI_EXIT_USAGE, "--%s: cannot open '%s': %s", name, path,
                        strerror(errno));
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        /* Refuse a wrong regular file before reading gigabytes of it. */
        if (!size_ok((size_t)st.st_size, unit, exact)) {
            close(fd);
            return size_fail(cmd, name, path, (size_t)st.st_size, unit, exact, hint);
        }
        cap = (size_t)st.st_size + 1; /* +1: EOF is seen without a regrow */
    }
    for (;;) {
        if (data == NULL || got == cap) {
            if (data != NULL)
                cap *= 2;
            uint8_t *bigger = realloc(data, cap);
            if (bigger == NULL) {
                free(data);
                close(fd);
                return cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: '%s': out of memory", name, path);
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
            close(fd);
            return cli_fail(cmd, CLI_EXIT_USAGE, "--%s: cannot read '%s': %s", name, path,
                            strerror(err));
        }
        got += (size_t)r;
    }
    close(fd);
    if (!size_ok(got, unit, exact)) {
        free(data);
        return size_fail(cmd, name, path, got, unit, exact, hint);
    }
    *buf = data;
    *len = got;
    return 0;
}

/* A temporary file next to the destination, so that rename() is atomic. */
struct pending {
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

int cli_write(const struct cli_cmd *cmd, const struct cli_output *outs, size_t n)
{
    struct pending p[4] = {{0}};
    size_t done = 0, renamed = 0;
    int rc = 0;

    if (n > sizeof(p) / sizeof(p[0]))
        return cli_fail(cmd, CLI_EXIT_ENGINE, "internal error: too many outputs");
    for (; done < n; done++) {
        rc = write_temp(cmd, &outs[done], &p[done]);
        if (rc != 0)
            goto out;
    }
    for (; renamed < n; renamed++) {
        if (rename(p[renamed].tmp, p[renamed].path) != 0) {
            rc = cli_fail(cmd, CLI_EXIT_ENGINE, "--%s: cannot rename to '%s': %s",
                          outs[renamed].name, p[renamed].path, strerror(errno));
            goto out;
        }
        sync_dir(p[renamed].path);
    }
out:
    /* All or nothing: outputs already moved into place go too. */
    for (size_t i = 0; i < done; i++) {
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

void cli_json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)(s != NULL ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

void cli_json_fields(const char *const *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        printf("%s\"%s\": ", i ? ", " : "", kv[2 * i]);
        cli_json_string(kv[2 * i + 1]);
    }
}
