/* SPDX-License-Identifier: Apache-2.0 */
/* The one-descriptor module loader and the configuration-file trust check. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <openssl/sha.h>

#include "engine/runtime/module_file.h"
#include "tests/testutil.h"

#if !defined(SWAP_A_SO) || !defined(SWAP_B_SO)
#error "build with -DSWAP_A_SO=\"path/swap_a.so\" -DSWAP_B_SO=\"path/swap_b.so\""
#endif

#define PATH_LEN 4096

/* ---- helpers ------------------------------------------------------------ */

static void join(char out[PATH_LEN], const char *a, const char *b)
{
    CU_ASSERT_FATAL((size_t)snprintf(out, PATH_LEN, "%s/%s", a, b) < PATH_LEN);
}

/* A fresh 0755 directory under $TMPDIR or /tmp (sticky, so fine as an
 * ancestor); the caller removes it with rm_tree. */
static char *scratch_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *p = malloc(PATH_LEN);
    CU_ASSERT_FATAL(p != NULL);
    snprintf(p, PATH_LEN, "%s/mpce-mf-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CU_ASSERT_FATAL(mkdtemp(p) != NULL);
    CU_ASSERT_FATAL(chmod(p, 0755) == 0);
    return p;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    if (remove(path) != 0)
        fprintf(stderr, "  cannot remove %s: %s\n", path, strerror(errno));
    return 0;
}

static void rm_tree(char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(path);
}

/* mkdir then chmod: the umask must not decide the mode under test. */
static void make_dir(const char *path, mode_t mode)
{
    CU_ASSERT_FATAL(mkdir(path, 0700) == 0);
    CU_ASSERT_FATAL(chmod(path, mode) == 0);
}

static void copy_file(const char *src, const char *dst, mode_t mode)
{
    FILE *in = fopen(src, "rb");
    CU_ASSERT_FATAL(in != NULL);
    FILE *out = fopen(dst, "wb");
    CU_ASSERT_FATAL(out != NULL);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        CU_ASSERT_FATAL(fwrite(buf, 1, n, out) == n);
    fclose(in);
    CU_ASSERT_FATAL(fclose(out) == 0);
    CU_ASSERT_FATAL(chmod(dst, mode) == 0);
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    FILE *out = fopen(path, "w");
    CU_ASSERT_FATAL(out != NULL);
    fputs(text, out);
    CU_ASSERT_FATAL(fclose(out) == 0);
    CU_ASSERT_FATAL(chmod(path, mode) == 0);
}

