/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The benchmark harness behind mpce_bench_run (tools/bench/bench_public.h):
 * part of the mpcengine command, linked with the internal core
 * (engine/libmpce_core.la) so that it can time implementations through their
 * op tables. Not installed.
 *
 *   bench.c          the driver: rows, candidates, baselines, results
 *   bench_measure.c  interleaved rounds of timed windows, statistics
 *   bench_shape.c    shape strings, the default rows, units
 *   bench_fixture.c  the shared inputs and outputs of a row (setup, untimed)
 *   bench_impl.c     candidates that call an implementation's op table
 *   bench_api.c      candidates that call the public API (thread scaling,
 *                    dispatch overhead), and what "auto" resolves to
 *   bench_peers.c    the built-in OpenSSL EVP peers
 *   bench_sweep.c    mpcengine bench --plot: the sweep of shapes and what
 *                    it measured (bench_sweep.h: its data, private)
 *   bench_svg.c      mpcengine bench --plot: the sweep drawn as an SVG
 */
#ifndef MPCE_TOOLS_BENCH_H
#define MPCE_TOOLS_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/internal.h"
#include "tools/bench/bench_public.h"

/* ---- shapes (bench_shape.c) ----------------------------------------------- */

/* q = 2^61 - 2^21 + 1 (SPEC.md's example) and the NTT-friendly 60-bit prime
 * q = 2^60 - 2^18 + 1 that NTL accepts (it caps moduli at 60 bits). */
#define MPCE_BENCH_Q61 UINT64_C(0x1fffffffffe00001)
#define MPCE_BENCH_Q60 UINT64_C(0x0ffffffffffc0001)
/* A prime below 2^50 with 2^17 | q - 1: the moduli AVX-512 IFMA serves. */
#define MPCE_BENCH_Q50 UINT64_C(0x3ffffffd20001)

struct mpce_bench_shape {
    char op[24];
    char text[128];
    mpce_primitive prim;
    int dispatch;       /* prg.dispatch: the public API's overhead */
    uint64_t n, m, N, B, logk, chunk, bits, keys, threads, q;
    uint64_t transform; /* ntt.dispatch's op=: MPCE_BENCH_NTT_FORWARD, ... */
    uint64_t inplace;   /* ntt.dispatch's inplace=: MPCE_BENCH_INPLACE_* */
};

enum { MPCE_BENCH_NTT_FORWARD, MPCE_BENCH_NTT_INVERSE, MPCE_BENCH_NTT_MUL };
/* Out of place, or in place (out is the first input) on a context whose
 * refusal mode is MPCE_NTT_REFUSAL_KEEP or _ZERO. */
enum { MPCE_BENCH_OUT_OF_PLACE, MPCE_BENCH_INPLACE_KEEP, MPCE_BENCH_INPLACE_ZERO };

/* Parse and range-check `shape` for `op`; MPCE_ERR_ARG naming the key or the
 * op (with what is accepted) otherwise. */
mpce_status mpce_bench_shape_parse(const char *op, const char *shape,
                                   struct mpce_bench_shape *out);

/* Work units of one call and how a time per call becomes the row's rate:
 * GB/s for the PRG (bytes written), ns per call for prg.dispatch, else
 * nanoseconds per unit. */
const char *mpce_bench_unit(const struct mpce_bench_shape *s);
double mpce_bench_rate(const struct mpce_bench_shape *s, double seconds_per_call);

size_t mpce_bench_default_count(void);
/* Whether op is a benchmark op (else MPCE_ERR_ARG listing the ops). */
mpce_status mpce_bench_op_check(const char *op);

/* The engine op a shape's direct candidates call: "prg.ecb" for prg.dispatch,
 * ntt.dispatch's op= (ntt.forward unless given), else the shape's own op. */
const char *mpce_bench_engine_op(const struct mpce_bench_shape *s);

/* ---- measurement (bench_measure.c) ---------------------------------------- */

/* One competitor in a row. run performs one op call of the row's shape and
 * returns 0, or a status with mpce_last_error() explaining it. */
struct mpce_bench_cand {
    char name[192];
    char note[200];
    char shape[128];    /* "" for the row's shape */
    int (*run)(void *state);
    void (*teardown)(void *state);
    void *state;
    int baseline;       /* index of this candidate's baseline, -1: none */
    int own_baseline;   /* compared with baseline even in a row that has one */
    int failed;         /* dropped: why holds the reason */
    char why[256];
    double *samples;    /* one per round */
    double median, min, max;
};

