/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Candidates that call an implementation's op through the engine's
 * normalized op table (engine/ops.h), with a state from the implementation's
 * own ctx_new and the host call (mpce_host_call, with knob values when
 * asked): the calls the engine's front ends make, minus their argument
 * checks. An asynchronous implementation (MPCE_IMPL_ASYNC) is called as the
 * engine calls it on host memory (engine/runtime/exec.c): with a completion,
 * waited for before the call counts as done, so its time is end to end
 * (submission, transfers, kernels, completion). No libffi: each op has its
 * own run function, typed by the op's one definition in mpcengine/plugin.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/runtime/exec.h"
#include "engine/runtime/knobs.h"
#include "spec/dpf_batch.h"
#include "spec/spec.h"
#include "tools/bench/bench.h"

struct impl_cand {
    const struct mpce_slot *slot;
    const char *op;              /* "prg.ecb", for messages */
    void *state;
    const struct mpce_bench_shape *s;
    struct mpce_bench_fixture *f;
    struct mpce_call call;       /* the host call, carrying knobs[] or none */
    uint32_t knobs[MPCE_KNOB_MAX];
    /* The op's arguments. */
    size_t n, m;
    const uint8_t *in;
    uint8_t *out;
    /* An asynchronous implementation's completion, which call.done names
     * (made again after each call). */
    int async;
    struct mpce_completion comp;
};

/* A plugin's failure as a status, with the detail naming the implementation
 * and what the plugin said (off the timed path: only when a call failed). */
static int failed(const struct impl_cand *c, int rc)
{
    return (int)mpce_op_status(c->slot, c->op, rc);
}

/* An op's return code as the call's result: for an asynchronous
 * implementation, once its completion came (as run_async in
 * engine/runtime/exec.c waits for it). */
static int settle(struct impl_cand *c, int rc)
{
    if (!c->async)
        return rc == 0 ? 0 : failed(c, rc);
    mpce_status st = rc == MPCE_OP_PENDING
                         ? mpce_completion_wait(&c->comp)
                         : mpce_completion_returned(&c->comp, rc, mpce_completion_op_status);
    mpce_completion_destroy(&c->comp);
    mpce_completion_init(&c->comp, c->slot, c->op);
    c->call.done = &c->comp;
    return (int)st;
}

static int run_prg_ecb(void *arg)
{
    struct impl_cand *c = arg;
    int rc = mpce_op_prg_ecb(&c->slot->ops.prg, c->state, &c->call, 0, c->in, c->out,
                             c->n);
    return settle(c, rc);
}

/* The latency chain: n one-block calls in place on one block, so each
 * call's input is the one before's output, as a point's levels are. */
static int run_prg_chain(void *arg)
{
    struct impl_cand *c = arg;
    for (size_t i = 0; i < c->n; i++) {
        int rc = mpce_op_prg_ecb(&c->slot->ops.prg, c->state, &c->call, 0, c->out, c->out, 1);
        if (rc != 0)
            return failed(c, rc);
    }
    return 0;
}

static int run_prg_mmo(void *arg)
{
    struct impl_cand *c = arg;
    int rc = mpce_op_prg_mmo(&c->slot->ops.prg, c->state, &c->call, c->in, c->out, c->n);
    return settle(c, rc);
}

static int run_prg_ctr(void *arg)
{
    struct impl_cand *c = arg;
    int rc = mpce_op_prg_ctr(&c->slot->ops.prg, c->state, &c->call, 0, 0, c->out, c->n);
    return settle(c, rc);
}

static int run_ntt_forward(void *arg)
{
    struct impl_cand *c = arg;
    int rc = mpce_op_ntt_forward(&c->slot->ops.ntt, c->state, &c->call,
                                 (const uint64_t *)c->in, (uint64_t *)c->out, c->n);
    return settle(c, rc);
}

static int run_ntt_inverse(void *arg)
{
    struct impl_cand *c = arg;
    int rc = mpce_op_ntt_inverse(&c->slot->ops.ntt, c->state, &c->call,
                                 (const uint64_t *)c->in, (uint64_t *)c->out, c->n);
    return settle(c, rc);
}

