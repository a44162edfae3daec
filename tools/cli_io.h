/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File input and output for the mpcengine command. Inputs are read whole and
 * their size checked before any work; outputs appear all at once or not at
 * all: each is written to a temporary file in its own directory (that of the
 * file a symbolic link leads to, so the link stays), synced, and renamed
 * over the destination only when every output is complete. A file named "-"
 * is standard input or output (cli_parse allows one of each). Standard
 * output, devices and FIFOs are not replaced but written in place, after
 * every temporary file is complete and before any rename: if one of them
 * fails, no destination file has changed.
 */
#ifndef MPCE_CLI_IO_H
#define MPCE_CLI_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/cli_args.h"

/*
 * Read fd to its end into *buf (malloc'd, NUL-terminated after *len bytes),
 * starting with room for cap bytes (0: a default). More than max bytes:
 * -1 with errno EFBIG; a read error: -1 with errno. Every buffer it gives up
 * (grown out of, or on failure) is wiped first: what it reads may be secret.
 */
int cli_read_fd(int fd, size_t cap, size_t max, uint8_t **buf, size_t *len);

/*
 * Read the whole file named by option `name` ("-": standard input, read to
 * its end). Its size must be a non-zero
 * multiple of `unit` (when exact == 0) or exactly `exact` bytes; `hint`
 * (may be NULL) explains the expected size in the message, e.g.
 * "batch * L * N * 8". *buf is malloc'd, suitably aligned for uint64_t.
 * Returns 0, or CLI_EXIT_USAGE with the message printed.
 */
int cli_read(const struct cli_cmd *cmd, const char *name, size_t unit, size_t exact,
             const char *hint, uint8_t **buf, size_t *len);

struct cli_output {
    const char *name; /* option naming the file, e.g. "out" */
    const void *data;
    size_t len;
    int secret;       /* a file made for it is 0600 whatever the umask */
};

/* Write every output atomically (see above). Returns 0, or the exit status
 * with the message printed; then no destination file has been created or
 * changed. */
int cli_write(const struct cli_cmd *cmd, const struct cli_output *outs, size_t n);

/* Write len bytes to standard output after what stdio holds; a closed pipe
 * is an error, not SIGPIPE. `what` ("--out -") starts the message. Returns
 * 0 or CLI_EXIT_ENGINE with the message printed. */
int cli_write_stdout(const struct cli_cmd *cmd, const char *what, const void *data, size_t len);

/* uint64 words <-> little-endian bytes, in place (the file format is LE
 * whatever the host's byte order). */
void cli_le64_decode(void *buf, size_t words);
void cli_le64_encode(void *buf, size_t words);

/* s (NULL: "") as a JSON string on stdout (on fp). */
void cli_json_string(const char *s);
void cli_json_string_to(FILE *fp, const char *s);

/* n object members with string values, kv = {key0, value0, key1, ...}, as
 * `"key0": "value0", "key1": ...` on stdout (on fp; no braces). */
void cli_json_fields(const char *const *kv, size_t n);
void cli_json_fields_to(FILE *fp, const char *const *kv, size_t n);

#endif
