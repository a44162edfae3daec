/*
 * Candidates that call an implementation's vtable through the op
 * descriptors (engine/opdesc.h), with a state from the implementation's own
 * ctx_new: the same calls the engine makes, minus its argument checks, and
 * no per-op glue here beyond laying out the arguments.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/bench.h"
#include "engine/opdesc.h"

#define TBIT_BYTE 12

struct impl_cand {
    const struct mpce_impl *impl;
    const struct mpce_opdesc *op;
    const struct mpce_opdesc *free_op;
    void *state;
    const struct mpce_bench_shape *s;
    struct mpce_bench_fixture *f;
    /* The argument values argv points at. */
    size_t idx, n;
    uint64_t c0;
    const void *in, *in2;
    void *out;
    void *argv[8];
    int lpn_chunked;
};

static int call(const struct mpce_opdesc *d, const void *vt, void **argv)
{
    int ret = 0;
    mpce_status st = mpce_op_call(d, vt, argv, &ret);
    return st != MPCE_OK ? (int)st : ret;
}

static int run_plain(void *arg)
{
    struct impl_cand *c = arg;
    return call(c->op, c->impl->vtable, c->argv);
}

/* The production LPN shape: one table, the stream continued chunk by chunk
 * over all n outputs, as a Ferret extension does. */
static int run_lpn(void *arg)
{
    struct impl_cand *c = arg;
    uint64_t total = c->s->n, chunk = c->s->chunk;
    c->c0 = 0;
    for (uint64_t off = 0; off < total; off += chunk) {
        c->n = (size_t)(total - off < chunk ? total - off : chunk);
        c->out = c->f->out + 16 * off;
        int rc = call(c->op, c->impl->vtable, c->argv);
        if (rc != 0)
            return rc;
        c->c0 += mpce_lpn_blocks_consumed(c->n);
    }
    return 0;
}

static void teardown(void *arg)
{
    struct impl_cand *c = arg;
    if (c->state) {
        void *argv[] = {&c->state};
        call(c->free_op, c->impl->vtable, argv);
    }
    free(c);
}

/* ctx_new through its descriptor; the return code as the plugin gave it. */
static int make_state(struct impl_cand *c, const char *prim, void **argv)
{
    char name[32];
    snprintf(name, sizeof(name), "%s.ctx_new", prim);
    int rc = call(mpce_op_find(name), c->impl->vtable, argv);
    if (rc == 0 && !c->state)
        rc = MPCE_ERR_PLUGIN;
    return rc;
}

static void random_block(uint64_t *seed, uint8_t b[16])
{
    uint64_t lo = mpce_splitmix64(seed), hi = mpce_splitmix64(seed);
    for (int i = 0; i < 8; i++) {
        b[i] = (uint8_t)(lo >> (8 * i));
        b[8 + i] = (uint8_t)(hi >> (8 * i));
    }
}

/* The row's DPF keys (party 0), made once by the first candidate's gen:
 * every implementation reads the same key format. */
static int make_dpf_keys(struct impl_cand *c)
{
    struct mpce_bench_fixture *f = c->f;
    if (f->dkeys[0].bits)
        return 0;
    const struct mpce_opdesc *gen = mpce_op_find("dpf.gen");
    uint64_t seed = 8, mask = c->s->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << c->s->bits) - 1;
    struct mpce_dpf_key_v1 other;
    for (size_t i = 0; i < f->n_dkeys; i++) {
        uint8_t beta[16], s0[16], s1[16];
        uint64_t alpha = mpce_splitmix64(&seed) & mask;
        random_block(&seed, beta);
        random_block(&seed, s0);
        random_block(&seed, s1);
        beta[TBIT_BYTE] &= 0xfe;
        s0[TBIT_BYTE] &= 0xfe;
        s1[TBIT_BYTE] &= 0xfe;
        const uint8_t *pb = beta, *p0 = s0, *p1 = s1;
        struct mpce_dpf_key_v1 *k0 = &f->dkeys[i], *k1 = &other;
        void *argv[] = {&c->state, &alpha, &pb, &p0, &p1, &k0, &k1};
        int rc = call(gen, c->impl->vtable, argv);
        if (rc != 0) {
            f->dkeys[0].bits = 0;
            return rc;
        }
    }
    return 0;
}