static int run_ntt_mul(void *arg)
{
    struct impl_cand *c = arg;
    int rc = mpce_op_ntt_mul(&c->slot->ops.ntt, c->state, &c->call, (const uint64_t *)c->in,
                             (const uint64_t *)c->f->in2, (uint64_t *)c->out, c->n);
    return settle(c, rc);
}

/* The production LPN shape: one table, the stream continued chunk by chunk
 * over all n outputs, as a Ferret extension does. */
static int run_lpn_fold(void *arg)
{
    struct impl_cand *c = arg;
    uint64_t total = c->s->n, chunk = c->s->chunk, c0 = 0;
    for (uint64_t off = 0; off < total; off += chunk) {
        size_t len = (size_t)(total - off < chunk ? total - off : chunk);
        int rc = mpce_op_lpn_fold(&c->slot->ops.lpn, c->state, &c->call, c0, c->in,
                                  c->out + 16 * off, len);
        if ((rc = settle(c, rc)) != 0)
            return rc;
        c0 += mpce_spec_lpn_consumed(len);
    }
    return 0;
}

static int run_dpf_evalall(void *arg)
{
    struct impl_cand *c = arg;
    int rc = mpce_op_dpf_evalall(&c->slot->ops.dpf, c->state, &c->call, &c->f->dkeys[0],
                                 c->out);
    return settle(c, rc);
}

static int run_dpf_eval(void *arg)
{
    struct impl_cand *c = arg;
    mpce_bench_chain_point(c->f);
    int rc = mpce_op_dpf_eval(&c->slot->ops.dpf, c->state, &c->call, &c->f->dkeys[0],
                              c->f->points, c->n, c->out);
    return settle(c, rc);
}

static int run_dpf_eval_keys(void *arg)
{
    struct impl_cand *c = arg;
    int rc = mpce_op_dpf_eval_keys(&c->slot->ops.dpf, c->state, &c->call,
                                   c->f->dkey_ptrs, c->f->points, c->n, c->out);
    return settle(c, rc);
}

static int run_dpf_eval_batch(void *arg)
{
    struct impl_cand *c = arg;
    if (c->slot->ops.dpf.eval_batch == NULL)
        return failed(c, MPCE_ERR_NOIMPL);
    int rc = mpce_op_dpf_eval_batch(&c->slot->ops.dpf, c->state, &c->call, &c->f->dbatch, 0,
                                    c->f->points, c->n, c->out);
    return settle(c, rc);
}

static void teardown(void *arg)
{
    struct impl_cand *c = arg;
    if (c->state)
        mpce_ops_ctx_free(&c->slot->ops, c->state);
    if (c->async)
        mpce_completion_destroy(&c->comp);
    free(c);
}

static void random_block(uint64_t *seed, uint8_t b[16])
{
    uint64_t lo = mpce_spec_splitmix64(seed), hi = mpce_spec_splitmix64(seed);
    for (int i = 0; i < 8; i++) {
        b[i] = (uint8_t)(lo >> (8 * i));
        b[8 + i] = (uint8_t)(hi >> (8 * i));
    }
}

/* eval_batch's keys, dkey_ptrs[0 .. n - 1], laid out as mpce_dpf_keys_new
 * lays them out (one 64-byte-aligned block). */
static int pack_batch(struct mpce_bench_fixture *f, size_t n)
{
    const unsigned bits = f->dkeys[0].bits;
    struct mpce_spec_dpf_batch_rw rw;
    f->dbatch_mem = mpce_spec_dpf_batch_alloc(n, bits, &rw);
    if (!f->dbatch_mem)
        return -1;
    for (size_t i = 0; i < n; i++)
        mpce_spec_dpf_batch_put(&rw, i, bits, f->dkey_ptrs[i]);
    f->dbatch = mpce_spec_dpf_batch_view(&rw);
    return 0;
}

/* The row's DPF keys (party 0), made once by the first candidate's gen:
 * every implementation reads the same key format. */
