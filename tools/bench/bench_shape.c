/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark shapes: "key=value,..." strings per op, the default rows, units. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

/* The figures the issue asks for, in the order they are printed. */
static const struct {
    const char *op, *shape;
} defaults[] = {
    {"prg.ecb", "n=1048576"},
    {"prg.mmo", "m=2,n=65536"},
    {"prg.ctr", "n=1048576"},
    {"prg.dispatch", "n=1"},
    /* The API's own cost on an NTT call (its input check above all):
     * the "checks within 5 % of any row", in one run. */
    {"ntt.dispatch", "N=4096,B=64,q=61bit"},
    {"ntt.dispatch", "N=4096,B=64,q=50bit"},
    {"ntt.dispatch", "N=4096,B=64,q=61bit,op=inverse"},
    {"ntt.dispatch", "N=4096,B=64,q=61bit,op=mul"},
    {"ntt.forward", "N=4096,B=64,q=61bit"},
    {"ntt.forward", "N=16384,B=64,q=61bit"},
    {"ntt.inverse", "N=4096,B=64,q=61bit"},
    {"ntt.inverse", "N=16384,B=64,q=61bit"},
    {"ntt.forward", "N=4096,B=64,q=60bit"},
    {"ntt.forward", "N=16384,B=64,q=60bit"},
    {"ntt.inverse", "N=4096,B=64,q=60bit"},
    {"ntt.inverse", "N=16384,B=64,q=60bit"},
    /* q below 2^50: the moduli AVX-512 IFMA serves. */
    {"ntt.forward", "N=4096,B=64,q=50bit"},
    {"ntt.forward", "N=16384,B=64,q=50bit"},
    {"ntt.inverse", "N=4096,B=64,q=50bit"},
    {"ntt.inverse", "N=16384,B=64,q=50bit"},
    {"ntt.mul", "N=4096,B=64,q=61bit"},
    {"ntt.mul", "N=4096,B=64,q=50bit"},
    {"lpn.fold", "logk=19,n=4194304,chunk=8192"},
    {"dpf.evalall", "bits=20"},
    {"dpf.eval_keys", "bits=20,keys=65536"},
    /* The same keys as one level-major batch (mpce_dpf_keys). */
    {"dpf.eval_batch", "bits=20,keys=65536"},
    /* One key at one point: a DPF lookup's latency. */
    {"dpf.eval", "bits=20,points=1"},
    {"prg.ecb", "n=4194304,threads=2"},
    {"ntt.forward", "N=16384,B=64,q=61bit,threads=2"},
    {"lpn.fold", "logk=19,n=4194304,threads=2"},
    {"dpf.evalall", "bits=22,threads=2"},
};

#define N_DEFAULTS (sizeof(defaults) / sizeof(defaults[0]))

size_t mpce_bench_default_count(void)
{
    return N_DEFAULTS;
}

mpce_status mpce_bench_default_row(size_t index, const char **op, const char **shape)
{
    if (index >= N_DEFAULTS)
        return MPCE_ERR_ARG;
    if (op)
        *op = defaults[index].op;
    if (shape)
        *shape = defaults[index].shape;
    return MPCE_OK;
}

/* A key an op takes: where it goes, whether it must be given, its range. */
struct key {
    const char *name;
    size_t offset;
    int required;
    uint64_t min, max;
};

#define K(nm, field, req, lo, hi) {nm, offsetof(struct mpce_bench_shape, field), req, lo, hi}
#define THREADS K("threads", threads, 0, 1, 256)
#define END {NULL, 0, 0, 0, 0}

/* Bounds keep one row's buffers to about 1 GiB. */
static const struct key prg_n[] = {K("n", n, 1, 1, UINT64_C(1) << 26), THREADS, END};
/* One block by default: the call whose cost is mostly the dispatch. */
static const struct key prg_dispatch[] = {K("n", n, 1, 1, 65536), END};
static const struct key prg_mmo[] = {K("m", m, 1, 1, 8), K("n", n, 1, 1, UINT64_C(1) << 23),
                                     THREADS, END};
static const struct key ntt[] = {K("N", N, 1, 8, 131072), K("B", B, 1, 1, 4096),
                                 K("q", q, 1, 0, 0), THREADS, END};
