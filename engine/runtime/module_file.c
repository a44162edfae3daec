/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One descriptor from check to load. A path names whatever is there at the
 * moment it is looked up; a descriptor keeps naming the inode that was
 * checked and hashed, so another user cannot swap the module (or a directory
 * on its way) between the checks and dlopen.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include <openssl/evp.h>

#include "engine/runtime/module_file.h"

void (*mpce_module_file_test_hook)(const char *path) = NULL;

/* glibc keeps a loaded object under the name it was opened by, so a later
 * dlopen of the same /proc/self/fd/N name returns that object whatever N now
 * holds; each try moves to a fresh descriptor number. A handful suffices:
 * only names still held by loaded objects are in the way. */
#define LOAD_TRIES 16

static int fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t len, const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static const char *kind(mode_t mode)
{
    if (S_ISREG(mode))
        return "regular file";
    if (S_ISDIR(mode))
        return "directory";
    if (S_ISLNK(mode))
        return "symbolic link";
    if (S_ISFIFO(mode))
        return "fifo";
    if (S_ISSOCK(mode))
        return "socket";
    if (S_ISCHR(mode))
        return "character device";
    if (S_ISBLK(mode))
        return "block device";
    return "special file";
}

/* Whoever owns a file or directory can rewrite it (or its entries), so only
 * root and the user the code runs as may own what we execute or obey. */
/* A setgid program (or one given file capabilities) runs with the invoking
 * user's uid: that user is the one it must not trust, so only root's files
 * are. A setuid program's own user is as trusted as the program. */
static int trusts_only_root(void)
{
#if defined(__linux__)
    return getauxval(AT_SECURE) && geteuid() == getuid();
#else
    return 0;
#endif
}

static int check_owner(const struct stat *sb, const char *what, const char *path, char *why,
                       size_t len)
{
    uid_t me = geteuid();
    if (sb->st_uid == 0)
        return 0;
    if (trusts_only_root())
        return fail(why, len,
                    "%s %s is owned by uid %u: a setgid or file-capability program trusts only "
                    "root's files, since the user running it could change its own: run %s %s",
                    what, path, (unsigned)sb->st_uid,
                    S_ISLNK(sb->st_mode) ? "chown -h root" : "chown root", path);
    if (sb->st_uid == me)
        return 0;
    return fail(why, len,
                "%s %s is owned by uid %u, not by root or the running user (uid %u): run %s %s "
                "or remove it",
                what, path, (unsigned)sb->st_uid, (unsigned)me,
                S_ISLNK(sb->st_mode) ? "chown -h root" : "chown root", path);
}

/* Group or world write lets others replace a file's bytes or a directory's
 * entries. In a sticky directory others can add entries but not rename or
 * remove ours, so the path below it stays ours: good enough on the way down,
 * not for the directory whose entries are loaded (anyone could drop a file
 * there; the owner check would refuse it, but the admin should hear now). */
static int check_mode(const struct stat *sb, const char *what, const char *path, int sticky_ok,
                      char *why, size_t len)
{
    mode_t w = sb->st_mode & (S_IWGRP | S_IWOTH);
    if (!w || (sticky_ok && S_ISDIR(sb->st_mode) && (sb->st_mode & S_ISVTX)))
        return 0;
    const char *fix = w == (S_IWGRP | S_IWOTH) ? "go-w" : (w & S_IWOTH) ? "o-w" : "g-w";
    int sticky = S_ISDIR(sb->st_mode) && (sb->st_mode & S_ISVTX);
    return fail(why, len, "%s %s is %s-writable (mode %04o%s): run chmod %s %s", what, path,
                (w & S_IWOTH) ? "world" : "group", (unsigned)(sb->st_mode & 07777),
                sticky ? "; the sticky bit is accepted only on the directories above it" : "",
                fix, path);
}

/* Every directory from / down to canon (canonical: no links, dots or double
 * slashes), the last of which must be the directory that was opened; that
 * one may be sticky only when sticky_self_ok. */