static int make_dpf_keys(struct impl_cand *c)
{
    struct mpce_bench_fixture *f = c->f;
    if (f->dkeys[0].bits)
        return 0;
    uint64_t seed = 8, mask = mpce_spec_dpf_domain_mask((unsigned)c->s->bits);
    struct mpce_dpf_key_v1 other;
    for (size_t i = 0; i < f->n_dkeys; i++) {
        uint8_t beta[16], s0[16], s1[16];
        uint64_t alpha = mpce_spec_splitmix64(&seed) & mask;
        random_block(&seed, beta);
        random_block(&seed, s0);
        random_block(&seed, s1);
        beta[MPCE_SPEC_DPF_TBIT_BYTE] &= 0xfe;
        s0[MPCE_SPEC_DPF_TBIT_BYTE] &= 0xfe;
        s1[MPCE_SPEC_DPF_TBIT_BYTE] &= 0xfe;
        int rc = mpce_op_dpf_gen(&c->slot->ops.dpf, c->state, &c->call, alpha, beta, s0,
                                 s1, &f->dkeys[i], &other);
        if (rc != 0) {
            f->dkeys[0].bits = 0;
            return rc;
        }
    }
    if (strcmp(c->s->op, "dpf.eval_batch") == 0 && pack_batch(f, (size_t)c->s->keys) != 0) {
        f->dkeys[0].bits = 0;
        return MPCE_ERR_NOMEM;
    }
    return 0;
}

/* The parameters and call shape the engine would show serves() for this
 * row's calls (the front ends' units: blocks, polynomials, outputs of one
 * call, the domain, keys). */
static void describe(const struct mpce_bench_shape *s, const char *op, uint64_t units,
                     struct mpce_params *p, struct mpce_shape *sh)
{
    memset(p, 0, sizeof(*p));
    p->struct_size = sizeof(*p);
    p->primitive = (uint32_t)s->prim;
    memset(sh, 0, sizeof(*sh));
    sh->struct_size = sizeof(*sh);
    sh->op = op;
    sh->memory = MPCE_MEM_HOST;
    sh->units = units;
    switch (s->prim) {
    case MPCE_PRIM_PRG:
        p->prg_keys = strcmp(op, "prg.mmo") == 0 ? (size_t)s->m : 1;
        break;
    case MPCE_PRIM_NTT:
        p->ntt_n = (size_t)s->N;
        p->ntt_l = 1;
        p->ntt_q = &s->q;
        break;
    case MPCE_PRIM_LPN:
        p->lpn_logk = (unsigned)s->logk;
        break;
    default:
        p->dpf_bits = (unsigned)s->bits;
        p->dpf_group = 0;
        break;
    }
}

static uint64_t call_units(const struct mpce_bench_shape *s)
{
    switch (s->prim) {
    case MPCE_PRIM_PRG:
        return s->n;
    case MPCE_PRIM_NTT:
        return s->B;
    case MPCE_PRIM_LPN:
        return s->chunk;
    default:
        return strcmp(s->op, "dpf.evalall") == 0 ? UINT64_C(1) << s->bits : s->keys;
    }
}

/* serves(), asked before any state is built as the engine asks it: 0, or
 * MPCE_ERR_NOIMPL with the reason. */
static mpce_status ask_serves(const struct mpce_slot *slot, const struct mpce_bench_shape *s,
                              const char *op, uint64_t units)
{
    if (slot->impl->serves == NULL)
        return MPCE_OK;
    struct mpce_params p;
    struct mpce_shape sh;
    describe(s, op, units, &p, &sh);
    char why[256] = "";
    if (slot->impl->serves(slot->module->state, &p, &sh, why, sizeof(why)) == 0)
        return MPCE_OK;
    why[sizeof(why) - 1] = '\0';
    return mpce_error(MPCE_ERR_NOIMPL, "does not serve this shape%s%s", why[0] ? ": " : "",
                      why);
}

