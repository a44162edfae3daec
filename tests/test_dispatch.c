/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Dispatch: "auto" is resolved per operation and size class from pins and
 * priorities; an accelerator wins only large calls until measured
 * otherwise; a resolve never names an implementation that does not serve
 * the context; a newly published table takes effect on live contexts; and a
 * context resolves each route and each named implementation once.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/runtime/context.h"
#include "engine/selector/pins.h"
#include "engine/selector/selector.h"
#include "tests/testutil.h"

#ifndef EMUDEV_SO
#error "EMUDEV_SO must name the built emulated-device module"
#endif
#ifndef XOVER_SO
#error "XOVER_SO must name the built crossover fixture (tests/modules/mod_xover.c)"
#endif

static const unsigned private_flags =
    MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG;

/* An engine over the test build's plugins plus the emulated device. */
static mpce_engine *engine_with_device(char **dir)
{
    *dir = tu_temp_dir();
    free(tu_copy_into(EMUDEV_SO, *dir, 0755));
    char path[8192];
    snprintf(path, sizeof(path), "%s%s%s", *dir, TEST_PLUGIN_PATH[0] ? ":" : "",
             TEST_PLUGIN_PATH);
    mpce_options opts = {.struct_size = sizeof(opts), .plugin_path = path,
                         .flags = private_flags};
    mpce_engine *e = NULL;
    if (mpce_engine_new(&opts, &e) != MPCE_OK) {
        fprintf(stderr, "test_dispatch: %s\n", mpce_last_error());
        abort();
    }
    return e;
}

static void test_size_classes(void)
{
    CU_ASSERT_EQUAL(mpce_size_class(0), 0);
    CU_ASSERT_EQUAL(mpce_size_class(63), 0);
    CU_ASSERT_EQUAL(mpce_size_class(64), 1);
    CU_ASSERT_EQUAL(mpce_size_class(4095), 1);
    CU_ASSERT_EQUAL(mpce_size_class(4096), 2);
    CU_ASSERT_EQUAL(mpce_size_class(262143), 2);
    CU_ASSERT_EQUAL(mpce_size_class(262144), 3);
    CU_ASSERT_EQUAL(mpce_size_class(UINT64_MAX), 3);
    CU_ASSERT_STRING_EQUAL(mpce_size_class_name(0), "tiny");
    CU_ASSERT_STRING_EQUAL(mpce_size_class_name(3), "large");
    CU_ASSERT_PTR_NULL(mpce_size_class_name(4));
}

/* The accelerator (priority 450, above every host implementation) takes the
 * large class only: a one-polynomial NTT stays on the host. */
static void test_accelerator_only_for_large(void)
{
    char *dir;
    mpce_engine *e = engine_with_device(&dir);
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "ntt.forward", "large"), "ntt-emudev");
    CU_ASSERT_STRING_NOT_EQUAL(tu_auto(e, "ntt.forward", "tiny"), "ntt-emudev");
    CU_ASSERT_STRING_NOT_EQUAL(tu_auto(e, "ntt.forward", "small"), "ntt-emudev");
    CU_ASSERT_STRING_NOT_EQUAL(tu_auto(e, "ntt.mul", "medium"), "ntt-emudev");
    const mpce_route_info *rows;
    size_t n;
    CU_ASSERT_FATAL(mpce_routes(e, &rows, &n) == MPCE_OK);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].op, "ntt.inverse") != 0)
            continue;
        /* Still a candidate everywhere, last where it does not lead. */
        CU_ASSERT_PTR_NOT_NULL(strstr(rows[i].order, "ntt-emudev"));
        if (strcmp(rows[i].size_class, "large") != 0) {
            size_t len = strlen(rows[i].order);
            CU_ASSERT(len >= 10 && strcmp(rows[i].order + len - 10, "ntt-emudev") == 0);
        } else {
            /* Every usable candidate, not just up to the first that passed. */
            CU_ASSERT_EQUAL(strncmp(rows[i].order, "ntt-emudev ", 11), 0);
            CU_ASSERT_PTR_NOT_NULL(strstr(rows[i].order, "ntt-soft"));
        }
        CU_ASSERT_STRING_EQUAL(rows[i].source, "priority");
    }
    /* Unchanged engine, same snapshot: asking again keeps nothing more. */
    const mpce_route_info *again;
    size_t n_again;
    CU_ASSERT_FATAL(mpce_routes(e, &again, &n_again) == MPCE_OK);
    CU_ASSERT_PTR_EQUAL(again, rows);
    CU_ASSERT_EQUAL(n_again, n);
    static const uint64_t q = UINT64_C(0x1fffffffffe00001);
    mpce_ntt *ctx;
    const char *name;
    CU_ASSERT_FATAL(mpce_ntt_new(e, 1024, &q, 1, &ctx) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_ntt_resolve(ctx, NULL, "ntt.forward", 1, &name), MPCE_OK);
    CU_ASSERT_STRING_NOT_EQUAL(name, "ntt-emudev");
    CU_ASSERT_EQUAL(mpce_ntt_resolve(ctx, NULL, "ntt.forward", 256, &name), MPCE_OK);
    CU_ASSERT_STRING_EQUAL(name, "ntt-emudev"); /* 256 * 1024 words: large */
    mpce_ntt_free(ctx);
    mpce_engine_free(e);
    tu_remove_dir(dir);
}