/* One call on one thread: the API against the op table, nothing split. */
static const struct key ntt_dispatch[] = {K("N", N, 1, 8, 131072), K("B", B, 1, 1, 4096),
                                          K("q", q, 1, 0, 0), K("op", transform, 0, 0, 0),
                                          K("inplace", inplace, 0, 0, 0), END};
static const struct key lpn[] = {K("logk", logk, 1, 1, 26), K("n", n, 1, 1, UINT64_C(1) << 26),
                                 K("chunk", chunk, 0, 1, UINT64_C(1) << 26), THREADS, END};
static const struct key dpf_all[] = {K("bits", bits, 1, 1, 26), THREADS, END};
static const struct key dpf_keys[] = {K("bits", bits, 1, 1, 64),
                                      K("keys", keys, 1, 1, UINT64_C(1) << 22), THREADS, END};
/* One key at `points` points (the count is kept where eval_keys keeps its). */
static const struct key dpf_points[] = {K("bits", bits, 1, 1, 64),
                                        K("points", keys, 1, 1, UINT64_C(1) << 22), THREADS,
                                        END};

static const struct {
    const char *op;
    mpce_primitive prim;
    const struct key *keys;
    const char *form;
} ops[] = {
    {"prg.ecb", MPCE_PRIM_PRG, prg_n, "n=BLOCKS[,threads=T]"},
    {"prg.mmo", MPCE_PRIM_PRG, prg_mmo, "m=KEYS,n=SEEDS[,threads=T]"},
    {"prg.ctr", MPCE_PRIM_PRG, prg_n, "n=BLOCKS[,threads=T]"},
    {"prg.dispatch", MPCE_PRIM_PRG, prg_dispatch, "n=BLOCKS"},
    {"ntt.forward", MPCE_PRIM_NTT, ntt, "N=DEGREE,B=BATCH,q=61bit|60bit|50bit[,threads=T]"},
    {"ntt.inverse", MPCE_PRIM_NTT, ntt, "N=DEGREE,B=BATCH,q=61bit|60bit|50bit[,threads=T]"},
    {"ntt.mul", MPCE_PRIM_NTT, ntt, "N=DEGREE,B=BATCH,q=61bit|60bit|50bit[,threads=T]"},
    {"ntt.dispatch", MPCE_PRIM_NTT, ntt_dispatch,
     "N=DEGREE,B=BATCH,q=61bit|60bit|50bit[,op=forward|inverse|mul][,inplace=keep|zero]"},
    {"lpn.fold", MPCE_PRIM_LPN, lpn, "logk=LOGK,n=OUTPUTS[,chunk=OUTPUTS][,threads=T]"},
    {"dpf.evalall", MPCE_PRIM_DPF, dpf_all, "bits=N[,threads=T]"},
    {"dpf.eval_keys", MPCE_PRIM_DPF, dpf_keys, "bits=N,keys=K[,threads=T]"},
    {"dpf.eval", MPCE_PRIM_DPF, dpf_points, "bits=N,points=P[,threads=T]"},
    {"dpf.eval_batch", MPCE_PRIM_DPF, dpf_keys, "bits=N,keys=K[,threads=T]"},
};

#define N_OPS (sizeof(ops) / sizeof(ops[0]))

static mpce_status unknown_op(const char *op)
{
    char list[256];
    size_t used = 0;
    for (size_t i = 0; i < N_OPS && used < sizeof(list); i++)
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
                                 ops[i].op);
    return mpce_error(MPCE_ERR_ARG, "unknown benchmark op '%.40s' (expected one of %s)", op,
                      list);
}

mpce_status mpce_bench_op_check(const char *op)
{
    for (size_t i = 0; i < N_OPS; i++)
        if (strcmp(ops[i].op, op) == 0)
            return MPCE_OK;
    return unknown_op(op);
}