/* State and arguments for the row's op; 0 or the plugin's return code. */
static int prepare(struct impl_cand *c)
{
    const struct mpce_bench_shape *s = c->s;
    struct mpce_bench_fixture *f = c->f;
    const union mpce_ops *ops = &c->slot->ops;
    void *mstate = c->slot->module->state;
    int rc;
    switch (s->prim) {
    case MPCE_PRIM_PRG:
        c->m = strcmp(s->op, "prg.mmo") == 0 ? (size_t)s->m : 1;
        if ((rc = mpce_op_prg_ctx_new(&ops->prg, mstate, f->keys, c->m, &c->state)) != 0)
            return rc;
        c->in = f->in;
        c->out = f->out;
        c->n = (size_t)s->n;
        return 0;
    case MPCE_PRIM_NTT: {
        if ((rc = mpce_op_ntt_ctx_new(&ops->ntt, mstate, (size_t)s->N, 1, &s->q, &f->psi,
                                      &c->state)) != 0)
            return rc;
        c->in = s->inplace ? f->out : f->in;
        c->out = f->out;
        c->n = (size_t)s->B;
        return 0;
    }
    case MPCE_PRIM_LPN:
        if ((rc = mpce_op_lpn_ctx_new(&ops->lpn, mstate, f->seed, (unsigned)s->logk,
                                      &c->state)) != 0)
            return rc;
        c->in = f->table;
        c->out = f->out;
        return 0;
    default:
        if ((rc = mpce_op_dpf_ctx_new(&ops->dpf, mstate, (unsigned)s->bits, 0, f->keys,
                                      f->keys + 16, &c->state)) != 0)
            return rc;
        if ((rc = make_dpf_keys(c)) != 0)
            return rc;
        c->out = f->out;
        c->n = (size_t)s->keys;
        return 0;
    }
}

static int (*run_of(const char *op))(void *)
{
    static const struct {
        const char *op;
        int (*run)(void *);
    } table[] = {
        {"prg.ecb", run_prg_ecb},         {"prg.mmo", run_prg_mmo},
        {"prg.ctr", run_prg_ctr},         {"ntt.forward", run_ntt_forward},
        {"ntt.inverse", run_ntt_inverse}, {"ntt.mul", run_ntt_mul},
        {"lpn.fold", run_lpn_fold},
        {"dpf.evalall", run_dpf_evalall}, {"dpf.eval_keys", run_dpf_eval_keys},
        {"dpf.eval", run_dpf_eval},       {"dpf.eval_batch", run_dpf_eval_batch},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(table[i].op, op) == 0)
            return table[i].run;
    return NULL;
}

/* A ctx_new (or gen) that did not return 0: the state is dropped and the
 * refusal or failure explained. */
static mpce_status finish(struct impl_cand *ic, int rc, struct mpce_bench_cand *c)
{
    if (rc == 0 && ic->state == NULL)
        rc = MPCE_ERR_BACKEND;
    if (rc != 0) {
        char detail[512];
        const struct mpce_host_rec *host = ic->slot->module->host;
        mpce_plugin_detail_take(host ? &host->host : NULL, detail, sizeof(detail));
        teardown(ic);
        if (rc == MPCE_ERR_NOIMPL)
            return mpce_error(MPCE_ERR_NOIMPL, "does not serve this shape%s%s",
                              detail[0] ? ": " : "", detail);
        mpce_status st = mpce_status_of_rc(rc);
        return mpce_error(st, "setup failed (%s)%s%s", mpce_status_name(st),
                          detail[0] ? ": " : "", detail);
    }
    if (ic->slot->flags & MPCE_IMPL_ASYNC) {
        /* From here on its calls may finish later (its gen, above, ran
         * as a call that finishes before it returns). */
        ic->async = 1;
        mpce_completion_init(&ic->comp, ic->slot, ic->op);
        ic->call.done = &ic->comp;
    }
    c->run = run_of(ic->op);
    c->teardown = teardown;
    c->state = ic;
    return MPCE_OK;
}

static struct impl_cand *new_cand(const struct mpce_slot *slot, const char *op,
                                  const struct mpce_bench_shape *s, struct mpce_bench_fixture *f)
{
    struct impl_cand *ic = calloc(1, sizeof(*ic));
    if (!ic)
        return NULL;
    ic->slot = slot;
    ic->op = op;
    ic->s = s;
    ic->f = f;
    ic->call = mpce_host_call;
    return ic;
}

int mpce_bench_slot_usable(mpce_engine *e, struct mpce_slot *slot, char *why, size_t len)
{
    if (mpce_registry_usable(e, slot, "") == MPCE_OK)
        return 1;
    snprintf(why, len, "%s", mpce_last_error());
    return 0;
}

