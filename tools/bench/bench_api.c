/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Candidates that call the public API, on a private engine configured like
 * the caller's (plugin directories, variable-time policy, pins, plugin
 * switches): thread scaling (one large call the engine may split over its
 * worker pool, [engine] threads set per candidate) and the dispatch overhead
 * of a small call (prg.dispatch). Also what "auto" resolves to for a row.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spec/spec.h"
#include "tools/bench/bench.h"

struct api_cand {
    mpce_engine *engine;
    char impl[96];
    const char *impl_arg;   /* impl, or NULL: "auto" */
    const struct mpce_bench_shape *s;
    struct mpce_bench_fixture *f;
    size_t n;
    mpce_prg *prg;
    mpce_ntt *ntt;
    mpce_lpn *lpn;
    mpce_dpf *dpf;
    mpce_dpf_key **keys;    /* n_keys party-0 keys, then their party-1 twins */
    size_t n_keys;
    const mpce_dpf_key **key_ptrs;
    mpce_dpf_keys *batch;   /* dpf.eval_batch: key_ptrs' keys */
};

static void free_contexts(struct api_cand *c)
{
    mpce_prg_free(c->prg);
    mpce_ntt_free(c->ntt);
    mpce_lpn_free(c->lpn);
    for (size_t i = 0; c->keys && i < 2 * c->n_keys; i++)
        mpce_dpf_key_free(c->keys[i]);
    free(c->keys);
    free(c->key_ptrs);
    mpce_dpf_keys_free(c->batch);
    mpce_dpf_free(c->dpf);
}

static void teardown(void *arg)
{
    struct api_cand *c = arg;
    free_contexts(c);
    /* The contexts held their own references; this releases the owner's. */
    mpce_engine_free(c->engine);
    free(c);
}

static int run(void *arg)
{
    struct api_cand *c = arg;
    const struct mpce_bench_shape *s = c->s;
    struct mpce_bench_fixture *f = c->f;
    const char *op = s->op;
    if (strcmp(op, "prg.ecb") == 0)
        return mpce_prg_ecb(c->prg, c->impl, 0, f->in, f->out, (size_t)s->n);
    if (strcmp(op, "prg.mmo") == 0)
        return mpce_prg_mmo(c->prg, c->impl, f->in, f->out, (size_t)s->n);
    if (strcmp(op, "prg.ctr") == 0)
        return mpce_prg_ctr(c->prg, c->impl, 0, 0, f->out, (size_t)s->n);
    if (strcmp(op, "ntt.forward") == 0)
        return mpce_ntt_forward(c->ntt, c->impl, (const uint64_t *)f->in, (uint64_t *)f->out,
                                (size_t)s->B);
    if (strcmp(op, "ntt.inverse") == 0)
        return mpce_ntt_inverse(c->ntt, c->impl, (const uint64_t *)f->in, (uint64_t *)f->out,
                                (size_t)s->B);
    if (strcmp(op, "ntt.mul") == 0)
        return mpce_ntt_mul(c->ntt, c->impl, (const uint64_t *)f->in, (const uint64_t *)f->in2,
                            (uint64_t *)f->out, (size_t)s->B);
    if (strcmp(op, "lpn.fold") == 0) {
        uint64_t c0 = 0;
        for (uint64_t off = 0; off < s->n; off += s->chunk) {
            size_t len = (size_t)(s->n - off < s->chunk ? s->n - off : s->chunk);
            uint64_t used;
            mpce_status st = mpce_lpn_fold(c->lpn, c->impl, c0, f->table, (size_t)1 << s->logk,
                                           f->out + 16 * off, len, &used);
            if (st != MPCE_OK)
                return st;
            c0 += used;
        }
        return 0;
    }
    if (strcmp(op, "dpf.evalall") == 0)
        return mpce_dpf_evalall(c->dpf, c->impl, c->keys[0], f->out, f->out_len);
    if (strcmp(op, "dpf.eval") == 0) {
        mpce_bench_chain_point(f);
        return mpce_dpf_eval(c->dpf, c->impl, c->keys[0], f->points, (size_t)s->keys, f->out);
    }
    if (strcmp(op, "dpf.eval_batch") == 0)
        return mpce_dpf_eval_batch(c->dpf, c->impl, c->batch, 0, f->points, (size_t)s->keys,
                                   f->out);
    return mpce_dpf_eval_keys(c->dpf, c->impl, c->key_ptrs, f->points, (size_t)s->keys, f->out);
}

