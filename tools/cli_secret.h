/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keys and seeds from a file: the documented way to pass secrets, since a
 * value on the command line is visible to every user in ps and stays in the
 * shell's history. The file holds the same text as the option would, with
 * surrounding whitespace (a trailing newline) ignored.
 */
#ifndef MPCE_CLI_SECRET_H
#define MPCE_CLI_SECRET_H

#include <stddef.h>

#include "tools/cli_args.h"

/*
 * Make option `name` ("key") hold its text whether it was given inline or
 * through the file option `file_opt` ("key-file", "-" for standard input),
 * so that cli_hex and cli_hex_list parse it either way and name the file in
 * their messages. Both given, or neither when `required`: a usage error.
 * A file that group or others may read gets a warning, not a refusal (the
 * key may already be public, or the directory closed). Returns 0, or the
 * exit status with the message printed.
 */
int cli_secret(const struct cli_cmd *cmd, const char *name, const char *file_opt, int required);

/* Overwrite and free the texts cli_secret read (main calls it at exit). */
void cli_secret_wipe(void);

/* Zero len bytes of p (NULL: nothing) in a way the compiler cannot drop as a
 * dead store: keys, seeds and DPF key shares before free() or return. */
void cli_wipe(void *p, size_t len);

/* The warning cli_secret gives for a key file that group or others may
 * read, for a file option that holds a secret in another form (dpf eval
 * --key: a DPF key share). Nothing for "-", a file that is not there (the
 * reader says so) or anything but a regular file. */
void cli_warn_if_readable(const struct cli_cmd *cmd, const char *file_opt, const char *path);

#endif