mpce_status mpce_bench_impl_cand(const struct mpce_slot *slot, const struct mpce_bench_shape *s,
                                 struct mpce_bench_fixture *f, struct mpce_bench_cand *c)
{
    return mpce_bench_impl_cand_knobs(slot, s, f, NULL, c);
}

mpce_status mpce_bench_impl_cand_knobs(const struct mpce_slot *slot,
                                       const struct mpce_bench_shape *s,
                                       struct mpce_bench_fixture *f, const uint32_t *knobs,
                                       struct mpce_bench_cand *c)
{
    snprintf(c->name, sizeof(c->name), "%s", slot->impl->name);
    if (knobs != NULL && slot->n_knobs != 0) {
        char list[200];
        mpce_knobs_format(slot, knobs, list, sizeof(list));
        snprintf(c->name, sizeof(c->name), "%.63s:%.120s", slot->impl->name, list);
    }
    const char *op = mpce_bench_engine_op(s);
    mpce_status st = ask_serves(slot, s, op, call_units(s));
    if (st != MPCE_OK)
        return st;
    struct impl_cand *ic = new_cand(slot, op, s, f);
    if (!ic)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    if (strcmp(s->op, "dpf.eval_batch") == 0)
        ic->op = s->op; /* served as eval_keys, run as the batch op */
    if (knobs != NULL && slot->n_knobs != 0) {
        memcpy(ic->knobs, knobs, sizeof(ic->knobs));
        ic->call.knobs = ic->knobs;
        ic->call.n_knobs = slot->n_knobs;
    }
    return finish(ic, prepare(ic), c);
}

/* A DPF row's AES reference: prg's ECB on the fixture's floor blocks, in
 * place (the floor's blocks stay in one buffer, as a DPF's do), served at
 * `per_call` blocks a call. */
static mpce_status floor_ecb_cand(const struct mpce_slot *prg, const struct mpce_bench_shape *s,
                                  struct mpce_bench_fixture *f, uint64_t per_call,
                                  struct mpce_bench_cand *c)
{
    struct mpce_bench_shape ecb = *s;
    snprintf(ecb.op, sizeof(ecb.op), "prg.ecb");
    ecb.prim = MPCE_PRIM_PRG;
    mpce_status st = ask_serves(prg, &ecb, "prg.ecb", per_call);
    if (st != MPCE_OK)
        return st;
    struct impl_cand *ic = new_cand(prg, "prg.ecb", s, f);
    if (!ic)
        return mpce_error(MPCE_ERR_NOMEM, "benchmark: out of memory");
    int rc = mpce_op_prg_ctx_new(&prg->ops.prg, prg->module->state, f->keys, 1, &ic->state);
    ic->in = ic->out = f->floor_buf;
    ic->n = (size_t)f->floor_blocks;
    return finish(ic, rc, c);
}

mpce_status mpce_bench_floor_cand(const struct mpce_slot *prg, const struct mpce_bench_shape *s,
                                  struct mpce_bench_fixture *f, struct mpce_bench_cand *c)
{
    snprintf(c->name, sizeof(c->name), "aes-floor:%s", prg->impl->name);
    snprintf(c->note, sizeof(c->note), "%llu ECB blocks", (unsigned long long)f->floor_blocks);
    return floor_ecb_cand(prg, s, f, f->floor_blocks, c);
}

mpce_status mpce_bench_chain_cand(const struct mpce_slot *prg, const struct mpce_bench_shape *s,
                                  struct mpce_bench_fixture *f, struct mpce_bench_cand *c)
{
    snprintf(c->name, sizeof(c->name), "aes-chain:%s", prg->impl->name);
    snprintf(c->note, sizeof(c->note), "%llu dependent one-block ECB calls, each through the "
             "op table", (unsigned long long)f->floor_blocks);
    if (prg->flags & MPCE_IMPL_ASYNC)
        return mpce_error(MPCE_ERR_NOIMPL, "asynchronous: a chain of its calls would time "
                          "completions, not AES");
    mpce_status st = floor_ecb_cand(prg, s, f, 1, c);
    if (st == MPCE_OK)
        c->run = run_prg_chain;
    return st;
}