/* IFMA serves moduli below 2^50 only: asked before any state is built, it
 * refuses a 61-bit modulus, and resolve names the next implementation. */
static void test_resolve_respects_serves(void)
{
    mpce_engine *e = tu_engine(0);
    if (tu_impl_flags(e, "ntt-aesni-ifma") == 0 || tu_impl_flags(e, "ntt-aesni-avx512") == 0) {
        printf("\n  skipped: ntt-aesni-ifma or ntt-aesni-avx512 is not loaded here\n");
        return;
    }
    const mpce_impl_info *rows;
    size_t n;
    CU_ASSERT_FATAL(mpce_list(e, 1, &rows, &n) == MPCE_OK);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].impl, "ntt-aesni-ifma") == 0 && strcmp(rows[i].selftest, "pass")) {
            printf("\n  skipped: ntt-aesni-ifma cannot run here\n");
            return;
        }
    static const uint64_t q61 = UINT64_C(0x1fffffffffe00001);
    static const uint64_t q50 = UINT64_C(0x3ffffffd20001);
    mpce_ntt *big, *small;
    const char *name;
    CU_ASSERT_FATAL(mpce_ntt_new(e, 4096, &q61, 1, &big) == MPCE_OK);
    CU_ASSERT_FATAL(mpce_ntt_new(e, 4096, &q50, 1, &small) == MPCE_OK);
    CU_ASSERT_STRING_EQUAL(tu_auto(e, "ntt.forward", NULL), "ntt-aesni-ifma");
    /* IFMA declining on the way does not show through a call that worked. */
    CU_ASSERT_EQUAL(mpce_ntt_new(e, 3, &q61, 1, &(mpce_ntt *){NULL}), MPCE_ERR_ARG);
    char before[1024];
    snprintf(before, sizeof(before), "%s", mpce_last_error());
    CU_ASSERT_EQUAL(mpce_ntt_resolve(big, NULL, "ntt.forward", 4, &name), MPCE_OK);
    CU_ASSERT_STRING_EQUAL(name, "ntt-aesni-avx512");
    CU_ASSERT_STRING_EQUAL(mpce_last_error(), before);
    CU_ASSERT_EQUAL(mpce_ntt_resolve(small, NULL, "ntt.forward", 4, &name), MPCE_OK);
    CU_ASSERT_STRING_EQUAL(name, "ntt-aesni-ifma");
    /* Named, it refuses with its own reason rather than running. */
    TU_ASSERT_ERROR(mpce_ntt_resolve(big, "ntt-aesni-ifma", "ntt.forward", 4, &name),
                    MPCE_ERR_NOIMPL, "needs q < 2^50");
    /* serves() answered: no state was ever made for the refusing one. */
    const struct mpce_slot *ifma = mpce_registry_find(e, "ntt-aesni-ifma");
    CU_ASSERT_PTR_NULL(((struct mpce_ctx *)big)->states[ifma->index]);
    CU_ASSERT_PTR_NOT_NULL(((struct mpce_ctx *)small)->states[ifma->index]);
    mpce_ntt_free(big);
    mpce_ntt_free(small);
}