/* prg.dispatch: what an application's small call costs, nothing else;
 * ntt.dispatch: an NTT call through the API (routing, the argument and
 * input checks), against the same op through the table. */
static int run_dispatch(void *arg)
{
    struct api_cand *c = arg;
    uint64_t *out = (uint64_t *)c->f->out;
    const uint64_t *in = c->s->inplace ? out : (const uint64_t *)c->f->in;
    size_t batch = (size_t)c->s->B;
    if (c->s->prim == MPCE_PRIM_NTT && c->s->transform == MPCE_BENCH_NTT_INVERSE)
        return mpce_ntt_inverse(c->ntt, c->impl_arg, in, out, batch);
    if (c->s->prim == MPCE_PRIM_NTT && c->s->transform == MPCE_BENCH_NTT_MUL)
        return mpce_ntt_mul(c->ntt, c->impl_arg, in, (const uint64_t *)c->f->in2, out, batch);
    if (c->s->prim == MPCE_PRIM_NTT)
        return mpce_ntt_forward(c->ntt, c->impl_arg, in, out, batch);
    return mpce_prg_ecb(c->prg, c->impl_arg, 0, c->f->in, c->f->out, c->n);
}

/* The [engine], [pins] and [plugin.NAME] settings of base that decide which
 * implementation runs, with `threads` threads per call. */
static int write_config(FILE *fp, const mpce_engine *base, unsigned threads)
{
    const struct mpce_config *cfg = &base->cfg;
    fprintf(fp, "[engine]\nthreads = %u\nallow_variable_time = %s\n", threads,
            cfg->allow_variable_time ? "yes" : "no");
    if (cfg->n_pins)
        fprintf(fp, "[pins]\n");
    for (size_t i = 0; i < cfg->n_pins; i++)
        fprintf(fp, "%s = %s\n", cfg->pins[i].key, cfg->pins[i].name);
    for (size_t i = 0; i < cfg->n_plugins; i++)
        fprintf(fp, "[plugin.%s]\nenabled = %s\n", cfg->plugins[i].name,
                cfg->plugins[i].enabled ? "yes" : "no");
    return ferror(fp) ? -1 : 0;
}

/* A private engine like `base` (plugin directories, variable-time policy,
 * pins, plugin switches) with `threads` threads per call. Its settings are
 * written to a temporary configuration file, which replaces every layer:
 * the caller's effective values already include them. The file sits in a
 * fresh directory of its own (mode 0700), so that root, which reads only
 * configuration no other user can change, accepts it under /tmp too. */
mpce_status mpce_bench_private_engine(const mpce_engine *base, unsigned threads,
                                      mpce_engine **out)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096], path[4200];
    snprintf(dir, sizeof(dir), "%s/mpce-bench-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return mpce_error(MPCE_ERR_IO, "benchmark: cannot create a temporary directory %s for "
                          "a configuration: set TMPDIR to a writable directory", dir);
    snprintf(path, sizeof(path), "%s/engine.conf", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    int ok = fp != NULL && write_config(fp, base, threads) == 0;
    if (fp)
        ok = fclose(fp) == 0 && ok;
    else if (fd >= 0)
        close(fd);

    size_t dirs_len = 1;
    for (size_t i = 0; i < base->cfg.n_plugin_dirs; i++)
        dirs_len += strlen(base->cfg.plugin_dirs[i]) + 1;
    char *dirs = calloc(1, dirs_len);
    for (size_t i = 0; dirs && i < base->cfg.n_plugin_dirs; i++) {
        if (i)
            strcat(dirs, ":");
        strcat(dirs, base->cfg.plugin_dirs[i]);
    }
    mpce_status st;
    if (!ok || !dirs) {
        st = mpce_error(ok ? MPCE_ERR_NOMEM : MPCE_ERR_IO,
                        "benchmark: cannot write the temporary configuration %s", path);
    } else {
        mpce_options opts;
        memset(&opts, 0, sizeof(opts)); /* no log callback: messages dropped */
        opts.struct_size = sizeof(opts);
        opts.config_path = path;
        /* The default directory is left to the configuration, which knows
         * it may be missing. */
        opts.plugin_path = dirs[0] && !base->cfg.plugin_dirs_default ? dirs : NULL;
        opts.flags = MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV | MPCE_OPT_NO_SYSTEM_CONFIG |
                     (base->cfg.no_plugins ? MPCE_OPT_NO_PLUGINS : 0u);
        st = mpce_engine_new(&opts, out);
    }
    unlink(path);
    rmdir(dir);
    free(dirs);
    return st;
}

