/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An LD_PRELOAD shim for the fault tests (tests/faults/check_faults.sh).
 *
 * Allocations. Armed, it counts every allocation (malloc, calloc, realloc,
 * reallocarray, posix_memalign, aligned_alloc, memalign, valloc, pvalloc;
 * glibc's strdup, strndup, fopen, opendir... allocate through malloc, so
 * they are counted too) and fails the Nth once with ENOMEM. It also keeps
 * every block allocated while armed until it is freed, so that a driver can
 * check that a scenario gave back all it took. Counting starts only when
 * armed, so what the C library and OpenSSL set up before is not counted:
 *   - in-process: the driver calls faultshim_arm(N), found with dlsym;
 *   - in a command: FAULTSHIM_NTH=N arms at start-up (N = 0 counts only), and
 *     FAULTSHIM_COUNT_FILE receives "COUNT FIRED" at exit.
 *
 * Files. FAULTSHIM_FILE_PREFIX=DIR with FAULTSHIM_FILE_ERRNO=ENOSPC (or
 * EROFS, EDQUOT, EIO) fails, for paths under DIR, the operations named in
 * FAULTSHIM_FILE_OPS (comma-separated: create = open/fopen with O_CREAT and
 * mkstemp, write = write/pwrite on a descriptor opened there, fsync =
 * fsync/fdatasync there, rename = rename into or out of DIR, mkdir). What
 * other programs see on a full disk or a read-only mount, also as root (for
 * whom chmod proves nothing).
 * FAULTSHIM_VANISH=PATH removes PATH just before its first open: a file
 * listed by a directory scan and deleted before it is read.
 * FAULTSHIM_REWRITE=PATH with FAULTSHIM_REWRITE_WITH=TEXT rewrites PATH in
 * place (truncated, then TEXT written) right after the first read(2) or
 * pread(2) from it: a file changed by an editor while it is being read.
 *
 * glibc only: the real allocator is reached through its __libc_* entry
 * points, so that the shim never needs dlsym (which allocates) to allocate.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
/* Not in every header (memalign and pvalloc are in malloc.h, which would
 * also declare the rest); the shim's own entry points for the driver. */
void *memalign(size_t align, size_t n);
void *pvalloc(size_t n);
EXPORT void faultshim_arm(long n);
EXPORT long faultshim_disarm(void);
EXPORT int faultshim_fired(void);
EXPORT size_t faultshim_live(int fd);

/* ---- allocation counting ------------------------------------------------ */

static volatile int armed;
static long nth;            /* the allocation to fail, 1-based; 0: none */
static long counted;
static int fired;
static int spin;
static _Thread_local int in_backtrace;

static void lock(void)
{
    while (__atomic_exchange_n(&spin, 1, __ATOMIC_ACQUIRE))
        ;
}

static void unlock(void)
{
    __atomic_store_n(&spin, 0, __ATOMIC_RELEASE);
}

/* The blocks allocated while armed, with where they were allocated: open
 * addressing, tombstones on free. */
#define SLOTS (1u << 18)
#define TOMB ((void *)1)
#define FRAMES 6
struct slot {
    void *p;
    size_t size;
    void *caller[FRAMES];
};
static struct slot *table;
static size_t live;

static size_t hash(const void *p)
{
    uintptr_t x = (uintptr_t)p >> 4;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 20) & (SLOTS - 1);
}

/* The dynamic loader's own text. What it allocates (the TLS slot tables
 * that grow with each dlopen, ...) it keeps for the life of the process
 * whatever the program does, so it is not counted as the program's leak. */
static uintptr_t ldso_lo, ldso_hi;

static int find_ldso(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "/ld-linux"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            ldso_lo = info->dlpi_addr + ph->p_vaddr;
            ldso_hi = ldso_lo + ph->p_memsz;
        }
    }
    return 1;
}