/* A new table (as the selector will publish) reaches live contexts. */
static void test_republish(void)
{
    char *conf = tu_write_temp("[engine]\nallow_variable_time = yes\n");
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = conf,
                         .flags = private_flags | MPCE_OPT_NO_PLUGINS};
    mpce_engine *e;
    CU_ASSERT_FATAL(mpce_engine_new(&opts, &e) == MPCE_OK);
    static const uint8_t key[16];
    uint8_t out[16];
    mpce_prg *ctx;
    const char *name;
    CU_ASSERT_FATAL(mpce_prg_new(e, key, 1, &ctx) == MPCE_OK);
    CU_ASSERT_EQUAL(mpce_prg_ctr(ctx, NULL, 0, 0, out, 1), MPCE_OK);
    CU_ASSERT_EQUAL(mpce_prg_resolve(ctx, NULL, "prg.ctr", 1, &name), MPCE_OK);
    CU_ASSERT_STRING_EQUAL(name, "prg-soft-bitslice");
    const struct mpce_table *first = e->table;
    /* What the selector will do: new pins, a new table, published whole. */
    struct mpce_pin *pins = realloc(e->cfg.pins, (e->cfg.n_pins + 1) * sizeof(*pins));
    CU_ASSERT_FATAL(pins != NULL);
    e->cfg.pins = pins;
    pins[e->cfg.n_pins++] = (struct mpce_pin){strdup("prg.ctr.tiny"), strdup("prg-soft-ttable"),
                                              strdup("test pin")};
    CU_ASSERT_FATAL(mpce_dispatch_build(e) == MPCE_OK);
    CU_ASSERT_PTR_NOT_EQUAL(e->table, first);
    const struct mpce_route_set *old_set = ((struct mpce_ctx *)ctx)->routes;
    CU_ASSERT_EQUAL(mpce_prg_resolve(ctx, NULL, "prg.ctr", 1, &name), MPCE_OK);
    CU_ASSERT_STRING_EQUAL(name, "prg-soft-ttable");
    CU_ASSERT_EQUAL(mpce_prg_resolve(ctx, NULL, "prg.ctr", 100, &name), MPCE_OK);
    CU_ASSERT_STRING_EQUAL(name, "prg-soft-bitslice");
    /* A fresh route set; the old one is kept for callers still reading it. */
    CU_ASSERT_PTR_NOT_EQUAL(((struct mpce_ctx *)ctx)->routes, old_set);
    CU_ASSERT_PTR_EQUAL(((struct mpce_ctx *)ctx)->routes->older, old_set);
    uint8_t again[16];
    CU_ASSERT_EQUAL(mpce_prg_ctr(ctx, NULL, 0, 0, again, 1), MPCE_OK);
    CU_ASSERT(memcmp(out, again, 16) == 0);
    mpce_prg_free(ctx);
    mpce_engine_free(e);
    unlink(conf);
    free(conf);
}

/* Once a context has its state, a call takes the published route: the
 * route and the named lookup are made once, then reused. */
static void test_routes_resolved_once(void)
{
    mpce_engine *e = tu_engine(0);
    static const uint8_t key[16];
    uint8_t in[16] = {0}, out[16];
    mpce_prg *ctx;
    CU_ASSERT_FATAL(mpce_prg_new(e, key, 1, &ctx) == MPCE_OK);
    struct mpce_ctx *base = (struct mpce_ctx *)ctx;
    /* Tiny class, below any crossover: the class's first route. */
    const size_t at =
        ((MPCE_OP_prg_ecb - base->op0) * MPCE_SIZE_CLASSES + 0) * MPCE_ROUTE_HALVES;
    CU_ASSERT_PTR_NULL(base->routes->r[at].slot);
    CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, NULL, 0, in, out, 1), MPCE_OK);
    const struct mpce_route *r = &base->routes->r[at];
    const struct mpce_slot *slot = r->slot;
    CU_ASSERT_PTR_NOT_NULL_FATAL(slot);
    void *state = r->state;
    for (int i = 0; i < 100; i++)
        CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, "auto", 0, in, out, 1), MPCE_OK);
    CU_ASSERT_PTR_EQUAL(r, &base->routes->r[at]); /* the same set: no re-resolve */
    CU_ASSERT_PTR_EQUAL(r->slot, slot);
    CU_ASSERT_PTR_EQUAL(r->state, state);
    CU_ASSERT_EQUAL(base->n_named, 0);
    for (int i = 0; i < 100; i++)
        CU_ASSERT_EQUAL(mpce_prg_ecb(ctx, "prg-soft-bitslice", 0, in, out, 1), MPCE_OK);
    CU_ASSERT_EQUAL(base->n_named, 1);
    CU_ASSERT_STRING_EQUAL(base->named[0].name, "prg-soft-bitslice");
    /* Eight more names (or classes) than the cache holds still work. */
    for (size_t n = 1; n <= 300000; n *= 8) {
        uint8_t *buf = calloc(n, 16);
        CU_ASSERT_FATAL(buf != NULL);
        CU_ASSERT_EQUAL(mpce_prg_ctr(ctx, "prg-soft-bitslice", 0, 0, buf, n), MPCE_OK);
        CU_ASSERT_EQUAL(mpce_prg_mmo(ctx, "prg-soft-bitslice", buf, buf, 0), MPCE_OK);
        free(buf);
    }
    CU_ASSERT(base->n_named <= MPCE_CTX_NAMED);
    mpce_prg_free(ctx);
}

