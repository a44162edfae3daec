/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A plain main for a fuzz target, for builds without libFuzzer: run every
 * file named on the command line (a directory: every file in it, sorted)
 * through LLVMFuzzerTestOneInput once. Without arguments it replays the
 * target's committed seed corpus and regression inputs,
 * FUZZ_DIR/corpus/FUZZ_TARGET and FUZZ_DIR/regress/FUZZ_TARGET, which is
 * what `make check` runs. A failed check or a crash ends the process, so
 * the test fails; a missing directory other than regress/ fails too.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/fuzz.h"

static size_t replayed;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap *= 2);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    /* A copy of exactly len bytes, so that ASan sees a read past the end. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    replayed++;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, int missing_ok)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT && missing_ok)
            return 0;
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return run_file(path);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s: %s\n", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (n + 1) * sizeof(*names));
        if (!grown || !(grown[n] = strdup(e->d_name))) {
            names = grown ? grown : names;
            rc = -1;
            break;
        }
        names = grown;
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_name);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            char file[4096];
            snprintf(file, sizeof(file), "%s/%s", path, names[i]);
            rc = run_file(file);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc && rc == 0; i++)
            rc = run_path(argv[i], 0);
    } else {
        rc = run_path(FUZZ_DIR "/corpus/" FUZZ_TARGET, 0);
        /* A seed corpus that yields nothing would replay nothing and pass. */
        if (rc == 0 && replayed == 0) {
            fprintf(stderr, "replay: %s holds no inputs: the seeds are missing\n",
                    FUZZ_DIR "/corpus/" FUZZ_TARGET);
            rc = -1;
        }
        if (rc == 0)
            rc = run_path(FUZZ_DIR "/regress/" FUZZ_TARGET, 1);
    }
    printf("%s: %zu inputs replayed%s\n", FUZZ_TARGET, replayed, rc ? ", then an error" : "");
    return rc ? 1 : 0;
}