/* Independent of the code under test: read by path, hash in one call. */
static void file_sha256(const char *path, char hex[65])
{
    FILE *in = fopen(path, "rb");
    CU_ASSERT_FATAL(in != NULL);
    CU_ASSERT_FATAL(fseek(in, 0, SEEK_END) == 0);
    long size = ftell(in);
    CU_ASSERT_FATAL(size >= 0);
    rewind(in);
    unsigned char *bytes = malloc((size_t)size + 1);
    CU_ASSERT_FATAL(bytes != NULL);
    CU_ASSERT_FATAL(fread(bytes, 1, (size_t)size, in) == (size_t)size);
    fclose(in);
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256(bytes, (size_t)size, d);
    free(bytes);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

static const char *call_which(void *handle)
{
    void *sym = dlsym(handle, "mpce_test_which");
    CU_ASSERT_FATAL(sym != NULL);
    const char *(*fn)(void);
    memcpy(&fn, &sym, sizeof(fn)); /* object pointer to function pointer (POSIX) */
    return fn();
}

static int mentions(const char *why, const char *needle)
{
    if (strstr(why, needle))
        return 1;
    fprintf(stderr, "\n  reason does not mention \"%s\": %s\n", needle, why);
    return 0;
}

/* dir/name must be refused before anything is loaded, with a reason that
 * contains both needles (b may be NULL). */
static void expect_refused(const char *dir, const char *name, const char *a, const char *b)
{
    struct mpce_module_file f;
    char why[1024] = "";
    CU_ASSERT_EQUAL(mpce_module_file_open(dir, name, &f, why, sizeof(why)), -1);
    CU_ASSERT_EQUAL(f.fd, -1);
    CU_ASSERT(strchr(why, '\n') == NULL);
    CU_ASSERT(mentions(why, a));
    if (b)
        CU_ASSERT(mentions(why, b));
    printf("\n  refused: %s", why);
    mpce_module_file_close(&f);
}

/* Open and load dir/name; the handle or NULL after a CUnit failure. The
 * descriptor stays open in *f while the module is loaded: dlclose the handle,
 * then mpce_module_file_close(f). */
static void *expect_loads(const char *dir, const char *name, struct mpce_module_file *fp)
{
    struct mpce_module_file f;
    char why[1024] = "";
    if (mpce_module_file_open(dir, name, &f, why, sizeof(why)) != 0) {
        CU_FAIL("a safe module was refused");
        fprintf(stderr, "\n  %s/%s: %s\n", dir, name, why);
        return NULL;
    }
    void *h = mpce_module_file_load(&f, why, sizeof(why));
    if (!h) {
        CU_FAIL("a checked module did not load");
        fprintf(stderr, "\n  %s/%s: %s\n", dir, name, why);
        CU_ASSERT_EQUAL(f.fd, -1); /* a failed load closes it */
    } else {
        CU_ASSERT(f.fd >= 0);
    }
    *fp = f;
    return h;
}

/* realpath of base/sub, as the messages name directories. */
static void canonical(char out[PATH_LEN], const char *base, const char *sub)
{
    char *c = realpath(base, NULL);
    CU_ASSERT_FATAL(c != NULL);
    join(out, c, sub);
    free(c);
}

/* The trust check as a yes/no: 0, or -1 with the reason in why. */
static int trusted(const char *path, char *why, size_t len)
{
    int fd = mpce_file_open_trusted(path, why, len);
    if (fd < 0)
        return -1;
    struct stat sb;
    CU_ASSERT(fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode));
    close(fd);
    return 0;
}

/* ---- tests -------------------------------------------------------------- */

static void test_good_module_loads(void)
{
    char *base = scratch_dir();
    char plug[PATH_LEN], mod[PATH_LEN], want[65], want_a[65];
    join(plug, base, "plug");
    join(mod, plug, "m.so");
    make_dir(plug, 0755);
    copy_file(SWAP_A_SO, mod, 0644);
    file_sha256(mod, want);
    file_sha256(SWAP_A_SO, want_a);

    struct mpce_module_file f;
    char why[1024] = "";
    CU_ASSERT_FATAL(mpce_module_file_open(plug, "m.so", &f, why, sizeof(why)) == 0);
    CU_ASSERT(f.fd >= 0);
    CU_ASSERT_STRING_EQUAL(f.path, mod);
    CU_ASSERT_EQUAL(strlen(f.sha256), 64);
    CU_ASSERT_EQUAL(strspn(f.sha256, "0123456789abcdef"), 64);
    CU_ASSERT_STRING_EQUAL(f.sha256, want);
    CU_ASSERT_STRING_EQUAL(f.sha256, want_a);

    int fd = f.fd;
    void *h = mpce_module_file_load(&f, why, sizeof(why));
    CU_ASSERT_FATAL(h != NULL);
    /* Still open: the module's name to the dynamic linker is /proc/self/fd/N,
     * and N must not name another file while the module is loaded. */
    CU_ASSERT_EQUAL(f.fd, fd);
    CU_ASSERT(fcntl(fd, F_GETFD) != -1);
    CU_ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    CU_ASSERT_STRING_EQUAL(call_which(h), "a");
    CU_ASSERT_STRING_EQUAL(f.sha256, want); /* kept for listings */
    dlclose(h);
    mpce_module_file_close(&f);
    CU_ASSERT_EQUAL(f.fd, -1);
    CU_ASSERT(fcntl(fd, F_GETFD) == -1 && errno == EBADF);

    /* Loading again needs a new open: the descriptor is gone. */
    CU_ASSERT_PTR_NULL(mpce_module_file_load(&f, why, sizeof(why)));
    CU_ASSERT(mentions(why, "no checked descriptor"));
    mpce_module_file_close(&f);
    mpce_module_file_close(&f);
    rm_tree(base);
}