static void track(void *p, size_t size, void *caller)
{
    if (!p || !table || in_backtrace ||
        ((uintptr_t)caller >= ldso_lo && (uintptr_t)caller < ldso_hi))
        return;
    void *frames[FRAMES + 2] = {0};
    in_backtrace = 1;
    int got = backtrace(frames, FRAMES + 2);
    in_backtrace = 0;
    lock();
    size_t h = hash(p);
    for (size_t i = 0; i < SLOTS; i++, h = (h + 1) & (SLOTS - 1)) {
        if (table[h].p == NULL || table[h].p == TOMB) {
            table[h] = (struct slot){.p = p, .size = size};
            /* frames[0] is track, frames[1] the shim's entry point. */
            table[h].caller[0] = caller;
            for (int f = 2; f < got && f - 1 < FRAMES; f++)
                table[h].caller[f - 1] = frames[f];
            live++;
            break;
        }
    }
    unlock();
}

static void untrack(void *p)
{
    if (!p || !table || !live)
        return;
    lock();
    size_t h = hash(p);
    for (size_t i = 0; i < SLOTS && table[h].p != NULL; i++, h = (h + 1) & (SLOTS - 1)) {
        if (table[h].p == p) {
            table[h].p = TOMB;
            live--;
            break;
        }
    }
    unlock();
}

/* FAULTSHIM_SPARE=FUNC,...: allocations made directly by these functions
 * are neither counted nor failed (a library's code that crashes on a
 * failure, which the program calling it cannot prevent). */
static const char *spare;

static int in_list(const char *list, const char *name);

static int spared(void *caller)
{
    Dl_info info;
    return spare && dladdr(caller, &info) && info.dli_sname && in_list(spare, info.dli_sname);
}

/* 1 if this allocation is the one to fail. */
static int should_fail(void *caller)
{
    if (!armed || in_backtrace || spared(caller))
        return 0;
    long n = __atomic_add_fetch(&counted, 1, __ATOMIC_RELAXED);
    if (nth > 0 && n == nth) {
        fired = 1;
        /* FAULTSHIM_TRACE: where the failure is injected, on stderr. */
        if (getenv("FAULTSHIM_TRACE")) {
            void *frames[16];
            in_backtrace = 1;
            int got = backtrace(frames, 16);
            backtrace_symbols_fd(frames, got, STDERR_FILENO);
            in_backtrace = 0;
        }
        return 1;
    }
    return 0;
}