static mpce_status dpf_keys(struct api_cand *c)
{
    const struct mpce_bench_shape *s = c->s;
    c->n_keys = c->f->n_dkeys;
    c->keys = calloc(2 * c->n_keys, sizeof(*c->keys));
    if (!c->keys)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    uint64_t mask = mpce_spec_dpf_domain_mask((unsigned)s->bits);
    for (size_t i = 0; i < c->n_keys; i++) {
        uint8_t beta[16] = {1}, s0[16] = {2, (uint8_t)i}, s1[16] = {3, (uint8_t)i};
        mpce_status st = mpce_dpf_gen(c->dpf, c->impl, (UINT64_C(0x9E3779B97F4A7C15) * i) & mask,
                                      beta, s0, s1, &c->keys[i], &c->keys[c->n_keys + i]);
        if (st != MPCE_OK)
            return st;
    }
    if (strcmp(s->op, "dpf.eval_keys") == 0 || strcmp(s->op, "dpf.eval_batch") == 0) {
        c->key_ptrs = malloc((size_t)s->keys * sizeof(*c->key_ptrs));
        if (!c->key_ptrs)
            return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
        for (size_t i = 0; i < s->keys; i++)
            c->key_ptrs[i] = c->keys[i % c->n_keys];
    }
    if (strcmp(s->op, "dpf.eval_batch") == 0)
        return mpce_dpf_keys_new(c->dpf, c->key_ptrs, (size_t)s->keys, &c->batch);
    return MPCE_OK;
}

/* The row's context on engine e, in c's member for its primitive. */
static mpce_status open_context(mpce_engine *e, const struct mpce_bench_shape *s,
                                const struct mpce_bench_fixture *f, struct api_cand *c)
{
    switch (s->prim) {
    case MPCE_PRIM_PRG:
        return mpce_prg_new(e, f->keys, strcmp(s->op, "prg.mmo") == 0 ? (size_t)s->m : 1,
                            &c->prg);
    case MPCE_PRIM_NTT: {
        mpce_status st = mpce_ntt_new(e, (size_t)s->N, &s->q, 1, &c->ntt);
        if (st == MPCE_OK && s->inplace == MPCE_BENCH_INPLACE_ZERO)
            st = mpce_ntt_set_refusal(c->ntt, MPCE_NTT_REFUSAL_ZERO);
        return st;
    }
    case MPCE_PRIM_LPN:
        return mpce_lpn_new(e, f->seed, (unsigned)s->logk, &c->lpn);
    default:
        return mpce_dpf_new(e, (unsigned)s->bits, MPCE_DPF_BYTES, f->keys, f->keys + 16,
                            &c->dpf);
    }
}

static mpce_status contexts(struct api_cand *c)
{
    mpce_status st = open_context(c->engine, c->s, c->f, c);
    return st == MPCE_OK && c->s->prim == MPCE_PRIM_DPF ? dpf_keys(c) : st;
}

static struct api_cand *new_api_cand(const char *impl, const struct mpce_bench_shape *s,
                                     struct mpce_bench_fixture *f)
{
    struct api_cand *ac = calloc(1, sizeof(*ac));
    if (!ac)
        return NULL;
    snprintf(ac->impl, sizeof(ac->impl), "%s", impl ? impl : "auto");
    ac->impl_arg = impl ? ac->impl : NULL;
    ac->s = s;
    ac->f = f;
    ac->n = (size_t)s->n;
    return ac;
}