static int check_chain(const char *canon, const struct stat *opened, int sticky_self_ok,
                       char *why, size_t len)
{
    size_t n = strlen(canon);
    char p[4096];
    if (n == 0 || n >= sizeof(p) || canon[0] != '/')
        return fail(why, len, "cannot check directory %s: its canonical path is unusable", canon);
    size_t end = 1;
    for (;;) {
        memcpy(p, canon, end);
        p[end] = '\0';
        int self = end >= n;
        struct stat sb;
        if (lstat(p, &sb) != 0)
            return fail(why, len, "cannot check directory %s: %s", p, strerror(errno));
        /* A link now where realpath saw a directory: someone is moving things. */
        if (!S_ISDIR(sb.st_mode))
            return fail(why, len, "directory %s changed while it was being checked (it is now "
                        "a %s): try again", p, kind(sb.st_mode));
        if (check_owner(&sb, "directory", p, why, len) != 0 ||
            check_mode(&sb, "directory", p, !self || sticky_self_ok, why, len) != 0)
            return -1;
        if (self) {
            if (sb.st_dev != opened->st_dev || sb.st_ino != opened->st_ino)
                return fail(why, len, "directory %s changed while it was being checked (it is "
                            "not the directory that was opened): try again", p);
            return 0;
        }
        const char *next = strchr(canon + end + (end > 1), '/');
        end = next ? (size_t)(next - canon) : n;
    }
}

/* The canonical chain says where the directory is, not how the given path got
 * there: a symbolic link on the way decides which directory is used, so it
 * must belong to a trusted user and sit in a directory others cannot change. */
static int check_links(const char *dir, char *why, size_t len)
{
    size_t n = strlen(dir);
    char p[4096], holder[4096];
    if (n >= sizeof(p))
        return fail(why, len, "directory path %.200s... is too long", dir);
    size_t end = 0;
    while (end < n) {
        size_t start = end;
        while (start < n && dir[start] == '/')
            start++;
        if (start >= n)
            break;
        size_t stop = start;
        while (stop < n && dir[stop] != '/')
            stop++;
        end = stop;
        size_t clen = stop - start;
        if ((clen == 1 && dir[start] == '.') ||
            (clen == 2 && dir[start] == '.' && dir[start + 1] == '.'))
            continue;
        memcpy(p, dir, stop);
        p[stop] = '\0';
        struct stat sb;
        if (lstat(p, &sb) != 0)
            return fail(why, len, "cannot check %s: %s", p, strerror(errno));
        if (!S_ISLNK(sb.st_mode))
            continue;
        if (check_owner(&sb, "symbolic link", p, why, len) != 0)
            return -1;
        size_t hl = start;
        while (hl > 1 && dir[hl - 1] == '/')
            hl--;
        if (hl == 0) {
            strcpy(holder, ".");
        } else {
            memcpy(holder, dir, hl);
            holder[hl] = '\0';
        }
        struct stat hs;
        if (stat(holder, &hs) != 0)
            return fail(why, len, "cannot check directory %s: %s", holder, strerror(errno));
        if (check_owner(&hs, "directory", holder, why, len) != 0 ||
            check_mode(&hs, "directory", holder, 1, why, len) != 0)
            return -1;
    }
    return 0;
}

/* What the internal checks return, beside -1, when memory ran out. */
#define FILE_NOMEM (-2)

static int check_dir(int dfd, const char *dir, int sticky_self_ok, char *why, size_t len)
{
    struct stat opened;
    if (fstat(dfd, &opened) != 0)
        return fail(why, len, "cannot check directory %s: %s", dir, strerror(errno));
    char *canon = realpath(dir, NULL);
    if (!canon) {
        const int err = errno;
        fail(why, len, "cannot resolve directory %s: %s", dir, strerror(err));
        return err == ENOMEM ? FILE_NOMEM : -1;
    }
    int rc = check_chain(canon, &opened, sticky_self_ok, why, len);
    if (rc == 0 && strcmp(canon, dir) != 0)
        rc = check_links(dir, why, len);
    free(canon);
    return rc;
}

/* O_NONBLOCK: opening a fifo must not wait for a writer before fstat can
 * refuse it. O_NOCTTY: a terminal must not become ours by being opened. */
