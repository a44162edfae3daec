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
#include "tests/testutil.h"

#ifndef EMUDEV_SO
#error "EMUDEV_SO must name the built emulated-device module"
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

int main(void)
{
    static const struct tu_test tests[] = {
        {"size classes", test_size_classes},
        {"an accelerator leads only the large class", test_accelerator_only_for_large},
        {"resolve never names an implementation that does not serve",
         test_resolve_respects_serves},
        {"a new table reaches live contexts", test_republish},
        {"routes and names resolved once per context", test_routes_resolved_once},
        {NULL, NULL},
    };
    return tu_main("dispatch", tests);
}