struct mpce_bench_timing {
    unsigned rounds;
    unsigned windows;
    double window_s;
    /* Optional: called before any call of a candidate that follows a call
     * of another one, so that a supervisor can tell which candidate a
     * crash or hang belongs to (the probe helper). */
    void (*on_enter)(void *arg, const struct mpce_bench_cand *c);
    void *on_enter_arg;
};

/* The "model name" of /proc/cpuinfo, or "unknown CPU": every figure is
 * printed with the CPU it was measured on. */
void mpce_bench_cpu_model(char *buf, size_t len);

/* CLOCK_MONOTONIC in seconds. */
double mpce_bench_now(void);

/* Median (mean of the middle two for an even count), min and max of n > 0
 * samples; the samples are not reordered. */
void mpce_bench_stats(const double *samples, size_t n, double *median, double *min,
                      double *max);

/*
 * Time every candidate not already failed: one untimed warm-up call, then
 * batches of calls, growing until a batch is long enough that the clock's
 * own cost is noise, size the windows; then `rounds` rounds visiting the
 * candidates in order (A, B, A, B, ...); in a round a candidate runs
 * `windows` windows of repeated calls, each at least about window_s long,
 * and keeps the fastest time per call. A candidate whose call fails is
 * marked failed and dropped. MPCE_ERR_NOMEM only.
 */
mpce_status mpce_bench_measure(struct mpce_bench_cand *c, size_t n,
                               const struct mpce_bench_timing *t);

/* The thread's error detail emptied (mpce_last_error() then reads ""), so
 * that a failure's detail is never a stale one. */
static inline void mpce_bench_error_clear(void)
{
    (void)mpce_error(MPCE_OK, "%s", "");
}

/* ---- a row's shared buffers (bench_fixture.c) ------------------------------ */

struct mpce_bench_fixture {
    uint8_t keys[8 * 16];    /* PRG keys; DPF kL, kR are keys[0..31] */
    uint8_t *in, *out;       /* PRG input and output, NTT input and output */
    uint8_t *in2;            /* ntt.mul: the second operand */
    size_t in_len, out_len;
    uint64_t psi;            /* NTT: the root for q */
    uint8_t seed[16];        /* LPN */
    uint8_t *table;          /* LPN: 2^logk blocks */
    uint8_t *floor_buf;      /* DPF: the AES floor's blocks (in place) */
    uint64_t floor_blocks;
    struct mpce_dpf_key_v1 *dkeys;   /* DPF: distinct keys, made by the first
                                        candidate's gen */
    size_t n_dkeys;
    const struct mpce_dpf_key_v1 **dkey_ptrs; /* eval_keys: keys cycled */
    struct mpce_dpf_batch_v1 dbatch;  /* eval_batch: the same keys level-major */
    void *dbatch_mem;
    uint64_t *points;        /* eval_keys: one point per key */
    uint64_t chain_mask;     /* dpf.eval: 0, which no compiler may assume */
};

/* dpf.eval: the first point made to depend on the previous call's output
 * (ANDed with chain_mask), so that calls back to back time a lookup's
 * latency instead of overlapping in the out-of-order core. */
void mpce_bench_chain_point(struct mpce_bench_fixture *f);

/* Inputs from splitmix64 (SPEC.md section 5), outputs first-touched. */
mpce_status mpce_bench_fixture_new(const struct mpce_bench_shape *s,
                                   struct mpce_bench_fixture **out);
void mpce_bench_fixture_free(struct mpce_bench_fixture *f);

/* ---- candidate builders ---------------------------------------------------- */

/* Whether slot may be a candidate, by the rule "auto" uses
 * (mpce_registry_usable): not skipped, allowed by policy, self-tested (now,
 * if it was not yet) and passed. Otherwise 0 with the reason in why. */
int mpce_bench_slot_usable(mpce_engine *e, struct mpce_slot *slot, char *why, size_t len);

/* An implementation's op through its op table (engine/ops.h), with its own
 * ctx_new state, called as the engine's front ends call it on host memory
 * (minus their argument checks); an MPCE_IMPL_ASYNC one with a completion
 * that each call waits for, so it is timed end to end. The name and note
 * are set; MPCE_ERR_NOIMPL ("does not serve this shape: ...") when serves()
 * or ctx_new refuses the shape. */
