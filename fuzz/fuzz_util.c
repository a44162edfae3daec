/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/selector/selector.h"
#include "fuzz/fuzz.h"
#include "engine/internal.h"

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: check failed: %s: ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

static char *temp_dir;
static pid_t temp_owner;

/* Two levels deep at most: the targets' drop-in directories hold files. */
static void remove_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            if (unlink(path) != 0 && errno == EISDIR && depth < 2)
                remove_tree(path, depth + 1);
        }
        closedir(d);
    }
    rmdir(dir);
}

static void remove_temp_dir(void)
{
    /* A child (the engine may spawn one) must not remove its parent's. */
    if (temp_dir && getpid() == temp_owner)
        remove_tree(temp_dir, 0);
}

void fuzz_clear_error(void)
{
    mpce_error(MPCE_OK, "%s", "");
}

const char *fuzz_temp_dir(void)
{
    if (temp_dir)
        return temp_dir;
    /* Memory, where there is some: every input is written to a file, and
     * on a disk (ext4 flushes a truncated file when it is closed) that
     * costs ten times the parse. */
    const char *base = getenv("MPCE_FUZZ_TMPDIR");
    if (!base || !base[0])
        base = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof(tmpl), "%s/mpce-fuzz-XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(tmpl)) {
        perror(tmpl);
        abort();
    }
    temp_dir = strdup(tmpl);
    if (!temp_dir)
        abort();
    temp_owner = getpid();
    atexit(remove_temp_dir);
    return temp_dir;
}

char *fuzz_write(const char *dir, const char *name, const void *data, size_t len)
{
    size_t plen = strlen(dir) + strlen(name) + 2;
    char *path = malloc(plen);
    if (!path)
        abort();
    snprintf(path, plen, "%s/%s", dir, name);
    /* A new file rather than a truncated one (see fuzz_temp_dir). */
    if (unlink(path) != 0 && errno != ENOENT) {
        perror(path);
        abort();
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror(path);
        abort();
    }
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w <= 0) {
            perror(path);
            abort();
        }
        p += w;
        len -= (size_t)w;
    }
    close(fd);
    return path;
}

char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

mpce_engine *fuzz_engine(int with_plugins)
{
    static mpce_engine *engines[2];
    int i = with_plugins ? 1 : 0;
    if (engines[i])
        return engines[i];
    /* Hermetic, as the test suites are (tests/testutil.c): a helper
     * installed at the prefix must not vet for the targets or write
     * verdicts beside the installed engine's. Without one, the tree's
     * modules are self-tested in process, as the targets need. */
    mpce_selector_default_helper_override = "/nonexistent/mpcengine-probe (the fuzz targets "
                                            "use no installed helper)";
    const char *plugins = TEST_PLUGIN_PATH;
    const char *conf = "[engine]\nallow_variable_time = yes\nthreads = 1\n";
    char *path = fuzz_write(fuzz_temp_dir(), "engine.conf", conf, strlen(conf));
    mpce_options opts = {
        .struct_size = sizeof(opts),
        .config_path = path,
        .plugin_path = i && plugins[0] ? plugins : NULL,
        .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG |
                 MPCE_OPT_NO_TUNE | (i && plugins[0] ? 0u : MPCE_OPT_NO_PLUGINS),
    };
    if (mpce_engine_new(&opts, &engines[i]) != MPCE_OK) {
        fprintf(stderr, "fuzz: cannot make an engine: %s\n", mpce_last_error());
        abort();
    }
    unlink(path);
    free(path);
    return engines[i];
}

/* Whether this CPU runs one of the aesni module's implementations of prim
 * (plugins/aesni/plugin.c's probes): AES-NI for every primitive, and for
 * the NTT also AVX-512F/DQ/VL, which its slowest NTT kernel needs. */
static int aesni_expected(mpce_primitive prim)
{
#if defined(FUZZ_AESNI_BUILT) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("aes"))
        return 0;
    if (prim == MPCE_PRIM_NTT)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
    return 1;
#else
    (void)prim;
    return 0;
#endif
}