static void test_symlink_module_refused(void)
{
    char *base = scratch_dir();
    char ww[PATH_LEN], real[PATH_LEN], plug[PATH_LEN], link[PATH_LEN];
    join(ww, base, "ww");
    join(real, ww, "real.so");
    join(plug, base, "plug");
    join(link, plug, "m.so");
    make_dir(ww, 0777);
    make_dir(plug, 0755);
    copy_file(SWAP_A_SO, real, 0644);
    CU_ASSERT_FATAL(symlink(real, link) == 0);
    expect_refused(plug, "m.so", "symbolic link", "install the file itself");
    /* A link to a safe place is refused too: the rule is "no link", so the
     * checked file is always the one in the plugin directory. */
    char safe[PATH_LEN], link2[PATH_LEN];
    join(safe, plug, "real.so");
    join(link2, plug, "n.so");
    copy_file(SWAP_A_SO, safe, 0644);
    CU_ASSERT_FATAL(symlink("real.so", link2) == 0);
    expect_refused(plug, "n.so", "symbolic link", NULL);
    rm_tree(base);
}

static void test_writable_file_refused(void)
{
    char *base = scratch_dir();
    char plug[PATH_LEN], mod[PATH_LEN], hint[PATH_LEN + 32];
    join(plug, base, "plug");
    join(mod, plug, "m.so");
    make_dir(plug, 0755);
    copy_file(SWAP_A_SO, mod, 0664);
    snprintf(hint, sizeof(hint), "run chmod g-w %s", mod);
    expect_refused(plug, "m.so", "group-writable (mode 0664)", hint);
    CU_ASSERT_FATAL(chmod(mod, 0646) == 0);
    snprintf(hint, sizeof(hint), "run chmod o-w %s", mod);
    expect_refused(plug, "m.so", "world-writable (mode 0646)", hint);
    rm_tree(base);
}

static void test_writable_plugin_dir_refused(void)
{
    char *base = scratch_dir();
    char plug[PATH_LEN], mod[PATH_LEN], canon[PATH_LEN], hint[PATH_LEN + 32];
    join(plug, base, "plug");
    join(mod, plug, "m.so");
    make_dir(plug, 0777);
    copy_file(SWAP_A_SO, mod, 0644);
    canonical(canon, base, "plug");
    snprintf(hint, sizeof(hint), "run chmod go-w %s", canon);
    expect_refused(plug, "m.so", "world-writable (mode 0777)", hint);
    CU_ASSERT_FATAL(chmod(plug, 0775) == 0);
    expect_refused(plug, "m.so", "group-writable (mode 0775)", "chmod g-w");
    rm_tree(base);
}

static void test_writable_ancestor_refused(void)
{
    char *base = scratch_dir();
    char ww[PATH_LEN], plug[PATH_LEN], mod[PATH_LEN], canon[PATH_LEN], what[PATH_LEN + 64];
    join(ww, base, "ww");
    join(plug, ww, "plug");
    join(mod, plug, "m.so");
    make_dir(ww, 0777);
    make_dir(plug, 0755);
    copy_file(SWAP_A_SO, mod, 0644);
    canonical(canon, base, "ww");
    snprintf(what, sizeof(what), "directory %s is world-writable (mode 0777)", canon);
    expect_refused(plug, "m.so", what, "run chmod go-w");
    rm_tree(base);
}

static void test_sticky_ancestor_accepted(void)
{
    char *base = scratch_dir();
    char st[PATH_LEN], plug[PATH_LEN], mod[PATH_LEN];
    join(st, base, "st");
    join(plug, st, "plug");
    join(mod, plug, "m.so");
    make_dir(st, 01777);
    make_dir(plug, 0755);
    copy_file(SWAP_A_SO, mod, 0644);
    struct mpce_module_file f;
    void *h = expect_loads(plug, "m.so", &f);
    if (h) {
        CU_ASSERT_STRING_EQUAL(call_which(h), "a");
        dlclose(h);
    }
    mpce_module_file_close(&f);
    rm_tree(base);
}