mpce_status mpce_bench_impl_cand(const struct mpce_slot *slot, const struct mpce_bench_shape *s,
                                 struct mpce_bench_fixture *f, struct mpce_bench_cand *c);
/* The same with the implementation's knobs at knobs[] (one value per knob
 * it declares, engine/runtime/knobs.h), or their defaults for NULL; the
 * name is then "IMPL:KNOB=VALUE:...". */
mpce_status mpce_bench_impl_cand_knobs(const struct mpce_slot *slot,
                                       const struct mpce_bench_shape *s,
                                       struct mpce_bench_fixture *f, const uint32_t *knobs,
                                       struct mpce_bench_cand *c);

/* ---- a device implementation against a host one (bench_pair.c) ------------ */

/* The shape of op `text` (a selector row's) at `elements` work elements, by
 * its count (n, B, keys, or a DPF domain's bits): 0, or -1 when that size
 * is not one of its shapes (not a multiple of a polynomial's N, not a power
 * of two for a domain, out of range). */
int mpce_bench_shape_at(const char *op, const char *text, uint64_t elements,
                        struct mpce_bench_shape *out);
/* The harness op of a selector row key: "ntt.forward" for
 * "ntt.forward.q50.large", "dpf.eval_keys" for "dpf.eval_keys.large" (the
 * key up to its second dot). */
void mpce_bench_row_op(const char *row_key, char *op, size_t len);
/* The work elements of one unit of op `text`'s count: a polynomial's N,
 * mmo's m, else 1; 0 when its sizes are a DPF domain's powers of two (or
 * the text does not parse). A size of the shape is a multiple of it. */
uint64_t mpce_bench_count_unit(const char *op, const char *text);
/* The count of op `text` at `elements` work elements, as the shape's key
 * and what one unit of it is: "B=256 (polynomials of N=4096)", "n=65536
 * (seeds, m=2 keys each)", "keys=1048576 (keys, a point each)", "bits=20
 * (2^20 outputs a key)". 0, or -1 when that size is not one of its shapes
 * (or buf is too short). */
int mpce_bench_count_text(const char *op, const char *text, uint64_t elements, char *buf,
                          size_t len);
/* Where a crossover is sought in a size class, in work elements: from its
 * lower bound to its top (the largest power of two inside it; the large
 * class, which has none, four times its lower bound). */
void mpce_bench_class_span(unsigned size_class, uint64_t *lo, uint64_t *top);

struct mpce_bench_pair {
    double median[2], spread[2];     /* [0] the device's, [1] the host's */
    int wrong;                       /* the device's output differed from the host's */
    const struct mpce_slot *failed;  /* the one whose call failed, if one did */
    char why[512];
};

/* dev and host (knob values or NULL for the defaults) at shape s: outputs
 * compared once (the host's is the reference), then timed interleaved with
 * t. MPCE_OK with the medians and spreads, else a status with out->why. */
mpce_status mpce_bench_pair(const struct mpce_slot *dev, const uint32_t *dev_knobs,
                            const struct mpce_slot *host, const uint32_t *host_knobs,
                            const struct mpce_bench_shape *s, const struct mpce_bench_timing *t,
                            struct mpce_bench_pair *out);

/* dpf.eval's latency floor: the same PRG's one-block ECB called
 * floor_blocks times, each call on the one before's output (a point's levels
 * are a chain of dependent AES calls; each also pays the op table's call,
 * which a walk does not). */
mpce_status mpce_bench_chain_cand(const struct mpce_slot *prg, const struct mpce_bench_shape *s,
                                  struct mpce_bench_fixture *f, struct mpce_bench_cand *c);
/* The AES floor of a DPF row: the row's count of ECB blocks through `prg`. */
mpce_status mpce_bench_floor_cand(const struct mpce_slot *prg, const struct mpce_bench_shape *s,
                                  struct mpce_bench_fixture *f, struct mpce_bench_cand *c);

/* The op through the public API, one large call, on a private engine with
 * [engine] threads = threads, using implementation `impl` of `engine`'s
 * plugin path and policy. */