static int open_file(int dfd, const char *name, const char *path, char *why, size_t len)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno == ELOOP)
            return fail(why, len, "file %s is a symbolic link: install the file itself there, "
                        "not a link to it", path);
        return fail(why, len, "cannot open file %s: %s", path, strerror(errno));
    }
    struct stat sb;
    int rc;
    if (fstat(fd, &sb) != 0)
        rc = fail(why, len, "cannot check file %s: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        rc = fail(why, len, "file %s is not a regular file (it is a %s): install the file "
                  "itself there", path, kind(sb.st_mode));
    else if (check_owner(&sb, "file", path, why, len) != 0 ||
             check_mode(&sb, "file", path, 0, why, len) != 0)
        rc = -1;
    else {
        int fl = fcntl(fd, F_GETFL);
        rc = (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
                 ? fail(why, len, "cannot use file %s: %s", path, strerror(errno))
                 : 0;
    }
    if (rc != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The descriptor of dir/name after every check, or -1 with the reason. name
 * must be one component: anything below dir would escape the checks. A
 * plugin directory is scanned, so no one else may add files to it: sticky
 * is not enough there. A file named by itself (configuration) may sit in a
 * sticky directory, where others cannot replace it. */
static int open_checked(const char *dir, const char *name, const char *path, int sticky_dir_ok,
                        char *why, size_t len)
{
    if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return fail(why, len, "'%s' in %s is not a plain file name: name the file itself, "
                    "without directories", name, dir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return fail(why, len, "cannot open directory %s: %s", dir, strerror(errno));
    int rc = check_dir(dfd, dir, sticky_dir_ok, why, len);
    int fd = rc == 0 ? open_file(dfd, name, path, why, len) : rc;
    close(dfd);
    return fd;
}

/* pread from 0: the hash covers the whole file wherever the offset is. */
static int hash_fd(int fd, const char *path, char hex[65], char *why, size_t len)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int rc = 0;
    errno = 0;
    if (!md) {
        fail(why, len, "cannot hash file %s: out of memory", path);
        rc = FILE_NOMEM;
    } else if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
        /* OpenSSL's allocations fail through malloc, which leaves ENOMEM;
         * otherwise its provider has no SHA-256 (a FIPS or broken setup). */
        if (errno == ENOMEM) {
            fail(why, len, "cannot hash file %s: out of memory", path);
            rc = FILE_NOMEM;
        } else {
            rc = fail(why, len, "cannot hash file %s: OpenSSL SHA-256 is unavailable: check "
                      "the libcrypto installation (its providers and openssl.cnf)", path);
        }
    }
    unsigned char buf[65536];
    off_t off = 0;
    while (rc == 0) {
        ssize_t got = pread(fd, buf, sizeof(buf), off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            rc = fail(why, len, "cannot read file %s: %s", path, strerror(errno));
        else if (got == 0)
            break;
        else if (EVP_DigestUpdate(md, buf, (size_t)got) != 1)
            rc = fail(why, len, "cannot hash file %s: OpenSSL SHA-256 failed", path);
        else
            off += got;
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned dlen = 0;
    if (rc == 0 && (EVP_DigestFinal_ex(md, digest, &dlen) != 1 || dlen != 32))
        rc = fail(why, len, "cannot hash file %s: OpenSSL SHA-256 failed", path);
    EVP_MD_CTX_free(md);
    if (rc == 0)
        for (unsigned i = 0; i < 32; i++)
            snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return rc;
}

int mpce_module_file_open(const char *dir, const char *name, struct mpce_module_file *f,
                          char *why, size_t why_len)
{
    f->fd = -1;
    f->no_memory = 0;
    f->path[0] = '\0';
    f->sha256[0] = '\0';
    size_t dl = strlen(dir);
    const char *sep = (dl && dir[dl - 1] == '/') ? "" : "/";
    if ((size_t)snprintf(f->path, sizeof(f->path), "%s%s%s", dir, sep, name) >= sizeof(f->path))
        return fail(why, why_len, "path %.200s.../%.200s is too long", dir, name);
    int fd = open_checked(dir, name, f->path, 0, why, why_len);
    if (fd < 0) {
        f->no_memory = fd == FILE_NOMEM;
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int err = errno;
        close(fd);
        return fail(why, why_len, "%s: fstat: %s", f->path, strerror(err));
    }
    int rc = hash_fd(fd, f->path, f->sha256, why, why_len);
    if (rc != 0) {
        close(fd);
        f->sha256[0] = '\0';
        f->no_memory = rc == FILE_NOMEM;
        return -1;
    }
    f->size = (unsigned long long)sb.st_size;
    f->mtime = (long long)sb.st_mtime;
    f->dev = (unsigned long long)sb.st_dev;
    f->ino = (unsigned long long)sb.st_ino;
    f->fd = fd;
    return 0;
}

struct same_bytes {
    uintptr_t base;   /* l_addr of the object dlopen returned */
    const char *name; /* its l_name */
    int fd;
    int result;       /* 1 the same bytes, 0 not (or not found), -1 read error */
    int err;
};

/* Whether len bytes of a loaded segment equal buf. A plain loop, not
 * memcmp, and uninstrumented: an AddressSanitizer build poisons the redzones
 * between a module's globals, and these bytes are read as the file's, not as
 * the module's objects. */
#if defined(__GNUC__)
__attribute__((no_sanitize_address))
#endif
static int same_as_mapped(const unsigned char *mem, const unsigned char *buf, size_t len)
{
    unsigned char diff = 0;
    for (size_t i = 0; i < len; i++)
        diff |= (unsigned char)(mem[i] ^ buf[i]);
    return diff == 0;
}

/* Read-only segments are mapped from the file unchanged (no relocation
 * writes there), so they can be compared with the descriptor byte for byte. */
static int compare_segments(struct dl_phdr_info *info, size_t size, void *data)
{
    struct same_bytes *c = data;
    if ((uintptr_t)info->dlpi_addr != c->base || !info->dlpi_name ||
        strcmp(info->dlpi_name, c->name) != 0)
        return 0;
    size_t compared = 0;
    unsigned char buf[16384];
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R) || (ph->p_flags & PF_W))
            continue;
        const unsigned char *mem =
            (const unsigned char *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
        for (size_t done = 0; done < ph->p_filesz;) {
            size_t want = ph->p_filesz - done < sizeof(buf) ? ph->p_filesz - done : sizeof(buf);
            ssize_t got = pread(c->fd, buf, want, (off_t)(ph->p_offset + done));
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0) {
                c->result = -1;
                c->err = errno;
                return 1;
            }
            if (got == 0 || !same_as_mapped(mem + done, buf, (size_t)got)) {
                c->result = 0;
                return 1;
            }
            done += (size_t)got;
        }
        compared += ph->p_filesz;
    }
    c->result = compared > 0;
    return 1;
}