static mpce_status parse_value(const char *op, const struct key *k, const char *v,
                               struct mpce_bench_shape *out)
{
    uint64_t *dst = (uint64_t *)((char *)out + k->offset);
    if (strcmp(k->name, "q") == 0) {
        if (strcmp(v, "61bit") == 0)
            *dst = MPCE_BENCH_Q61;
        else if (strcmp(v, "60bit") == 0)
            *dst = MPCE_BENCH_Q60;
        else if (strcmp(v, "50bit") == 0)
            *dst = MPCE_BENCH_Q50;
        else
            return mpce_error(MPCE_ERR_ARG, "%s shape: q=%.40s: expected 61bit "
                              "(2^61-2^21+1), 60bit (2^60-2^18+1) or 50bit "
                              "(0x3ffffffd20001, IFMA's range)", op, v);
        return MPCE_OK;
    }
    /* Named values: op= (MPCE_BENCH_NTT_*) and inplace= (MPCE_BENCH_INPLACE_*,
     * the context's refusal mode, ntt.h), stored as their index. */
    static const char *const ops_named[] = {"forward", "inverse", "mul", NULL};
    static const char *const inplace_named[] = {"", "keep", "zero", NULL};
    _Static_assert(MPCE_BENCH_NTT_MUL == 2 && MPCE_BENCH_INPLACE_KEEP == 1 &&
                       MPCE_BENCH_INPLACE_ZERO == 2,
                   "the names' order is the enums'");
    const int is_op = strcmp(k->name, "op") == 0;
    if (is_op || strcmp(k->name, "inplace") == 0) {
        const char *const *names = is_op ? ops_named : inplace_named;
        for (uint64_t i = 0; names[i]; i++)
            if (names[i][0] && strcmp(v, names[i]) == 0) {
                *dst = i;
                return MPCE_OK;
            }
        return mpce_error(MPCE_ERR_ARG, "%s shape: %s=%.40s: expected %s", op, k->name, v,
                          is_op ? "forward, inverse or mul"
                                : "keep or zero (what a refused call leaves, "
                                  "mpce_ntt_set_refusal)");
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || errno)
        return mpce_error(MPCE_ERR_ARG, "%s shape: %s=%.40s is not a decimal number", op,
                          k->name, v);
    if (x < k->min || x > k->max)
        return mpce_error(MPCE_ERR_ARG, "%s shape: %s=%llu is out of range [%llu, %llu]", op,
                          k->name, x, (unsigned long long)k->min, (unsigned long long)k->max);
    *dst = x;
    return MPCE_OK;
}

mpce_status mpce_bench_shape_parse(const char *op, const char *shape,
                                   struct mpce_bench_shape *out)
{
    size_t oi = 0;
    while (oi < N_OPS && strcmp(ops[oi].op, op) != 0)
        oi++;
    if (oi == N_OPS)
        return unknown_op(op);
    const struct key *keys = ops[oi].keys;
    memset(out, 0, sizeof(*out));
    if (strlen(shape) >= sizeof(out->text))
        return mpce_error(MPCE_ERR_ARG, "%s shape is too long", op);
    snprintf(out->op, sizeof(out->op), "%s", op);
    snprintf(out->text, sizeof(out->text), "%s", shape);
    out->prim = ops[oi].prim;
    out->dispatch = strcmp(op, "prg.dispatch") == 0 || strcmp(op, "ntt.dispatch") == 0;
    out->threads = 1;