/* ---- a format 3 row's crossover, from a written file (no timing) ---------- */

struct xo {
    char *dir;
    char conf[4200], pins[4200], path[8400];
    const char *hosts[16]; /* prg.ecb.large's host candidates, priority order */
    size_t n_hosts;
};

static void xo_log(void *arg, mpce_log_level level, const char *plugin, const char *msg)
{
    (void)arg;
    (void)plugin;
    if (level <= MPCE_LOG_WARNING || getenv("XO_DEBUG"))
        fprintf(stderr, "  engine: %s\n", msg);
}

/* tune: 0 for MPCE_OPT_NO_TUNE (no pins read), 1 for [tune] mode = auto
 * (the pins followed; they are current, so no tune starts). */
static mpce_engine *xo_engine(const struct xo *x, int tune)
{
    mpce_options opts = {.struct_size = sizeof(opts), .config_path = x->conf,
                         .plugin_path = x->path, .log = xo_log, .log_level = MPCE_LOG_DEBUG,
                         .flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV |
                                  (tune ? 0u : (unsigned)MPCE_OPT_NO_TUNE)};
    mpce_engine *e = NULL;
    if (mpce_engine_new(&opts, &e) != MPCE_OK) {
        fprintf(stderr, "test_dispatch: %s\n", mpce_last_error());
        abort();
    }
    return e;
}

static const char *xo_order(mpce_engine *e, const char **source)
{
    const mpce_route_info *rows;
    size_t n;
    CU_ASSERT_FATAL(mpce_routes(e, &rows, &n) == MPCE_OK);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].op, "prg.ecb") == 0 && strcmp(rows[i].size_class, "large") == 0) {
            if (source)
                *source = rows[i].source;
            return rows[i].order;
        }
    return "";
}

static const char *xo_resolve(mpce_engine *e, size_t blocks)
{
    static const uint8_t key[16] = {1};
    mpce_prg *ctx;
    const char *name = "(none)";
    CU_ASSERT_FATAL(mpce_prg_new(e, key, 1, &ctx) == MPCE_OK);
    if (mpce_prg_resolve(ctx, NULL, "prg.ecb", blocks, &name) != MPCE_OK)
        name = "(error)";
    mpce_prg_free(ctx);
    return name;
}

/* The pins file of this engine's modules with one prg.ecb.large row: the
 * first host wins, the device is the runner-up, the other hosts follow
 * (so the device stands in the middle of the measured order), plus an ok
 * candidate that is not loaded here ("prg-gone"). */
