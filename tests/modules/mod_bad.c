/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Modules that misbehave, for the isolation tests (tests/test_isolation.c):
 * one PRG implementation (OpenSSL EVP AES, correct) in plugin "bad", built
 * once per case with -DBAD_WHERE_<W> -DBAD_HOW_<H> (tests/modules/local.am).
 *
 *   WHERE  CTOR      a constructor, run by dlopen itself
 *          DTOR      a destructor, run by dlclose (also for a disabled plugin)
 *          ENTRY     mpce_plugin_entry_v2
 *          PROBE     the plugin's probe
 *          INIT      the plugin's init
 *          IMPLPROBE the implementation's probe
 *          SELFTEST  prg ecb, which the known-answer test calls
 *          ENVREFUSE prg ecb, but the implementation's probe refuses it while
 *                    MPCE_TEST_REFUSE or MPCENGINE_TEST_REFUSE is set: an
 *                    implementation a vet never saw (another environment)
 *          PROBEDTOR the plugin's probe and a destructor both (the helper
 *                    dies in the probe, so the destructor is never vetted)
 *          NOINIT    SELFTEST, in a plugin that has no init
 *          NONE      nowhere: plugin "okay", a module that behaves
 *   HOW    SEGV      a store into read-only memory (a real fault, not raise())
 *          ABORT     abort()
 *          HANG      sleeps forever
 *          EXIT      exit(3)
 *          LEAKFD    opens /dev/null twice and keeps both (in init: fini
 *                    leaves them open)
 *          OPENONCE  opens /dev/null on the first call only and keeps it
 *                    (a runtime opening its driver lazily)
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tests/modules/evp_prg.h"

#if defined(BAD_WHERE_PROBEDTOR)
#define BAD_WHERE_PROBE 1
#define BAD_WHERE_DTOR 1
#endif
#if defined(BAD_WHERE_NOINIT) /* SELFTEST, in a plugin without init */
#define BAD_WHERE_SELFTEST 1
#endif

#if defined(BAD_WHERE_NONE)
#define PLUGIN_NAME "okay"
#define IMPL_NAME "prg-okay"
#else
#define PLUGIN_NAME "bad"
#define IMPL_NAME "prg-bad"
#endif

static const char read_only[8] = "const";

__attribute__((unused)) static void misbehave(void)
{
#if defined(BAD_HOW_SEGV)
    /* volatile: the store happens, and faults (.rodata is mapped read-only). */
    *(volatile char *)(uintptr_t)read_only = 'x';
#elif defined(BAD_HOW_ABORT)
    abort();
#elif defined(BAD_HOW_HANG)
    for (;;) {
        struct timespec s = {3600, 0};
        nanosleep(&s, NULL);
    }
#elif defined(BAD_HOW_EXIT)
    exit(3);
#elif defined(BAD_HOW_LEAKFD)
    for (int i = 0; i < 2; i++)
        if (open("/dev/null", O_RDONLY) < 0)
            abort();
#elif defined(BAD_HOW_OPENONCE)
    static int opened;
    if (!opened && open("/dev/null", O_RDONLY) < 0)
        abort();
    opened = 1;
#endif
    (void)read_only;
}

#if defined(BAD_WHERE_CTOR)
__attribute__((constructor)) static void on_load(void)
{
    misbehave();
}
#elif defined(BAD_WHERE_DTOR)
__attribute__((destructor)) static void on_unload(void)
{
    misbehave();
}
#elif defined(BAD_WHERE_HOSTSYM)
extern int mpce_test_host_only_symbol;
__attribute__((constructor)) static void on_load(void)
{
    if (mpce_test_host_only_symbol)
        misbehave();
}
#endif

static int bad_ecb(void *state, const struct mpce_call *call, size_t key_index,
                   const uint8_t *in, uint8_t *out, size_t n)
{
#if defined(BAD_WHERE_SELFTEST) || defined(BAD_WHERE_ENVREFUSE)
    misbehave();
#endif
    return evp_prg_ecb(state, call, key_index, in, out, n);
}

static const struct mpce_prg_ops bad_prg_ops = {
    .struct_size = sizeof(struct mpce_prg_ops),
    .ctx_new = evp_prg_ctx_new,
    .ctx_free = evp_prg_ctx_free,
    .ecb = bad_ecb,
    .mmo = evp_prg_mmo,
    .ctr = evp_prg_ctr,
};

static int bad_probe(const struct mpce_host *host, char *why, size_t len)
{
    (void)host;
    (void)why;
    (void)len;
#if defined(BAD_WHERE_PROBE)
    misbehave();
#endif
    return 0;
}

#if !defined(BAD_WHERE_NOINIT)
static int bad_init(const struct mpce_host *host, void **state, char *why, size_t len)
{
    (void)host;
    (void)why;
    (void)len;
    *state = NULL;
#if defined(BAD_WHERE_INIT)
    misbehave();
#endif
    return 0;
}
#endif

static int bad_impl_probe(void *module_state, char *why, size_t len)
{
    (void)module_state;
#if defined(BAD_WHERE_IMPLPROBE)
    misbehave();
#elif defined(BAD_WHERE_ENVREFUSE)
    if (getenv("MPCE_TEST_REFUSE") || getenv("MPCENGINE_TEST_REFUSE")) {
        snprintf(why, len, "refused while MPCE_TEST_REFUSE or MPCENGINE_TEST_REFUSE is set");
        return 1;
    }
#endif
    (void)why;
    (void)len;
    return 0;
}

static const struct mpce_impl impl = {
    .struct_size = sizeof(struct mpce_impl),
    .primitive = MPCE_PRIM_PRG,
    .name = IMPL_NAME,
    .impl_class = MPCE_CLASS_PORTABLE,
    .priority = 1,
    .flags = MPCE_IMPL_CONSTANT_TIME,
    .memory = MPCE_MEM_HOST,
    .ops = &bad_prg_ops,
    .probe = bad_impl_probe,
};
static const struct mpce_impl *const impls[] = {&impl};

static const struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = PLUGIN_NAME,
    .version = "1",
    .probe = bad_probe,
#if !defined(BAD_WHERE_NOINIT)
    .init = bad_init,
#endif
    .n_impls = 1,
    .impls = impls,
};

MPCE_API const struct mpce_plugin *mpce_plugin_entry_v2(void);
const struct mpce_plugin *mpce_plugin_entry_v2(void)
{
#if defined(BAD_WHERE_ENTRY)
    misbehave();
#endif
    return &plugin;
}