    char buf[128];
    snprintf(buf, sizeof(buf), "%s", shape);
    unsigned seen = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return mpce_error(MPCE_ERR_ARG, "%s shape '%s': '%.40s' is not key=value "
                              "(expected %s)", op, shape, tok, ops[oi].form);
        *eq = '\0';
        unsigned ki = 0;
        while (keys[ki].name && strcmp(keys[ki].name, tok) != 0)
            ki++;
        if (!keys[ki].name)
            return mpce_error(MPCE_ERR_ARG, "%s shape '%s': unknown key '%.40s' (expected "
                              "%s)", op, shape, tok, ops[oi].form);
        if (seen & (1u << ki))
            return mpce_error(MPCE_ERR_ARG, "%s shape '%s': key '%s' given twice", op, shape,
                              tok);
        seen |= 1u << ki;
        mpce_status st = parse_value(op, &keys[ki], eq + 1, out);
        if (st != MPCE_OK)
            return st;
    }
    for (unsigned ki = 0; keys[ki].name; ki++)
        if (keys[ki].required && !(seen & (1u << ki)))
            return mpce_error(MPCE_ERR_ARG, "%s shape '%s': missing %s (expected %s)",
                              op, shape, keys[ki].name, ops[oi].form);
    if (out->prim == MPCE_PRIM_LPN) {
        if (!out->chunk)
            out->chunk = out->n;
        if (out->chunk > out->n)
            return mpce_error(MPCE_ERR_ARG, "%s shape '%s': chunk is larger than n", op, shape);
    }
    if (out->prim == MPCE_PRIM_NTT && out->N * out->B > (UINT64_C(1) << 26))
        return mpce_error(MPCE_ERR_ARG, "%s shape '%s': N*B exceeds 2^26 words", op, shape);
    if (out->prim == MPCE_PRIM_NTT && (out->N & (out->N - 1)))
        return mpce_error(MPCE_ERR_ARG, "%s shape '%s': N is not a power of two", op, shape);
    return MPCE_OK;
}

const char *mpce_bench_engine_op(const struct mpce_bench_shape *s)
{
    /* A key batch is routed, and served, as eval_keys. */
    if (strcmp(s->op, "dpf.eval_batch") == 0)
        return "dpf.eval_keys";
    static const char *const ntt_ops[] = {"ntt.forward", "ntt.inverse", "ntt.mul"};
    if (s->dispatch && s->prim == MPCE_PRIM_NTT)
        return ntt_ops[s->transform < 3 ? s->transform : 0];
    if (s->dispatch)
        return "prg.ecb";
    return s->op;
}

/* Work units of one call: blocks written, transforms, outputs or keys. */
static double units(const struct mpce_bench_shape *s)
{
    if (strcmp(s->op, "prg.mmo") == 0)
        return (double)(s->n * s->m);
    switch (s->prim) {
    case MPCE_PRIM_NTT:
        return (double)s->B;
    case MPCE_PRIM_DPF:
        return strcmp(s->op, "dpf.evalall") == 0 ? (double)(UINT64_C(1) << s->bits)
                                                 : (double)s->keys;
    default:
        return (double)s->n;
    }
}

const char *mpce_bench_unit(const struct mpce_bench_shape *s)
{
    if (s->dispatch)
        return "ns/call";
    switch (s->prim) {
    case MPCE_PRIM_PRG:
        return "GB/s";
    case MPCE_PRIM_NTT:
        /* A product of two polynomials in the NTT domain: N multiplies. */
        return strcmp(s->op, "ntt.mul") == 0 ? "ns/product" : "ns/NTT";
    case MPCE_PRIM_DPF:
        return strcmp(s->op, "dpf.evalall") == 0 ? "ns/output"
               : strcmp(s->op, "dpf.eval") == 0  ? "ns/point"
                                                 : "ns/key";
    default:
        return "ns/output";
    }
}

double mpce_bench_rate(const struct mpce_bench_shape *s, double seconds_per_call)
{
    if (seconds_per_call <= 0)
        return 0;
    if (s->dispatch)
        return seconds_per_call * 1e9;
    if (s->prim == MPCE_PRIM_PRG)
        return 16.0 * units(s) / seconds_per_call / 1e9;
    return seconds_per_call * 1e9 / units(s);
}

mpce_status mpce_bench_param(const mpce_bench_case *c, const char *key, uint64_t *value)
{
    if (!c || !c->internal || !key || !value)
        return mpce_error(MPCE_ERR_ARG, "mpce_bench_param: NULL argument");
    const struct mpce_bench_shape *s = c->internal;
    size_t oi = 0;
    while (oi < N_OPS && strcmp(ops[oi].op, s->op) != 0)
        oi++;
    if (oi == N_OPS)
        return unknown_op(s->op);
    for (const struct key *k = ops[oi].keys; k->name; k++)
        if (strcmp(k->name, key) == 0) {
            *value = *(const uint64_t *)((const char *)s + k->offset);
            return MPCE_OK;
        }
    return mpce_error(MPCE_ERR_ARG, "mpce_bench_param: %s has no key '%.40s'", s->op, key);
}