/* Whether the object behind handle was mapped from the bytes of fd: dlopen
 * may hand back an object loaded earlier (same name, or same inode). */
static int loaded_from(void *handle, int fd, int *err)
{
    struct link_map *lm = NULL;
    *err = 0;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
        return -1;
    struct same_bytes c = {.base = (uintptr_t)lm->l_addr, .name = lm->l_name, .fd = fd};
    dl_iterate_phdr(compare_segments, &c);
    *err = c.err;
    return c.result;
}

int mpce_fd_proc_name(int fd, char name[64])
{
    struct stat want, got;
    snprintf(name, 64, "/proc/self/fd/%d", fd);
    if (fstat(fd, &want) != 0 || stat(name, &got) != 0)
        return -1;
    return got.st_dev == want.st_dev && got.st_ino == want.st_ino ? 0 : -2;
}

static void *load_fd(int *fdp, const char *path, int *no_memory, char *why, size_t len)
{
    const int fd = *fdp;
    char name[64];
    /* Loading by path again would undo the point of the descriptor. */
    int named = mpce_fd_proc_name(fd, name);
    if (named == -1) {
        if (errno == ENOENT)
            fail(why, len, "file %s: cannot load from the checked descriptor: /proc is not "
                 "mounted: mount /proc (modules are never loaded by path)", path);
        else
            fail(why, len, "file %s: cannot load from the checked descriptor: %s: %s", path, name,
                 strerror(errno));
        return NULL;
    }
    if (named == -2) {
        fail(why, len, "file %s: cannot load from the checked descriptor: %s is not that file: "
             "mount a real procfs on /proc", path, name);
        return NULL;
    }
    int dups[LOAD_TRIES];
    size_t ndups = 0;
    int cur = fd;
    void *h = NULL;
    for (int t = 0;; t++) {
        snprintf(name, sizeof(name), "/proc/self/fd/%d", cur);
        dlerror();
        errno = 0;
        h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            /* A failed malloc in the loader leaves ENOMEM, whatever its
             * message says ("cannot open shared object file" with no cause,
             * "cannot create shared object descriptor"). */
            const int load_errno = errno;
            const char *e = dlerror();
            /* The module is opened as /proc/self/fd/N: $ORIGIN in its
             * RUNPATH names /proc/self/fd, so its own libraries must be
             * found by the system's rules. Said only where a library is
             * missing: for a broken file it would send the reader astray. */
            /* glibc words it so, translated under LC_MESSAGES, with the
             * ENOENT text after it; either names a missing library. */
            /* glibc says ENOMEM in the same words ("cannot open shared
             * object file: Cannot allocate memory"), where no library is
             * missing. */
            *no_memory = load_errno == ENOMEM ||
                         (e && (strstr(e, strerror(ENOMEM)) || strstr(e, "out of memory")));
            int missing_lib = e && !*no_memory &&
                              (strstr(e, "cannot open shared object file") ||
                               strstr(e, strerror(ENOENT)));
            fail(why, len, "file %s: dlopen failed: %s%s", path, e ? e : "unknown error",
                 missing_lib ? " (modules load from a checked descriptor, so $ORIGIN in "
                               "their RUNPATH does not reach their directory: install the "
                               "libraries they need where the dynamic linker looks)"
                             : "");
            break;
        }
        int err;
        int same = loaded_from(h, fd, &err);
        if (same == 1)
            break;
        dlclose(h);
        h = NULL;
        if (same < 0) {
            fail(why, len, "file %s: cannot compare the loaded object with the checked file: %s",
                 path, err ? strerror(err) : "dlinfo failed");
            break;
        }
        if (t + 1 >= LOAD_TRIES) {
            fail(why, len, "file %s: dlopen returned an object other than the checked file under "
                 "%d descriptor names (objects loaded earlier hold them, or the module has text "
                 "relocations): not loaded", path, LOAD_TRIES);
            break;
        }
        int nfd = fcntl(fd, F_DUPFD_CLOEXEC, cur + 1);
        if (nfd < 0) {
            fail(why, len, "file %s: dlopen returned an object other than the checked file, and "
                 "no other descriptor number is free: %s", path, strerror(errno));
            break;
        }
        dups[ndups++] = nfd;
        cur = nfd;
    }
    /* Loaded under a duplicate: that number is now the module's name, and
     * the one the caller keeps open. */
    if (h != NULL && cur != fd) {
        close(fd);
        *fdp = cur;
    }
    while (ndups)
        if (dups[--ndups] != *fdp)
            close(dups[ndups]);
    return h;
}