static void test_sticky_plugin_dir_refused(void)
{
    char *base = scratch_dir();
    char st[PATH_LEN], mod[PATH_LEN];
    join(st, base, "st");
    join(mod, st, "m.so");
    make_dir(st, 01777);
    copy_file(SWAP_A_SO, mod, 0644);
    expect_refused(st, "m.so", "world-writable (mode 1777", "sticky");
    rm_tree(base);
}

static void test_non_regular_refused(void)
{
    char *base = scratch_dir();
    char plug[PATH_LEN], fifo[PATH_LEN], sub[PATH_LEN];
    join(plug, base, "plug");
    join(fifo, plug, "f.so");
    join(sub, plug, "x.so");
    make_dir(plug, 0755);
    CU_ASSERT_FATAL(mkfifo(fifo, 0644) == 0);
    make_dir(sub, 0755);
    /* Returns at all: O_NONBLOCK, no writer needed. */
    expect_refused(plug, "f.so", "not a regular file", "fifo");
    expect_refused(plug, "x.so", "not a regular file", "directory");
    rm_tree(base);
}

static void test_bad_names_refused(void)
{
    char *base = scratch_dir();
    char plug[PATH_LEN], sub[PATH_LEN], mod[PATH_LEN];
    join(plug, base, "plug");
    join(sub, plug, "sub");
    join(mod, sub, "m.so");
    make_dir(plug, 0755);
    make_dir(sub, 0777); /* would be refused if it were a plugin directory */
    copy_file(SWAP_A_SO, mod, 0644);
    expect_refused(plug, "sub/m.so", "not a plain file name", NULL);
    expect_refused(sub, "../sub/m.so", "not a plain file name", NULL);
    expect_refused(plug, "..", "not a plain file name", NULL);
    expect_refused(plug, "", "not a plain file name", NULL);
    expect_refused(plug, "missing.so", "cannot open file", strerror(ENOENT));
    char nodir[PATH_LEN];
    join(nodir, base, "nodir");
    expect_refused(nodir, "m.so", "cannot open directory", NULL);
    rm_tree(base);
}

static char swap_staged[PATH_LEN];
static char swap_seen[PATH_LEN];

static void swap_hook(const char *path)
{
    snprintf(swap_seen, sizeof(swap_seen), "%s", path);
    if (rename(swap_staged, path) != 0)
        fprintf(stderr, "\n  swap hook: rename %s: %s\n", swap_staged, strerror(errno));
}

/* Replace the file between hashing and dlopen: the hashed bytes (a) must be
 * the loaded ones, although the path now holds b. */
static void test_swap_between_check_and_load(void)
{
    char *base = scratch_dir();
    char plug[PATH_LEN], mod[PATH_LEN], want_a[65], want_b[65], now[65];
    join(plug, base, "plug");
    join(mod, plug, "m.so");
    join(swap_staged, plug, "staged-b.so");
    make_dir(plug, 0755);
    copy_file(SWAP_A_SO, mod, 0644);
    copy_file(SWAP_B_SO, swap_staged, 0644);
    file_sha256(SWAP_A_SO, want_a);
    file_sha256(SWAP_B_SO, want_b);
    CU_ASSERT_FATAL(strcmp(want_a, want_b) != 0);

    struct mpce_module_file f;
    char why[1024] = "";
    CU_ASSERT_FATAL(mpce_module_file_open(plug, "m.so", &f, why, sizeof(why)) == 0);
    swap_seen[0] = '\0';
    mpce_module_file_test_hook = swap_hook;
    void *h = mpce_module_file_load(&f, why, sizeof(why));
    mpce_module_file_test_hook = NULL;
    if (!h)
        fprintf(stderr, "\n  %s\n", why);
    CU_ASSERT_FATAL(h != NULL);
    CU_ASSERT_STRING_EQUAL(swap_seen, mod);
    file_sha256(mod, now);
    CU_ASSERT_STRING_EQUAL(now, want_b); /* the swap did happen */
    CU_ASSERT_STRING_EQUAL(call_which(h), "a");
    CU_ASSERT_STRING_EQUAL(f.sha256, want_a);

    /* What loading by path would have run instead. */
    void *by_path = dlopen(mod, RTLD_NOW | RTLD_LOCAL);
    CU_ASSERT_FATAL(by_path != NULL);
    CU_ASSERT_STRING_EQUAL(call_which(by_path), "b");
    dlclose(by_path);
    dlclose(h);
    mpce_module_file_close(&f);
    rm_tree(base);
}