static void xo_write(mpce_engine *e, const struct xo *x, const char *winner,
                     const char *runner_up, uint64_t crossover, const char *ximpl,
                     int blacklist_xover)
{
    struct mpce_pins p;
    memset(&p, 0, sizeof(p));
    char cpu[512], devices[32][512];
    mpce_signature_cpu(cpu, sizeof(cpu));
    CU_ASSERT_FATAL(mpce_pins_set_header(&p, mpce_version(), "2026-12-02T00:00:00Z", "quick",
                                         cpu) == 0);
    CU_ASSERT_FATAL(mpce_pins_set_policy(&p, mpce_selector_policy(e)) == 0);
    char *plugins[32];
    size_t n_plugins = 0;
    for (size_t i = 0; i < e->n_modules && n_plugins < 32; i++) {
        const struct mpce_module *m = e->modules[i];
        if (m->skipped || !m->name)
            continue;
        struct mpce_pins_module rec;
        mpce_selector_module_record(e, m, &rec, devices[n_plugins], sizeof(devices[0]));
        CU_ASSERT_FATAL(mpce_pins_add_module(&p, &rec) == 0);
        if (blacklist_xover && strcmp(m->name, "xover") == 0) {
            struct mpce_pins_blacklist b = {.path = m->path, .size = m->size,
                                            .mtime = m->mtime, .reason = "a test's"};
            CU_ASSERT_FATAL(mpce_pins_add_blacklist(&p, &b) == 0);
        }
        plugins[n_plugins++] = m->name;
    }
    struct mpce_pins_cand cands[20];
    size_t nc = 0;
    cands[nc++] = (struct mpce_pins_cand){.impl = (char *)x->hosts[0], .status = "ok",
                                          .median = 1e-3, .why = ""};
    cands[nc++] = (struct mpce_pins_cand){.impl = "prg-xover-dev", .status = "ok",
                                          .median = 2e-3, .why = ""};
    for (size_t i = 1; i < x->n_hosts; i++)
        cands[nc++] = (struct mpce_pins_cand){.impl = (char *)x->hosts[i], .status = "ok",
                                              .median = 2e-3 + 1e-3 * (double)i, .why = ""};
    cands[nc++] = (struct mpce_pins_cand){.impl = "prg-gone", .status = "ok", .median = 9e-3,
                                          .why = ""};
    struct mpce_pins_row row = {.key = "prg.ecb.large", .shape = "n=262144",
                                .winner = (char *)winner, .runner_up = (char *)runner_up,
                                .verdict = "written by test_dispatch",
                                .plugins = plugins, .n_plugins = n_plugins,
                                .cands = cands, .n_cands = nc,
                                .crossover = crossover,
                                .crossover_impl = (char *)(ximpl ? ximpl : ""),
                                .crossover_verdict = crossover ? "written by test_dispatch"
                                                               : ""};
    CU_ASSERT_FATAL(mpce_pins_put_row(&p, &row) == 0);
    char why[1024];
    if (mpce_pins_write(x->pins, &p, why, sizeof(why)) != 0)
        fprintf(stderr, "test_dispatch: %s\n", why);
    mpce_pins_free(&p);
    /* The file as written: format 3, sealed, read back whole. */
    CU_ASSERT_FATAL(mpce_pins_read(x->pins, &p, why, sizeof(why)) == MPCE_PINS_READ_OK);
    CU_ASSERT(p.format == 3);
    CU_ASSERT(mpce_pins_find_row(&p, "prg.ecb.large")->crossover == crossover);
    mpce_pins_free(&p);
}

