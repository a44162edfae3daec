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
#include "tools/cli_secret.h"

/* Eight 32-digit keys with commas are 263 bytes: a file far larger is not
 * a key file, and reading it whole would only delay the message. */
#define SECRET_MAX_BYTES 4096u

/* What was read, and its origin for messages; a command reads two at most. */
static struct {
    uint8_t *text;
    size_t len;
    char origin[4200];
} secrets[4];
static size_t n_secrets;

void cli_wipe(void *p, size_t len)
{
    if (p != NULL)
        explicit_bzero(p, len);
}

void cli_secret_wipe(void)
{
    for (size_t i = 0; i < n_secrets; i++) {
        cli_wipe(secrets[i].text, secrets[i].len);
        free(secrets[i].text);
        secrets[i].text = NULL;
    }
    n_secrets = 0;
}

static struct cli_opt *opt(const struct cli_cmd *cmd, const char *name)
{
    for (struct cli_opt *o = cmd->opts; o->name != NULL; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

static int is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* A file others can read has leaked the secret to them already, or will:
 * say so, with the fix. */
static void warn_if_readable(const struct cli_cmd *cmd, const char *file_opt, const char *path,
                             const struct stat *st)
{
    if (!S_ISREG(st->st_mode) || (st->st_mode & (S_IRGRP | S_IROTH)) == 0)
        return;
    fprintf(stderr, "%s: warning: --%s '%s' is readable by %s (mode %04o): run chmod go-rwx "
            "'%s' to keep the secret to yourself\n", cmd->prog, file_opt, path,
            (st->st_mode & S_IROTH) ? "every user" : "its group",
            (unsigned)(st->st_mode & 07777), path);
}

void cli_warn_if_readable(const struct cli_cmd *cmd, const char *file_opt, const char *path)
{
    struct stat st;

    if (!cli_is_std(path) && stat(path, &st) == 0)
        warn_if_readable(cmd, file_opt, path, &st);
}

static int read_secret(const struct cli_cmd *cmd, const char *file_opt, const char *path,
                       const char *origin, uint8_t **text, size_t *len)
{
    const int std = cli_is_std(path);
    struct stat st;
    int fd = std ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

    if (fd < 0)
        return cli_fail(cmd, CLI_EXIT_USAGE, "%s: cannot open: %s", origin, strerror(errno));
    if (fstat(fd, &st) != 0) {
        int err = errno;
        if (!std)
            close(fd);
        return cli_fail(cmd, CLI_EXIT_USAGE, "%s: cannot stat: %s", origin, strerror(err));
    }
    if (S_ISDIR(st.st_mode)) {
        if (!std)
            close(fd);
        return cli_fail(cmd, CLI_EXIT_USAGE, "%s: is a directory: name the file that holds "
                        "the value", origin);
    }
    if (!std)
        warn_if_readable(cmd, file_opt, path, &st);
    /* Room for the largest accepted value from the start: a buffer that
     * grew would leave the secret's first bytes in memory freed unwiped
     * (cli_read_fd wipes what it replaces, but one allocation is simpler to
     * trust). One byte more than the limit lets an oversized file be seen as
     * such without a regrow. */
    int rc = cli_read_fd(fd, SECRET_MAX_BYTES + 1, SECRET_MAX_BYTES, text, len);
    int err = errno;
    if (!std)
        close(fd);
    if (rc != 0 && err == EFBIG)
        return cli_fail(cmd, CLI_EXIT_USAGE, "%s: more than %u bytes: expected the value as "
                        "it would be given on the command line", origin, SECRET_MAX_BYTES);
    if (rc != 0)
        return cli_fail(cmd, CLI_EXIT_USAGE, "%s: cannot read: %s", origin, strerror(err));
    return 0;
}

int cli_secret(const struct cli_cmd *cmd, const char *name, const char *file_opt, int required)
{
    struct cli_opt *inline_opt = opt(cmd, name), *file = opt(cmd, file_opt);

    if (inline_opt == NULL || file == NULL || n_secrets == sizeof(secrets) / sizeof(secrets[0]))
        return cli_fail(cmd, CLI_EXIT_ENGINE, "internal error: no option --%s or --%s", name,
                        file_opt);
    if (inline_opt->value != NULL && file->value != NULL)
        return cli_fail(cmd, CLI_EXIT_USAGE, "--%s and --%s both give the value: use one "
                        "(--%s keeps it out of ps and the shell history)", name, file_opt,
                        file_opt);
    if (file->value == NULL) {
        if (required && inline_opt->value == NULL)
            return cli_fail(cmd, CLI_EXIT_USAGE, "missing required option --%s (or --%s; "
                            "see --help)", file_opt, name);
        return 0;
    }

    char *origin = secrets[n_secrets].origin;
    if (cli_is_std(file->value))
        snprintf(origin, sizeof(secrets[0].origin), "--%s - (standard input)", file_opt);
    else
        snprintf(origin, sizeof(secrets[0].origin), "--%s '%s'", file_opt, file->value);
    uint8_t *text = NULL;
    size_t len = 0;
    int rc = read_secret(cmd, file_opt, file->value, origin, &text, &len);
    if (rc != 0)
        return rc;
    /* Kept for the wipe before anything can fail. */
    secrets[n_secrets].text = text;
    secrets[n_secrets].len = len;
    n_secrets++;

    size_t start = 0, end = len;
    while (start < end && is_space(text[start]))
        start++;
    while (end > start && is_space(text[end - 1]))
        end--;
    if (memchr(text, '\0', len) != NULL)
        return cli_fail(cmd, CLI_EXIT_USAGE, "%s: holds a NUL byte: expected text, the value "
                        "as it would be given on the command line", origin);
    if (start == end)
        return cli_fail(cmd, CLI_EXIT_USAGE, "%s: is empty: expected the value as it would be "
                        "given to --%s", origin, name);
    text[end] = '\0';
    inline_opt->value = (const char *)text + start;
    cli_set_origin(inline_opt->name, origin);
    return 0;
}