/* The engine keeps each descriptor open while its module is loaded, so the
 * number is not reused. Should it be (a caller closing early), the next module
 * gets the same /proc/self/fd/N name, which glibc would answer with the module
 * loaded first: the load must still run the file it checked. */
static void test_reused_descriptor_number(void)
{
    char *base = scratch_dir();
    char plug[PATH_LEN], a[PATH_LEN], b[PATH_LEN];
    join(plug, base, "plug");
    join(a, plug, "a.so");
    join(b, plug, "b.so");
    make_dir(plug, 0755);
    copy_file(SWAP_A_SO, a, 0644);
    copy_file(SWAP_B_SO, b, 0644);

    struct mpce_module_file fa, fb;
    char why[1024] = "";
    CU_ASSERT_FATAL(mpce_module_file_open(plug, "a.so", &fa, why, sizeof(why)) == 0);
    int fd_a = fa.fd;
    void *ha = mpce_module_file_load(&fa, why, sizeof(why));
    CU_ASSERT_FATAL(ha != NULL);
    mpce_module_file_close(&fa); /* early, to provoke the reuse */
    CU_ASSERT_FATAL(mpce_module_file_open(plug, "b.so", &fb, why, sizeof(why)) == 0);
    CU_ASSERT_EQUAL(fb.fd, fd_a); /* the case under test */
    void *hb = mpce_module_file_load(&fb, why, sizeof(why));
    if (!hb)
        fprintf(stderr, "\n  %s\n", why);
    CU_ASSERT_FATAL(hb != NULL);
    CU_ASSERT(hb != ha);
    /* Loaded under a duplicate number, which is what stays open now. */
    CU_ASSERT(fb.fd >= 0 && fb.fd != fd_a);
    CU_ASSERT(fcntl(fb.fd, F_GETFD) & FD_CLOEXEC);
    CU_ASSERT(fcntl(fd_a, F_GETFD) == -1 && errno == EBADF);
    CU_ASSERT_STRING_EQUAL(call_which(ha), "a");
    CU_ASSERT_STRING_EQUAL(call_which(hb), "b");

    /* The same file twice is one object, as with dlopen by path. */
    struct mpce_module_file fa2;
    void *ha2 = expect_loads(plug, "a.so", &fa2);
    CU_ASSERT(ha2 == ha);
    if (ha2)
        dlclose(ha2);
    dlclose(hb);
    dlclose(ha);
    mpce_module_file_close(&fa2);
    mpce_module_file_close(&fb);
    rm_tree(base);
}

