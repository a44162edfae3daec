/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The optional census ([tune] census = yes): how many calls an application
 * made per operation, variant and size class, and nothing else, so that the
 * next tune measures the classes that matter here first (and the ones its
 * effort would skip, such as tiny calls, when they are called at all). The
 * counts are merged into census.txt beside the pins file, under a lock of
 * its own (census.lock), when the engine is freed or the process exits: a
 * tune holds pins.lock for minutes, and an exiting application must not wait
 * for it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/selector/pins_text.h"
#include "engine/selector/selector.h"

#define CENSUS_FILE "census.txt"
#define CENSUS_LOCK "census.lock"
/* A merge takes milliseconds and only other flushes take census.lock, so a
 * short wait covers them; longer would delay the application's exit. */
#define CENSUS_LOCK_WAIT_MS 200u
#define N_COUNTERS ((size_t)MPCE_OP_COUNT * MPCE_VARIANTS * MPCE_SIZE_CLASSES)

void mpce_census_start(mpce_engine *e)
{
    if (e->cfg.tune.census && e->cfg.tune.mode != MPCE_TUNE_OFF)
        e->census = calloc(N_COUNTERS, sizeof(*e->census));
}

void mpce_census_count_slow(mpce_engine *e, enum mpce_op_id op, unsigned variant,
                            unsigned size_class)
{
    __atomic_fetch_add(&e->census[((size_t)op * MPCE_VARIANTS + variant) * MPCE_SIZE_CLASSES +
                                  size_class],
                       1, __ATOMIC_RELAXED);
}

int mpce_census_read(const char *dir, struct mpce_census_entry **out, size_t *count)
{
    char path[4200], line[256];
    snprintf(path, sizeof(path), "%s/%s", dir, CENSUS_FILE);
    *out = NULL;
    *count = 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        errno = err;
        return err == ENOENT ? 0 : -1;
    }
    int rc = 0;
    while (fgets(line, sizeof(line), f)) {
        char key[96];
        unsigned long long n;
        enum mpce_op_id op;
        unsigned v, sc;
        /* Only well-formed lines naming a real row count: a damaged file
         * loses counts, never misdirects a tune. */
        if (line[0] == '#' || sscanf(line, "%95s %llu", key, &n) != 2 ||
            mpce_row_parse(key, &op, &v, &sc) != 0)
            continue;
        struct mpce_census_entry *grown = realloc(*out, (*count + 1) * sizeof(**out));
        if (!grown) {
            rc = -1;
            break;
        }
        *out = grown;
        snprintf(grown[*count].key, sizeof(grown[*count].key), "%s", key);
        grown[*count].calls = n;
        (*count)++;
    }
    /* Counts read only in part would be written back as the whole: the
     * caller must not merge into them. */
    int err = rc ? ENOMEM : ferror(f) ? EIO : 0;
    fclose(f);
    if (err) {
        free(*out);
        *out = NULL;
        *count = 0;
        errno = err;
        return -1;
    }
    return 0;
}

/* The census text: a header and "KEY CALLS" lines; malloc'd, NULL when out
 * of memory. */
static char *census_text(const uint64_t *total, const uint64_t *add, size_t *len)
{
    static const char head[] = "# libmpcengine census ([tune] census = yes): calls per "
                               "operation, variant and size class\n";
    size_t cap = sizeof(head) + 64, n = sizeof(head) - 1;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    memcpy(buf, head, n);
    for (unsigned op = 0; op < MPCE_OP_COUNT; op++)
        for (unsigned v = 0; v < MPCE_VARIANTS; v++)
            for (unsigned sc = 0; sc < MPCE_SIZE_CLASSES; sc++) {
                size_t i = ((size_t)op * MPCE_VARIANTS + v) * MPCE_SIZE_CLASSES + sc;
                uint64_t c = total[i] + add[i];
                if (c == 0 || v >= mpce_variant_count(mpce_op_info[op].prim))
                    continue;
                char key[96], row[160];
                mpce_row_key((enum mpce_op_id)op, v, sc, key, sizeof(key));
                int w = snprintf(row, sizeof(row), "%s %llu\n", key, (unsigned long long)c);
                if (w < 0 || (size_t)w >= sizeof(row))
                    continue;
                if (n + (size_t)w + 1 > cap) {
                    char *grown = realloc(buf, 2 * cap + (size_t)w);
                    if (!grown) {
                        free(buf);
                        return NULL;
                    }
                    buf = grown;
                    cap = 2 * cap + (size_t)w;
                }
                memcpy(buf + n, row, (size_t)w);
                n += (size_t)w;
            }
    *len = n;
    return buf;
}