mpce_status mpce_bench_api_cand(mpce_engine *engine, const char *impl, unsigned threads,
                                const struct mpce_bench_shape *s, struct mpce_bench_fixture *f,
                                struct mpce_bench_cand *c)
{
    snprintf(c->name, sizeof(c->name), "%s", impl);
    snprintf(c->note, sizeof(c->note), "public API, threads = %u", threads);
    struct api_cand *ac = new_api_cand(impl, s, f);
    if (!ac)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    mpce_status st = mpce_bench_private_engine(engine, threads, &ac->engine);
    if (st == MPCE_OK)
        st = contexts(ac);
    if (st != MPCE_OK) {
        char detail[300];
        snprintf(detail, sizeof(detail), "%s", mpce_last_error());
        teardown(ac);
        return mpce_error(st, "threads = %u: %s", threads, detail);
    }
    c->run = run;
    c->teardown = teardown;
    c->state = ac;
    return MPCE_OK;
}

mpce_engine *mpce_bench_api_cand_engine(const struct mpce_bench_cand *c)
{
    return c->run == run && c->state ? ((const struct api_cand *)c->state)->engine : NULL;
}

mpce_status mpce_bench_dispatch_cand(mpce_engine *engine, const char *impl,
                                     const struct mpce_bench_shape *s,
                                     struct mpce_bench_fixture *f, struct mpce_bench_cand *c,
                                     const char **resolved)
{
    snprintf(c->name, sizeof(c->name), "api");
    struct api_cand *ac = new_api_cand(impl, s, f);
    if (!ac)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    /* prg.dispatch: the caller's thread count (a small call is never split,
     * but the engine is the one an application with this configuration
     * gets). ntt.dispatch: one thread, as direct runs, so the difference is
     * the API's own work and not the pool's split of the batch. */
    mpce_status st = mpce_bench_private_engine(
        engine, s->prim == MPCE_PRIM_NTT ? 1u : engine->cfg.threads, &ac->engine);
    if (st == MPCE_OK)
        st = open_context(ac->engine, s, f, ac);
    /* Resolving makes the route and the state the timed calls then find. */
    if (st == MPCE_OK && s->prim == MPCE_PRIM_NTT)
        st = mpce_ntt_resolve(ac->ntt, ac->impl_arg, mpce_bench_engine_op(s), (size_t)s->B,
                              resolved);
    else if (st == MPCE_OK)
        st = mpce_prg_resolve(ac->prg, ac->impl_arg, "prg.ecb", ac->n, resolved);
    if (st != MPCE_OK) {
        char detail[300];
        snprintf(detail, sizeof(detail), "%s", mpce_last_error());
        teardown(ac);
        return mpce_error(st, "public API: %s", detail);
    }
    c->run = run_dispatch;
    c->teardown = teardown;
    c->state = ac;
    return MPCE_OK;
}

mpce_status mpce_bench_auto_impl(mpce_engine *engine, const struct mpce_bench_shape *s,
                                 const struct mpce_bench_fixture *f, char *name, size_t len)
{
    const char *op = mpce_bench_engine_op(s), *got = NULL;
    struct api_cand c;
    memset(&c, 0, sizeof(c));
    mpce_status st = open_context(engine, s, f, &c);
    if (st == MPCE_OK) {
        switch (s->prim) {
        case MPCE_PRIM_PRG:
            st = mpce_prg_resolve(c.prg, NULL, op, (size_t)s->n, &got);
            break;
        case MPCE_PRIM_NTT:
            st = mpce_ntt_resolve(c.ntt, NULL, op, (size_t)s->B, &got);
            break;
        case MPCE_PRIM_LPN:
            st = mpce_lpn_resolve(c.lpn, NULL, (size_t)s->chunk, &got);
            break;
        default:
            st = mpce_dpf_resolve(c.dpf, NULL, op, (size_t)s->keys, &got);
            break;
        }
    }
    if (st == MPCE_OK)
        snprintf(name, len, "%s", got);
    free_contexts(&c);
    return st;
}