size_t fuzz_impls(mpce_engine *engine, mpce_primitive prim, const char **names, size_t max)
{
    const mpce_impl_info *rows;
    size_t count, found = 0;
    if (mpce_list(engine, 1, &rows, &count) != MPCE_OK) {
        fprintf(stderr, "fuzz: cannot list implementations: %s\n", mpce_last_error());
        abort();
    }
    const char *want = mpce_primitive_name(prim);
    /* A failed self-test is a finding, not an implementation to leave out:
     * dropping it would compare soft with soft and pass. So is a module
     * that crashed or hung in its vet (a row without an implementation).
     * What this CPU cannot run ("skipped") is left out. */
    for (size_t i = 0; i < count; i++) {
        int ours = strcmp(rows[i].primitive, want) == 0 || rows[i].impl[0] == '\0';
        if (ours && strcmp(rows[i].selftest, "fail") == 0) {
            fprintf(stderr, "fuzz: %s %s (%s) failed its self-test: %s\n", want,
                    rows[i].impl[0] ? rows[i].impl : "module", rows[i].path, rows[i].reason);
            abort();
        }
    }
    /* The built-in plugin's first, the reference; then everything else. */
    size_t aesni = 0;
    for (int soft = 1; soft >= 0; soft--)
        for (size_t i = 0; i < count && found < max; i++)
            if (strcmp(rows[i].primitive, want) == 0 &&
                strcmp(rows[i].selftest, "pass") == 0 &&
                (strcmp(rows[i].plugin, "soft") == 0) == soft) {
                names[found++] = rows[i].impl;
                aesni += strcmp(rows[i].plugin, "aesni") == 0;
            }
    /* FUZZ_VERBOSE=1: say what is compared, to check a run covers them. */
    if (getenv("FUZZ_VERBOSE"))
        for (size_t i = 0; i < found; i++)
            fprintf(stderr, "fuzz: %s implementation %zu: %s\n", want, i, names[i]);
    if (found == 0 || strcmp(names[0], "") == 0) {
        fprintf(stderr, "fuzz: no implementation of %s passed its self-test\n", want);
        abort();
    }
    /* With the aesni module built and a CPU that runs it, a comparison
     * without it would pass on soft alone: the module must have loaded and
     * given at least one passing implementation of prim. */
    if (aesni_expected(prim) && aesni == 0) {
        fprintf(stderr, "fuzz: this build has the aesni module (%s) and this CPU runs it, "
                "but no aesni implementation of %s is in the comparison:\n",
                TEST_PLUGIN_PATH, want);
        for (size_t i = 0; i < count; i++)
            if (strcmp(rows[i].primitive, want) == 0 || rows[i].impl[0] == '\0')
                fprintf(stderr, "  %s %s %s: %s %s\n", rows[i].plugin, rows[i].impl,
                        rows[i].selftest, rows[i].path, rows[i].reason);
        abort();
    }
    return found;
}

uint8_t fuzz_u8(struct fuzz_in *in)
{
    if (in->left == 0)
        return 0;
    in->left--;
    return *in->p++;
}

uint64_t fuzz_u64(struct fuzz_in *in)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)fuzz_u8(in) << (8 * i);
    return v;
}

void fuzz_bytes(struct fuzz_in *in, void *out, size_t len)
{
    size_t n = len < in->left ? len : in->left;
    memcpy(out, in->p, n);
    memset((uint8_t *)out + n, 0, len - n);
    in->p += n;
    in->left -= n;
}

void *fuzz_alloc_misaligned(size_t len, size_t misalign)
{
    /* The buffer ends where the allocation does, so that ASan catches a
     * kernel reading or writing one byte past it; the 64 bytes in front
     * hold the allocation's start. */
    misalign %= 64;
    void *base = NULL;
    if (posix_memalign(&base, 64, 64 + misalign + (len ? len : 1)) != 0)
        abort();
    uint8_t *p = (uint8_t *)base + 64 + misalign;
    memcpy(p - sizeof(void *), &base, sizeof(void *));
    return p;
}

void fuzz_free_misaligned(void *p)
{
    if (!p)
        return;
    void *base;
    memcpy(&base, (uint8_t *)p - sizeof(void *), sizeof(void *));
    free(base);
}

uint64_t fuzz_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