/* State and arguments for the row's op; 0 or the plugin's return code. */
static int prepare(struct impl_cand *c)
{
    const struct mpce_bench_shape *s = c->s;
    struct mpce_bench_fixture *f = c->f;
    void **a = c->argv;
    int rc;
    switch (s->prim) {
    case MPCE_PRIM_PRG: {
        const uint8_t *keys = f->keys;
        size_t m = strcmp(s->op, "prg.mmo") == 0 ? (size_t)s->m : 1;
        void **sp = &c->state;
        void *nargv[] = {&keys, &m, &sp};
        if ((rc = make_state(c, "prg", nargv)) != 0)
            return rc;
        c->in = f->in;
        c->out = f->out;
        c->n = (size_t)s->n;
        if (strcmp(s->op, "prg.mmo") == 0) {
            a[0] = &c->state, a[1] = &c->in, a[2] = &c->out, a[3] = &c->n;
        } else if (strcmp(s->op, "prg.ctr") == 0) {
            a[0] = &c->state, a[1] = &c->idx, a[2] = &c->c0, a[3] = &c->out, a[4] = &c->n;
        } else {
            a[0] = &c->state, a[1] = &c->idx, a[2] = &c->in, a[3] = &c->out, a[4] = &c->n;
        }
        return 0;
    }
    case MPCE_PRIM_NTT: {
        size_t n = (size_t)s->N, l = 1;
        const uint64_t *q = &s->q, *psi = &f->psi;
        void **sp = &c->state;
        void *nargv[] = {&n, &l, &q, &psi, &sp};
        if ((rc = make_state(c, "ntt", nargv)) != 0)
            return rc;
        c->in = f->in;
        c->out = f->out;
        c->n = (size_t)s->B;
        a[0] = &c->state, a[1] = &c->in, a[2] = &c->out, a[3] = &c->n;
        return 0;
    }
    case MPCE_PRIM_LPN: {
        const uint8_t *seed = f->seed;
        unsigned logk = (unsigned)s->logk;
        void **sp = &c->state;
        void *nargv[] = {&seed, &logk, &sp};
        if ((rc = make_state(c, "lpn", nargv)) != 0)
            return rc;
        c->in = f->table;
        a[0] = &c->state, a[1] = &c->c0, a[2] = &c->in, a[3] = &c->out, a[4] = &c->n;
        c->lpn_chunked = 1;
        return 0;
    }
    default: {
        unsigned bits = (unsigned)s->bits, group = 0;
        const uint8_t *kl = f->keys, *kr = f->keys + 16;
        void **sp = &c->state;
        void *nargv[] = {&bits, &group, &kl, &kr, &sp};
        if ((rc = make_state(c, "dpf", nargv)) != 0)
            return rc;
        if ((rc = make_dpf_keys(c)) != 0)
            return rc;
        c->out = f->out;
        if (strcmp(s->op, "dpf.evalall") == 0) {
            c->in = &f->dkeys[0];
            a[0] = &c->state, a[1] = &c->in, a[2] = &c->out;
        } else {
            c->in = f->dkey_ptrs;
            c->in2 = f->points;
            c->n = (size_t)s->keys;
            a[0] = &c->state, a[1] = &c->in, a[2] = &c->in2, a[3] = &c->n, a[4] = &c->out;
        }
        return 0;
    }
    }
}

static mpce_status finish(struct impl_cand *ic, int rc, struct mpce_bench_cand *c)
{
    if (rc != 0) {
        char detail[300];
        snprintf(detail, sizeof(detail), "%s", mpce_last_error());
        teardown(ic);
        if (rc == MPCE_ERR_NOIMPL)
            return mpce_error(MPCE_ERR_NOIMPL, "does not serve this shape%s%s",
                              detail[0] ? ": " : "", detail);
        return mpce_error(rc > 0 && rc <= MPCE_ERR_STATE ? (mpce_status)rc : MPCE_ERR_BACKEND,
                          "setup failed (%s)%s%s", mpce_status_name((mpce_status)rc),
                          detail[0] ? ": " : "", detail);
    }
    c->run = ic->lpn_chunked ? run_lpn : run_plain;
    c->teardown = teardown;
    c->state = ic;
    return MPCE_OK;
}

static struct impl_cand *new_cand(const struct mpce_impl *impl, const char *op,
                                  const struct mpce_bench_shape *s, struct mpce_bench_fixture *f)
{
    struct impl_cand *ic = calloc(1, sizeof(*ic));
    if (!ic)
        return NULL;
    char free_name[32];
    snprintf(free_name, sizeof(free_name), "%s.ctx_free", mpce_primitive_name(s->prim));
    ic->impl = impl;
    ic->op = mpce_op_find(op);
    ic->free_op = mpce_op_find(free_name);
    ic->s = s;
    ic->f = f;
    return ic;
}

mpce_status mpce_bench_impl_cand(const struct mpce_impl *impl, const struct mpce_bench_shape *s,
                                 struct mpce_bench_fixture *f, struct mpce_bench_cand *c)
{
    snprintf(c->name, sizeof(c->name), "%s", impl->name);
    struct impl_cand *ic = new_cand(impl, s->op, s, f);
    if (!ic)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    mpce_error_clear();
    return finish(ic, prepare(ic), c);
}

mpce_status mpce_bench_floor_cand(const struct mpce_impl *prg, const struct mpce_bench_shape *s,
                                  struct mpce_bench_fixture *f, struct mpce_bench_cand *c)
{
    snprintf(c->name, sizeof(c->name), "aes-floor:%s", prg->name);
    snprintf(c->note, sizeof(c->note), "%llu ECB blocks", (unsigned long long)f->floor_blocks);
    struct impl_cand *ic = new_cand(prg, "prg.ecb", s, f);
    if (!ic)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    mpce_error_clear();
    const uint8_t *keys = f->keys;
    size_t m = 1;
    void **sp = &ic->state;
    void *nargv[] = {&keys, &m, &sp};
    int rc = make_state(ic, "prg", nargv);
    /* In place: the floor's blocks stay in one buffer, as a DPF's do. */
    ic->in = ic->out = f->floor_buf;
    ic->n = (size_t)f->floor_blocks;
    void **a = ic->argv;
    a[0] = &ic->state, a[1] = &ic->idx, a[2] = &ic->in, a[3] = &ic->out, a[4] = &ic->n;
    return finish(ic, rc, c);
}