mpce_status mpce_bench_api_cand(mpce_engine *engine, const char *impl, unsigned threads,
                                const struct mpce_bench_shape *s, struct mpce_bench_fixture *f,
                                struct mpce_bench_cand *c);

/* A private engine like base (plugin directories, variable-time policy,
 * pins, plugin switches) with `threads` threads per call; the caller frees
 * it. */
mpce_status mpce_bench_private_engine(const mpce_engine *base, unsigned threads,
                                      mpce_engine **out);
/* The private engine of a candidate mpce_bench_api_cand made (the probe
 * helper forces it to split every call, to find where splitting pays). */
mpce_engine *mpce_bench_api_cand_engine(const struct mpce_bench_cand *c);

/* prg.dispatch's "api" candidate: mpce_prg_ecb(ctx, impl, 0, in, out, n) on
 * a context of a private engine configured like `engine` (impl NULL:
 * "auto"). *resolved receives the implementation the call runs
 * (mpce_prg_resolve), valid until the candidate's teardown. */
mpce_status mpce_bench_dispatch_cand(mpce_engine *engine, const char *impl,
                                     const struct mpce_bench_shape *s,
                                     struct mpce_bench_fixture *f, struct mpce_bench_cand *c,
                                     const char **resolved);

/* What "auto" runs for a call of the shape's op on a context of `engine`
 * with the shape's parameters (the context's mpce_*_resolve: pins,
 * priorities, serves and ctx_new refusals included). */
mpce_status mpce_bench_auto_impl(mpce_engine *engine, const struct mpce_bench_shape *s,
                                 const struct mpce_bench_fixture *f, char *name, size_t len);

/* A peer's candidate: 0, or non-zero if it does not serve the case. */
int mpce_bench_peer_cand(const mpce_bench_peer *p, const struct mpce_bench_shape *s,
                         struct mpce_bench_cand *c);

/* The built-in peers (OpenSSL EVP). */
const mpce_bench_peer *mpce_bench_builtin_peers(size_t *count);

/* ---- the crossover plot: bench --plot (bench_sweep.c, bench_svg.c) ------- */

/* Work elements of one call of the shape, as the engine's size classes count
 * them (tiny < 64, small < 4096, medium < 262144, large): blocks (keys * seeds
 * for prg.mmo), polynomial words N*B, outputs per call, leaves 2^bits
 * (dpf.evalall) or keys. */
uint64_t mpce_bench_work_elements(const struct mpce_bench_shape *s);

/* Sweep point `index` (0..), in the order mpce_bench_sweep runs them (5 to
 * 7 per op, tiny to large); MPCE_ERR_ARG past the end. */
mpce_status mpce_bench_sweep_point(size_t index, const char **op, const char **shape);

/* The sweep's timing where opts leave it 0: quicker than a plain row's. */
#define MPCE_BENCH_SWEEP_ROUNDS 5u
#define MPCE_BENCH_SWEEP_WINDOWS 2u
#define MPCE_BENCH_SWEEP_WINDOW_S 0.005

/* The measured sweep (opaque). */
struct mpce_bench_plot;

/*
 * Run the sweep points of opts->op (NULL: of every op with a sweep; not
 * prg.dispatch), each as one ordinary row of mpce_bench_run with opts'
 * implementation filter, peers and timing, and record per point every
 * candidate's time and what "auto" resolves to (mpce_bench_auto_impl).
 * Every row goes to fn as it comes, as mpce_bench_run's do; opts->start is
 * called once, with the number of points, after every option was checked.
 * opts->shape must be NULL. With opts->impl, ops it has no candidate in are
 * left out. A point whose row fails is reported to fn as a skipped row and
 * left out of the plot. *out is freed with mpce_bench_plot_free.
 */
mpce_status mpce_bench_sweep(mpce_engine *engine, const mpce_bench_options *opts,
                             mpce_bench_row_fn fn, void *arg, struct mpce_bench_plot **out);

/* The sweep as one SVG document: a panel per op, time per unit (per block
 * for the PRG) against work elements, both on log scales, a line per
 * implementation, the size classes, "auto"'s choice per point and the
 * crossovers of the fastest implementation. 0, or -1 on a write error. */
int mpce_bench_plot_svg(const struct mpce_bench_plot *p, FILE *fp);
void mpce_bench_plot_free(struct mpce_bench_plot *p);

#endif