/* The merged counts, written whole (mpce_state_file_replace). The old
 * file stays as it was on any failure, reading it included (a merge over
 * counts read in part would drop the rest). 0, or -1 with why. */
static int write_merged(const char *dir, const uint64_t *add, char *why, size_t why_len)
{
    char path[4200];
    int w = snprintf(path, sizeof(path), "%s/%s", dir, CENSUS_FILE);
    if (w < 0 || (size_t)w >= sizeof(path)) {
        snprintf(why, why_len, "%.900s: the directory name is too long for the census file "
                 "(set a shorter [tune] dir)", dir);
        return -1;
    }
    uint64_t *total = calloc(N_COUNTERS, sizeof(*total));
    struct mpce_census_entry *old = NULL;
    size_t n_old = 0;
    if (!total) {
        snprintf(why, why_len, "%.4000s: cannot merge: out of memory", path);
        return -1;
    }
    if (mpce_census_read(dir, &old, &n_old) != 0) {
        snprintf(why, why_len, "%.4000s: cannot read the counts so far: %s", path,
                 strerror(errno));
        free(total);
        return -1;
    }
    for (size_t i = 0; i < n_old; i++) {
        enum mpce_op_id op;
        unsigned v, sc;
        if (mpce_row_parse(old[i].key, &op, &v, &sc) == 0)
            total[((size_t)op * MPCE_VARIANTS + v) * MPCE_SIZE_CLASSES + sc] += old[i].calls;
    }
    free(old);
    size_t len = 0;
    char *text = census_text(total, add, &len);
    free(total);
    if (!text) {
        snprintf(why, why_len, "%.4000s: cannot merge: out of memory", path);
        return -1;
    }
    int rc = mpce_state_file_replace(path, text, len, NULL, why, why_len);
    free(text);
    return rc;
}

void mpce_census_flush(mpce_engine *e)
{
    if (e->census == NULL)
        return;
    uint64_t *snap = calloc(N_COUNTERS, sizeof(*snap));
    if (!snap)
        return;
    int any = 0;
    for (size_t i = 0; i < N_COUNTERS; i++)
        any |= (snap[i] = __atomic_exchange_n(&e->census[i], 0, __ATOMIC_RELAXED)) != 0;
    char dirs[2][4096], why[4608] = "";
    size_t nd = any ? mpce_selector_dirs(&e->cfg, dirs) : 0;
    for (size_t i = 0; i < nd; i++) {
        int lock = mpce_pins_lock_file(dirs[i], CENSUS_LOCK, CENSUS_LOCK_WAIT_MS, why,
                                       sizeof(why));
        if (lock < 0)
            continue;
        char failed[4400];
        int rc = write_merged(dirs[i], snap, failed, sizeof(failed));
        mpce_pins_unlock(lock);
        if (rc == 0) {
            free(snap);
            return;
        }
        snprintf(why, sizeof(why), "%.4400s; the file is left as it was", failed);
    }
    if (any)
        mpce_log(&e->log, MPCE_LOG_INFO, NULL, "census: no pins directory could take the "
                 "counts (%s)", nd ? why : "none configured");
    free(snap);
}

void mpce_census_free(mpce_engine *e)
{
    mpce_census_flush(e);
    free(e->census);
    e->census = NULL;
}