void *mpce_module_file_load(struct mpce_module_file *f, char *why, size_t why_len)
{
    if (f->fd < 0) {
        fail(why, why_len, "file %s has no checked descriptor (not opened, or already loaded): "
             "open it with mpce_module_file_open first", f->path);
        return NULL;
    }
    if (mpce_module_file_test_hook)
        mpce_module_file_test_hook(f->path);
    f->no_memory = 0;
    void *h = load_fd(&f->fd, f->path, &f->no_memory, why, why_len);
    /* Kept open while the module is loaded (the caller closes it after
     * dlclose): glibc knows the module by "/proc/self/fd/N", and while N is
     * ours no other module can be opened under that number and be mistaken
     * for it. */
    if (h == NULL)
        mpce_module_file_close(f);
    return h;
}

void mpce_module_file_close(struct mpce_module_file *f)
{
    if (f && f->fd >= 0) {
        close(f->fd);
        f->fd = -1;
    }
}

int mpce_file_open_trusted(const char *path, char *why, size_t why_len)
{
    if (!path || !path[0])
        return fail(why, why_len, "no configuration file path given");
    const char *slash = strrchr(path, '/');
    char dir[4096];
    const char *name = path;
    if (!slash) {
        strcpy(dir, ".");
    } else {
        size_t dl = slash == path ? 1 : (size_t)(slash - path);
        if (dl >= sizeof(dir))
            return fail(why, why_len, "path %.200s... is too long", path);
        memcpy(dir, path, dl);
        dir[dl] = '\0';
        name = slash + 1;
    }
    if (!name[0])
        return fail(why, why_len, "%s names a directory: give the path of the file itself", path);
    int fd = open_checked(dir, name, path, 1, why, why_len);
    if (fd == FILE_NOMEM)
        errno = ENOMEM;
    return fd < 0 ? -1 : fd;
}