static void test_directory_symlinks(void)
{
    char *base = scratch_dir();
    char real[PATH_LEN], mod[PATH_LEN], link[PATH_LEN];
    join(real, base, "real");
    join(mod, real, "m.so");
    join(link, base, "link");
    make_dir(real, 0755);
    copy_file(SWAP_A_SO, mod, 0644);

    /* Ours, in a safe directory: fine. */
    CU_ASSERT_FATAL(symlink(real, link) == 0);
    struct mpce_module_file f;
    void *h = expect_loads(link, "m.so", &f);
    if (h)
        dlclose(h);
    mpce_module_file_close(&f);

    /* Leading into a world-writable directory: the real chain is checked. */
    char ww[PATH_LEN], wplug[PATH_LEN], wmod[PATH_LEN], wlink[PATH_LEN];
    join(ww, base, "ww");
    join(wplug, ww, "plug");
    join(wmod, wplug, "m.so");
    join(wlink, base, "wlink");
    make_dir(ww, 0777);
    make_dir(wplug, 0755);
    copy_file(SWAP_A_SO, wmod, 0644);
    CU_ASSERT_FATAL(symlink(wplug, wlink) == 0);
    expect_refused(wlink, "m.so", "world-writable", "/ww");

    /* Sitting in a world-writable directory: anyone could repoint it. */
    char hop[PATH_LEN];
    join(hop, ww, "hop");
    CU_ASSERT_FATAL(symlink(real, hop) == 0);
    expect_refused(hop, "m.so", "world-writable", "/ww");
    rm_tree(base);
}

static void test_foreign_owner_refused(void)
{
    if (geteuid() != 0) {
        printf("\n  skipped: not root");
        return;
    }
    char *base = scratch_dir();
    char anc[PATH_LEN], plug[PATH_LEN], mod[PATH_LEN], canon[PATH_LEN];
    join(anc, base, "anc");
    join(plug, anc, "plug");
    join(mod, plug, "m.so");
    make_dir(anc, 0755);
    make_dir(plug, 0755);
    copy_file(SWAP_A_SO, mod, 0644);

    CU_ASSERT_FATAL(chown(mod, 1, (gid_t)-1) == 0);
    char what[PATH_LEN + 64];
    snprintf(what, sizeof(what), "file %s is owned by uid 1,", mod);
    expect_refused(plug, "m.so", what, "run chown root");
    CU_ASSERT_FATAL(chown(mod, 0, (gid_t)-1) == 0);

    CU_ASSERT_FATAL(chown(plug, 1, (gid_t)-1) == 0);
    canonical(canon, anc, "plug");
    snprintf(what, sizeof(what), "directory %s is owned by uid 1,", canon);
    expect_refused(plug, "m.so", what, NULL);
    CU_ASSERT_FATAL(chown(plug, 0, (gid_t)-1) == 0);

    CU_ASSERT_FATAL(chown(anc, 1, (gid_t)-1) == 0);
    canonical(canon, base, "anc");
    snprintf(what, sizeof(what), "directory %s is owned by uid 1,", canon);
    expect_refused(plug, "m.so", what, NULL);
    CU_ASSERT_FATAL(chown(anc, 0, (gid_t)-1) == 0);

    /* A link owned by someone else decides where the plugins come from. */
    char link[PATH_LEN];
    join(link, base, "link");
    CU_ASSERT_FATAL(symlink(plug, link) == 0);
    CU_ASSERT_FATAL(lchown(link, 1, (gid_t)-1) == 0);
    expect_refused(link, "m.so", "symbolic link", "chown -h root");

    char conf[PATH_LEN], why[1024] = "";
    join(conf, plug, "x.conf");
    write_text(conf, "[engine]\n", 0644);
    CU_ASSERT_FATAL(chown(conf, 1, (gid_t)-1) == 0);
    CU_ASSERT_EQUAL(trusted(conf, why, sizeof(why)), -1);
    CU_ASSERT(mentions(why, "owned by uid 1,"));
    rm_tree(base);
}

