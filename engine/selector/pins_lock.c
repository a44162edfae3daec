/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pins directory's locks (pins.h): an flock on DIR/pins.lock, which
 * serialises the directory's writers across processes, or on another lock
 * file there for a writer of another file (the census's census.lock). A file
 * of its own: pins.ini is replaced by rename, so a lock on it would hold the
 * old inode.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/selector/pins.h"
#include "engine/selector/pins_text.h"

/* flock has no timeout: a waiting lock tries again this often. */
#define PINS_LOCK_POLL_MS 10u


/* flock until it succeeds, fails otherwise than by contention, or wait_ms
 * have passed. 0, or -1 with errno and why set. */
static int flock_within(int fd, const char *path, unsigned wait_ms, char *why, size_t why_len)
{
    const long long start = mpce_monotonic_ms();
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return 0;
        int err = errno;
        if (err == EINTR)
            continue;
        const long long waited = mpce_monotonic_ms() - start;
        if (err != EWOULDBLOCK) {
            mpce_pins_why(why, why_len, "%s: cannot lock: %s", path, strerror(err));
        } else if (waited >= wait_ms) {
            mpce_pins_why(why, why_len, "%s: held by another process for %u ms", path,
                          wait_ms);
        } else {
            uint64_t left = wait_ms - waited;
            uint64_t ms = left < PINS_LOCK_POLL_MS ? left : PINS_LOCK_POLL_MS;
            struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(ms * 1000000u)};
            nanosleep(&ts, NULL);
            continue;
        }
        errno = err;
        return -1;
    }
}

int mpce_pins_lock(const char *dir, unsigned wait_ms, char *why, size_t why_len)
{
    return mpce_pins_lock_file(dir, MPCE_PINS_LOCK, wait_ms, why, why_len);
}

int mpce_pins_lock_file(const char *dir, const char *name, unsigned wait_ms, char *why,
                        size_t why_len)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *path = malloc(len);
    if (!path) {
        mpce_pins_why(why, why_len, "%s/%s: %s", dir, name, strerror(ENOMEM));
        errno = ENOMEM;
        return -1;
    }
    snprintf(path, len, "%s/%s", dir, name);
    int fd = -1;
    if (mpce_pins_make_dir(dir, path, why, why_len) == 0) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
        if (fd < 0) {
            mpce_pins_why(why, why_len, "%s: cannot open: %s%s", path, strerror(errno),
                          mpce_pins_write_hint(errno));
        } else if (flock_within(fd, path, wait_ms, why, why_len) != 0) {
            int err = errno;
            close(fd);
            fd = -1;
            errno = err;
        }
    }
    int err = errno;
    free(path);
    errno = err;
    return fd;
}

void mpce_pins_unlock(int fd)
{
    if (fd < 0)
        return;
    flock(fd, LOCK_UN);
    close(fd);
}