EXPORT void faultshim_arm(long n)
{
    if (!table) {
        table = mmap(NULL, SLOTS * sizeof(*table), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (table == MAP_FAILED)
            table = NULL;
    }
    if (table)
        memset(table, 0, SLOTS * sizeof(*table));
    if (!ldso_hi)
        dl_iterate_phdr(find_ldso, NULL);
    /* backtrace loads the unwinder on its first call: not while armed. */
    void *warm[2];
    backtrace(warm, 2);
    live = 0;
    counted = 0;
    fired = 0;
    nth = n;
    armed = 1;
}

/* Stop counting; the number of allocations counted while armed. */
EXPORT long faultshim_disarm(void)
{
    armed = 0;
    return counted;
}

EXPORT int faultshim_fired(void)
{
    return fired;
}

/* Blocks allocated while armed and not freed since; the first few are
 * written to fd with their size and the calls that allocated them. */
/* Whether name is one of list's comma-separated words (FAULTSHIM_SPARE,
 * FAULTSHIM_NOT_LEAKS, the file operations to fail). */
static int in_list(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; p && *p;) {
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
            return 1;
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    return 0;
}

/* FAULTSHIM_NOT_LEAKS=FUNC,...: blocks allocated under these functions are a
 * library's own caches that outlive any caller (OpenSSL's fetched-method
 * cache), not leaks of the program's. */
static int not_a_leak(const struct slot *sl)
{
    const char *list = getenv("FAULTSHIM_NOT_LEAKS");
    for (int f = 0; list && f < FRAMES && sl->caller[f]; f++) {
        Dl_info info;
        if (dladdr(sl->caller[f], &info) && info.dli_sname && in_list(list, info.dli_sname))
            return 1;
    }
    return 0;
}

EXPORT size_t faultshim_live(int fd)
{
    size_t shown = 0, leaks = 0;
    for (size_t i = 0; table && i < SLOTS; i++) {
        if (table[i].p == NULL || table[i].p == TOMB || not_a_leak(&table[i]))
            continue;
        if (leaks++ >= 8 || fd < 0)
            continue;
        dprintf(fd, "  leaked %zu bytes at %p, allocated from", table[i].size, table[i].p);
        for (int f = 0; f < FRAMES && table[i].caller[f]; f++) {
            Dl_info info;
            const char *sym = "?", *obj = "?";
            if (dladdr(table[i].caller[f], &info)) {
                sym = info.dli_sname ? info.dli_sname : "?";
                obj = info.dli_fname ? strrchr(info.dli_fname, '/') + 1 : "?";
            }
            dprintf(fd, " %s%s(%s+%#lx)", f ? "< " : "", sym, obj,
                    info.dli_fbase ? (unsigned long)((char *)table[i].caller[f] -
                                                     (char *)info.dli_fbase) : 0ul);
        }
        dprintf(fd, "\n");
        shown++;
    }
    return leaks;
}

#define CALLER __builtin_return_address(0)

EXPORT void *malloc(size_t n)
{
    if (should_fail(CALLER)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __libc_malloc(n);
    if (armed)
        track(p, n, CALLER);
    return p;
}

EXPORT void *calloc(size_t a, size_t b)
{
    if (should_fail(CALLER)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __libc_calloc(a, b);
    if (armed)
        track(p, a * b, CALLER);
    return p;
}

EXPORT void *realloc(void *old, size_t n)
{
    if (old == NULL)
        return malloc(n);
    if (n == 0) {
        untrack(old);
        return __libc_realloc(old, n);
    }
    if (should_fail(CALLER)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __libc_realloc(old, n);
    if (p) {
        untrack(old);
        if (armed)
            track(p, n, CALLER);
    }
    return p;
}

EXPORT void *reallocarray(void *old, size_t a, size_t b)
{
    if (b && a > SIZE_MAX / b) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(old, a * b);
}

EXPORT void free(void *p)
{
    untrack(p);
    __libc_free(p);
}

static void *aligned(size_t align, size_t n, void *caller)
{
    if (should_fail(caller)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __libc_memalign(align, n);
    if (armed)
        track(p, n, caller);
    return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = aligned(align, n, CALLER);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    return aligned(align, n, CALLER);
}

EXPORT void *memalign(size_t align, size_t n)
{
    return aligned(align, n, CALLER);
}

EXPORT void *valloc(size_t n)
{
    return aligned((size_t)sysconf(_SC_PAGESIZE), n, CALLER);
}

EXPORT void *pvalloc(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return aligned(page, (n + page - 1) & ~(page - 1), CALLER);
}

/* ---- file faults -------------------------------------------------------- */

static const char *prefix;   /* FAULTSHIM_FILE_PREFIX */
static size_t prefix_len;
static int file_errno;
static int fail_create, fail_write, fail_fsync, fail_rename, fail_mkdir;
static const char *vanish;   /* FAULTSHIM_VANISH */
static int vanished;
static const char *rewrite;  /* FAULTSHIM_REWRITE */
static const char *rewrite_with;
static int rewritten;
static dev_t rewrite_dev;
static ino_t rewrite_ino;
static int rewrite_known;

/* Descriptors opened under the prefix (write and fsync fail there). */
#define MAX_FD 4096
static unsigned char faulty_fd[MAX_FD];

static int under_prefix(const char *path)
{
    return prefix && path && strncmp(path, prefix, prefix_len) == 0 &&
           (path[prefix_len] == '/' || path[prefix_len] == '\0');
}

#define REAL(ret, name, args) \
    static ret(*real_##name) args; \
    if (!real_##name) \
        real_##name = (ret(*) args)dlsym(RTLD_NEXT, #name)

static void mark_fd(int fd, const char *path)
{
    if (fd >= 0 && fd < MAX_FD)
        faulty_fd[fd] = (unsigned char)under_prefix(path);
}

static int fd_faulty(int fd)
{
    return fd >= 0 && fd < MAX_FD && faulty_fd[fd];
}

/* Before path is opened: FAULTSHIM_VANISH's removal. */
static void before_open(const char *path)
{
    if (vanish && !vanished && path && strcmp(path, vanish) == 0) {
        vanished = 1;
        unlink(path);
    }
}

/* After a read from fd: FAULTSHIM_REWRITE's rewrite, once. */
static void after_read(int fd)
{
    if (!rewrite || rewritten)
        return;
    struct stat st;
    if (!rewrite_known) {
        if (stat(rewrite, &st) != 0)
            return;
        rewrite_dev = st.st_dev;
        rewrite_ino = st.st_ino;
        rewrite_known = 1;
    }
    if (fstat(fd, &st) != 0 || st.st_dev != rewrite_dev || st.st_ino != rewrite_ino)
        return;
    rewritten = 1;
    int w = open(rewrite, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (w >= 0) {
        size_t len = strlen(rewrite_with);
        ssize_t put = write(w, rewrite_with, len);
        (void)put;
        close(w);
    }
}

/* A full disk refuses only a new file (opening one that exists needs no
 * space); a read-only one refuses every open that could write. */
static int open_fault(const char *path, int flags)
{
    if (!(flags & O_CREAT) || !fail_create || !under_prefix(path))
        return 0;
    return file_errno != ENOSPC || access(path, F_OK) != 0;
}

EXPORT int open(const char *path, int flags, ...)
{
    REAL(int, open, (const char *, int, ...));
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    before_open(path);
    if (open_fault(path, flags)) {
        errno = file_errno;
        return -1;
    }
    int fd = real_open(path, flags, mode);
    mark_fd(fd, path);
    return fd;
}

EXPORT int open64(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return open(path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    REAL(int, openat, (int, const char *, int, ...));
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    /* Only absolute names are matched against the prefix. */
    before_open(path);
    if (open_fault(path, flags)) {
        errno = file_errno;
        return -1;
    }
    int fd = real_openat(dirfd, path, flags, mode);
    mark_fd(fd, path);
    return fd;
}

static int fopen_creates(const char *mode)
{
    return mode && (mode[0] == 'w' || mode[0] == 'a');
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
    REAL(FILE *, fopen, (const char *, const char *));
    before_open(path);
    if (fopen_creates(mode) && fail_create && under_prefix(path)) {
        errno = file_errno;
        return NULL;
    }
    FILE *f = real_fopen(path, mode);
    if (f)
        mark_fd(fileno(f), path);
    return f;
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
    return fopen(path, mode);
}

/* mkstemp and friends open inside the C library, where open() above is
 * not seen: they are caught here. */
#define TEMP_WRAPPER(name, params, args) \
    EXPORT int name params \
    { \
        REAL(int, name, params); \
        if (fail_create && under_prefix(tmpl)) { \
            errno = file_errno; \
            return -1; \
        } \
        int fd = real_##name args; \
        mark_fd(fd, tmpl); \
        return fd; \
    }
TEMP_WRAPPER(mkstemp, (char *tmpl), (tmpl))
TEMP_WRAPPER(mkostemp, (char *tmpl, int flags), (tmpl, flags))
TEMP_WRAPPER(mkstemps, (char *tmpl, int suffixlen), (tmpl, suffixlen))
TEMP_WRAPPER(mkostemps, (char *tmpl, int suffixlen, int flags), (tmpl, suffixlen, flags))

EXPORT int close(int fd)
{
    REAL(int, close, (int));
    if (fd >= 0 && fd < MAX_FD)
        faulty_fd[fd] = 0;
    return real_close(fd);
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    REAL(ssize_t, write, (int, const void *, size_t));
    /* A full disk often takes part of a write first: half is written, the
     * rest fails, as a caller that loops will see. */
    if (fail_write && fd_faulty(fd) && n > 0) {
        static int half_done[MAX_FD];
        if (!half_done[fd] && n > 1) {
            half_done[fd] = 1;
            return real_write(fd, buf, n / 2);
        }
        half_done[fd] = 0;
        errno = file_errno;
        return -1;
    }
    return real_write(fd, buf, n);
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    REAL(ssize_t, pwrite, (int, const void *, size_t, off_t));
    if (fail_write && fd_faulty(fd) && n > 0) {
        errno = file_errno;
        return -1;
    }
    return real_pwrite(fd, buf, n, off);
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return pwrite(fd, buf, n, off);
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    REAL(ssize_t, read, (int, void *, size_t));
    ssize_t got = real_read(fd, buf, n);
    if (got > 0)
        after_read(fd);
    return got;
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    REAL(ssize_t, pread, (int, void *, size_t, off_t));
    ssize_t got = real_pread(fd, buf, n, off);
    if (got > 0)
        after_read(fd);
    return got;
}

EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    return pread(fd, buf, n, off);
}

EXPORT int fsync(int fd)
{
    REAL(int, fsync, (int));
    if (fail_fsync && fd_faulty(fd)) {
        errno = file_errno;
        return -1;
    }
    return real_fsync(fd);
}

EXPORT int fdatasync(int fd)
{
    REAL(int, fdatasync, (int));
    if (fail_fsync && fd_faulty(fd)) {
        errno = file_errno;
        return -1;
    }
    return real_fdatasync(fd);
}

EXPORT int rename(const char *from, const char *to)
{
    REAL(int, rename, (const char *, const char *));
    if (fail_rename && (under_prefix(from) || under_prefix(to))) {
        errno = file_errno;
        return -1;
    }
    return real_rename(from, to);
}

EXPORT int mkdir(const char *path, mode_t mode)
{
    REAL(int, mkdir, (const char *, mode_t));
    if (fail_mkdir && under_prefix(path)) {
        errno = file_errno;
        return -1;
    }
    return real_mkdir(path, mode);
}

/* ---- set-up from the environment ---------------------------------------- */

static const char *count_file;

static int errno_named(const char *name)
{
    static const struct {
        const char *name;
        int value;
    } names[] = {{"ENOSPC", ENOSPC}, {"EROFS", EROFS}, {"EDQUOT", EDQUOT}, {"EIO", EIO},
                 {"EACCES", EACCES}};
    for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i].name) == 0)
            return names[i].value;
    return ENOSPC;
}

__attribute__((constructor)) static void faultshim_start(void)
{
    const char *p = getenv("FAULTSHIM_FILE_PREFIX");
    if (p && *p) {
        prefix = p;
        prefix_len = strlen(p);
        while (prefix_len > 1 && p[prefix_len - 1] == '/')
            prefix_len--;
        file_errno = errno_named(getenv("FAULTSHIM_FILE_ERRNO"));
        const char *ops = getenv("FAULTSHIM_FILE_OPS");
        if (!ops || !*ops)
            ops = "create,write,fsync,rename,mkdir";
        fail_create = in_list(ops, "create");
        fail_write = in_list(ops, "write");
        fail_fsync = in_list(ops, "fsync");
        fail_rename = in_list(ops, "rename");
        fail_mkdir = in_list(ops, "mkdir");
    }
    spare = getenv("FAULTSHIM_SPARE");
    vanish = getenv("FAULTSHIM_VANISH");
    rewrite = getenv("FAULTSHIM_REWRITE");
    rewrite_with = getenv("FAULTSHIM_REWRITE_WITH");
    if (!rewrite_with)
        rewrite_with = "";
    count_file = getenv("FAULTSHIM_COUNT_FILE");
    const char *n = getenv("FAULTSHIM_NTH");
    if (n && *n)
        faultshim_arm(strtol(n, NULL, 10));
}

__attribute__((destructor)) static void faultshim_end(void)
{
    if (!count_file || !armed)
        return;
    long c = faultshim_disarm();
    int fd = open(count_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        dprintf(fd, "%ld %d\n", c, fired);
        close(fd);
    }
}