static void test_config_trust(void)
{
    char *base = scratch_dir();
    char etc[PATH_LEN], conf[PATH_LEN], ww[PATH_LEN], wconf[PATH_LEN], link[PATH_LEN];
    char why[1024] = "";
    join(etc, base, "etc");
    join(conf, etc, "mpcengine.conf");
    join(ww, base, "ww");
    join(wconf, ww, "mpcengine.conf");
    join(link, etc, "link.conf");
    make_dir(etc, 0755);
    make_dir(ww, 0777);
    write_text(conf, "[engine]\n", 0644);
    write_text(wconf, "[engine]\n", 0644);

    CU_ASSERT_EQUAL(trusted(conf, why, sizeof(why)), 0);

    CU_ASSERT_EQUAL(trusted(wconf, why, sizeof(why)), -1);
    CU_ASSERT(mentions(why, "world-writable"));
    CU_ASSERT(mentions(why, "run chmod go-w"));
    printf("\n  refused: %s", why);

    CU_ASSERT_FATAL(symlink(conf, link) == 0);
    CU_ASSERT_EQUAL(trusted(link, why, sizeof(why)), -1);
    CU_ASSERT(mentions(why, "symbolic link"));
    printf("\n  refused: %s", why);

    /* A file named by itself may sit in a sticky directory such as /tmp:
     * others can add files there but not replace this one. */
    char sticky[PATH_LEN], sconf[PATH_LEN];
    join(sticky, base, "sticky");
    join(sconf, sticky, "mpcengine.conf");
    make_dir(sticky, 01777);
    write_text(sconf, "[engine]\n", 0644);
    CU_ASSERT_EQUAL(trusted(sconf, why, sizeof(why)), 0);

    CU_ASSERT_FATAL(chmod(conf, 0660) == 0);
    CU_ASSERT_EQUAL(trusted(conf, why, sizeof(why)), -1);
    CU_ASSERT(mentions(why, "group-writable"));
    CU_ASSERT_FATAL(chmod(conf, 0644) == 0);

    char missing[PATH_LEN];
    join(missing, etc, "missing.conf");
    CU_ASSERT_EQUAL(trusted(missing, why, sizeof(why)), -1);
    CU_ASSERT(mentions(why, "cannot open file"));
    CU_ASSERT_EQUAL(trusted(etc, why, sizeof(why)), -1);
    CU_ASSERT(mentions(why, "not a regular file"));

    /* A relative path is checked from the real working directory. */
    char cwd[PATH_LEN];
    CU_ASSERT_FATAL(getcwd(cwd, sizeof(cwd)) != NULL);
    CU_ASSERT_FATAL(chdir(etc) == 0);
    CU_ASSERT_EQUAL(trusted("mpcengine.conf", why, sizeof(why)), 0);
    CU_ASSERT_FATAL(chdir(ww) == 0);
    CU_ASSERT_EQUAL(trusted("mpcengine.conf", why, sizeof(why)), -1);
    CU_ASSERT(mentions(why, "world-writable"));
    CU_ASSERT_FATAL(chdir(cwd) == 0);
    rm_tree(base);
}

/* Child of test_proc_missing: 0 pass, 1 fail, 77 cannot hide /proc here. */
static int proc_missing_child(const char *plug)
{
    struct mpce_module_file f;
    char why[1024] = "";
    if (mpce_module_file_open(plug, "m.so", &f, why, sizeof(why)) != 0) {
        printf("\n  child: open refused: %s", why);
        return 1;
    }
    /* The type is ignored for a propagation change; "none" rather than
     * NULL, which valgrind reads as a string and reports. */
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("none", "/proc", "tmpfs", 0, NULL) != 0) {
        printf("\n  skipped: cannot hide /proc here (%s)", strerror(errno));
        return 77;
    }
    void *h = mpce_module_file_load(&f, why, sizeof(why));
    if (h || !strstr(why, "cannot load from the checked descriptor: /proc is not mounted")) {
        printf("\n  child: %s", h ? "loaded without /proc" : why);
        return 1;
    }
    printf("\n  refused: %s", why);
    return f.fd == -1 ? 0 : 1;
}

static void test_proc_missing(void)
{
    char *base = scratch_dir();
    char plug[PATH_LEN], mod[PATH_LEN];
    join(plug, base, "plug");
    join(mod, plug, "m.so");
    make_dir(plug, 0755);
    copy_file(SWAP_A_SO, mod, 0644);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        int rc = proc_missing_child(plug);
        free(base); /* the parent removes the tree */
        fflush(NULL);
        _exit(rc);
    }
    int status = 0;
    CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
    CU_ASSERT(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 77));
    rm_tree(base);
}

/* The setgid helper (below): run as nobody with the setgid bit honoured, a
 * module nobody owns is refused and root's is loaded. 0, 77 (skip) or 1. */