static void test_crossover_from_a_written_row(void)
{
    struct xo x = {.dir = tu_temp_dir()};
    free(tu_copy_into(XOVER_SO, x.dir, 0755));
    snprintf(x.path, sizeof(x.path), "%s%s%s", x.dir, TEST_PLUGIN_PATH[0] ? ":" : "",
             TEST_PLUGIN_PATH);
    snprintf(x.conf, sizeof(x.conf), "%s/engine.conf", x.dir);
    snprintf(x.pins, sizeof(x.pins), "%s/pins/%s", x.dir, MPCE_PINS_FILE);
    char text[5000];
    snprintf(text, sizeof(text), "[engine]\nuser_config = no\n[tune]\nmode = auto\ndir = %s/pins\n",
             x.dir);
    tu_write_text(x.conf, text, 0644);
    /* Without pins: the host candidates of the large class, in priority
     * order (the device leads it by the rule of thumb). */
    mpce_engine *e0 = xo_engine(&x, 0);
    static char order[4096];
    snprintf(order, sizeof(order), "%s", xo_order(e0, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(order, "prg-xover-dev"));
    for (char *tok = strtok(order, " "); tok && x.n_hosts < 16; tok = strtok(NULL, " "))
        if (strcmp(tok, "prg-xover-dev") != 0)
            x.hosts[x.n_hosts++] = tok;
    CU_ASSERT_FATAL(x.n_hosts >= 2);
    const char *best = x.hosts[0];
    const uint64_t cross = 524288;

    /* The crossover: from exactly it the device, one below it the best host,
     * and below it the device after every host. */
    xo_write(e0, &x, best, "prg-xover-dev", cross, "prg-xover-dev", 0);
    mpce_engine *e = xo_engine(&x, 1);
    const char *source = NULL;
    const char *o = xo_order(e, &source);
    if (!source || strncmp(source, "measured: prg.ecb.large", 23) != 0)
        printf("\n  not followed: %s (order %s)\n", source ? source : "(none)", o);
    CU_ASSERT(source && strncmp(source, "measured: prg.ecb.large", 23) == 0);
    CU_ASSERT(source && strstr(source, "prg-xover-dev first from 524288") != NULL);
    CU_ASSERT_STRING_EQUAL(xo_resolve(e, cross), "prg-xover-dev");
    CU_ASSERT_STRING_EQUAL(xo_resolve(e, 1u << 20), "prg-xover-dev");
    CU_ASSERT_STRING_EQUAL(xo_resolve(e, cross - 1), best);
    CU_ASSERT_STRING_EQUAL(xo_resolve(e, 262144), best);
    size_t len = strlen(o);
    CU_ASSERT(len > 13 && strcmp(o + len - 13, "prg-xover-dev") == 0);
    mpce_engine_free(e);

    /* A crossover_impl that is not loaded: ignored, and the device (which
     * has no crossover that applies) goes after every host. */
    xo_write(e0, &x, best, "prg-xover-dev", cross, "prg-gone", 0);
    e = xo_engine(&x, 1);
    CU_ASSERT_STRING_EQUAL(xo_resolve(e, cross), best);
    CU_ASSERT_STRING_EQUAL(xo_resolve(e, 1u << 20), best);
    o = xo_order(e, NULL);
    len = strlen(o);
    CU_ASSERT(len > 13 && strcmp(o + len - 13, "prg-xover-dev") == 0);
    mpce_engine_free(e);

    /* A crossover_impl that is a host implementation (a crafted row): it
     * must not reorder the hosts. */
    xo_write(e0, &x, best, "prg-xover-dev", cross, x.hosts[1], 0);
    e = xo_engine(&x, 1);
    CU_ASSERT_STRING_EQUAL(xo_resolve(e, cross), best);
    CU_ASSERT_STRING_EQUAL(xo_resolve(e, 1u << 20), best);
    mpce_engine_free(e);

    /* The device the winner, no crossover: the hosts first for the whole
     * class (the device only where a crossover says it wins). */
    xo_write(e0, &x, "prg-xover-dev", best, 0, NULL, 0);
    e = xo_engine(&x, 1);
    CU_ASSERT_STRING_EQUAL(xo_resolve(e, 262144), best);
    CU_ASSERT_STRING_EQUAL(xo_resolve(e, 1u << 20), best);
    o = xo_order(e, NULL);
    len = strlen(o);
    CU_ASSERT(len > 13 && strcmp(o + len - 13, "prg-xover-dev") == 0);
    mpce_engine_free(e);

    /* The crossover's module blacklisted: the crossover is ignored, the
     * device never tried. */
    xo_write(e0, &x, best, "prg-xover-dev", cross, "prg-xover-dev", 1);
    e = xo_engine(&x, 1);
    CU_ASSERT_STRING_NOT_EQUAL(xo_resolve(e, cross), "prg-xover-dev");
    CU_ASSERT_STRING_NOT_EQUAL(xo_resolve(e, 1u << 20), "prg-xover-dev");
    if (strcmp(best, "prg-xover-host") != 0)
        CU_ASSERT_STRING_EQUAL(xo_resolve(e, 1u << 20), best);
    CU_ASSERT(strstr(xo_order(e, NULL), "prg-xover-dev") == NULL);
    mpce_engine_free(e);

    mpce_engine_free(e0);
    tu_remove_dir(x.dir);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"size classes", test_size_classes},
        {"a written format 3 row: the device from its crossover, hosts below it",
         test_crossover_from_a_written_row},
        {"an accelerator leads only the large class", test_accelerator_only_for_large},
        {"resolve never names an implementation that does not serve",
         test_resolve_respects_serves},
        {"a new table reaches live contexts", test_republish},
        {"routes and names resolved once per context", test_routes_resolved_once},
        {NULL, NULL},
    };
    return tu_main("dispatch", tests);
}