static int setgid_child(const char *plug)
{
    if (!getauxval(AT_SECURE)) {
        printf("\n  skipped: the setgid bit is not honoured here (no_new_privs or nosuid)");
        return 77;
    }

    struct mpce_module_file f;
    char why[1024] = "";
    if (mpce_module_file_open(plug, "mine.so", &f, why, sizeof(why)) == 0 ||
        !strstr(why, "trusts only root's files")) {
        printf("\n  setgid child: a module the user owns was %s", why[0] ? why : "accepted");
        mpce_module_file_close(&f);
        return 1;
    }
    printf("\n  refused: %s", why);
    if (mpce_module_file_open(plug, "roots.so", &f, why, sizeof(why)) != 0) {
        printf("\n  setgid child: root's module was refused: %s", why);
        return 1;
    }
    mpce_module_file_close(&f);
    return 0;
}

static const char *setgid_plug;
static const char *setgid_helper;

static int exec_setgid_helper(void *arg)
{
    (void)arg;
    execl(setgid_helper, setgid_helper, "--setgid-child", setgid_plug, (char *)NULL);
    printf("\n  cannot run %s: %s", setgid_helper, strerror(errno));
    return 1;
}

/* A setgid program runs with its user's uid, so "owned by the running user"
 * would let that user feed it a module: only root's files are trusted. The
 * test binary itself, copied setgid, runs as nobody (root only). */
static void test_setgid_trusts_root_only(void)
{
    if (geteuid() != 0) {
        printf("\n  skipped: needs root to make a setgid copy of this test");
        return;
    }
    char *base = scratch_dir();
    char plug[PATH_LEN], mine[PATH_LEN], roots[PATH_LEN], helper[PATH_LEN];
    join(plug, base, "plug");
    join(mine, plug, "mine.so");
    join(roots, plug, "roots.so");
    join(helper, base, "sgid-helper");
    make_dir(plug, 0755);
    copy_file(SWAP_A_SO, mine, 0644);
    copy_file(SWAP_A_SO, roots, 0644);
    CU_ASSERT_FATAL(chown(mine, 65534, 65534) == 0);
    copy_file("/proc/self/exe", helper, 0755);
    CU_ASSERT_FATAL(chown(helper, 0, 0) == 0 && chmod(helper, 02755) == 0);
    setgid_plug = plug;
    setgid_helper = helper;
    int rc = tu_unprivileged(exec_setgid_helper, NULL);
    if (rc == 77)
        printf("\n  skipped: the setgid bit is not honoured here");
    else
        CU_ASSERT_EQUAL(rc, 0);
    rm_tree(base);
}

static const struct tu_test tests[] = {
    {"good module loads, hash matches", test_good_module_loads},
    {"symlinked module refused", test_symlink_module_refused},
    {"group/world-writable file refused", test_writable_file_refused},
    {"writable plugin directory refused", test_writable_plugin_dir_refused},
    {"world-writable ancestor refused", test_writable_ancestor_refused},
    {"sticky ancestor accepted", test_sticky_ancestor_accepted},
    {"sticky plugin directory refused", test_sticky_plugin_dir_refused},
    {"fifo and directory refused", test_non_regular_refused},
    {"names with directories refused", test_bad_names_refused},
    {"swap between check and load", test_swap_between_check_and_load},
    {"reused descriptor number", test_reused_descriptor_number},
    {"directory symlinks", test_directory_symlinks},
    {"foreign owner refused (root)", test_foreign_owner_refused},
    {"configuration file trust", test_config_trust},
    {"a setgid program trusts only root's files", test_setgid_trusts_root_only},
    {"no /proc: refused, no path fallback", test_proc_missing},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--setgid-child") == 0) {
        /* _exit: LeakSanitizer (sanitizer builds) cannot inspect a setgid
         * process at exit and would fail it; the leak checks run elsewhere. */
        int rc = setgid_child(argv[2]);
        fflush(stdout);
        _exit(rc);
    }
    return tu_main("module_file", tests);
}
