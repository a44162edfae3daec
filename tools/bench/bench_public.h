/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmarks: every implementation of an op at a named shape, measured side
 * by side in one run against a named baseline (what `mpcengine bench` prints).
 * The harness is part of the mpcengine command (tools/bench/libmpce_bench.la,
 * linked with the internal core), not of libmpcengine.so: nothing here is
 * exported or installed.
 *
 * A row is one (op, shape): its candidates are every implementation of the
 * op's primitive that passed its self-test and that policy allows, its op
 * called through the engine's normalized op table exactly as the engine's
 * front ends call it (never through libffi), plus peers (OpenSSL EVP built
 * in; others such as NTL registered by the caller). Asynchronous
 * implementations (MPCE_IMPL_ASYNC, whose ops complete later) are not timed
 * directly: their rows say so, and the public-API rows measure them.
 * Candidates are measured in rounds, interleaved A, B, A, B, ... so that a
 * noisy machine slows them alike: in a round each candidate runs a few
 * windows of repeated calls (each window at least window_s long, batches of
 * many calls so the clock's own cost does not count) and keeps the fastest;
 * the row reports the median of the rounds and their min and max. Setup
 * (keys, tables, twiddles, buffers, first touch, one warm-up call) is never
 * timed.
 *
 * Ops and shapes (keys in any order; every listed key is required unless
 * marked optional):
 *   prg.ecb        n=BLOCKS                      baseline openssl-evp-aes-128-ecb
 *   prg.mmo        m=KEYS,n=SEEDS                baseline openssl-evp-aes-128-ecb
 *                                                (ECB over the same m*n blocks)
 *   prg.ctr        n=BLOCKS                      baseline openssl-evp-aes-128-ctr
 *   prg.dispatch   n=BLOCKS (small: 1..65536)    the public API's dispatch overhead:
 *                                                candidate "api" is mpce_prg_ecb(ctx,
 *                                                "auto", ...) on a private engine like
 *                                                the caller's; its baseline "direct" is
 *                                                the ecb op of the implementation "auto"
 *                                                resolves to (mpce_prg_resolve), called
 *                                                through its op table on the same
 *                                                buffers. Unit ns/call; the api row's
 *                                                note gives the overhead in ns per call
 *                                                and the implementation. With an
 *                                                implementation named (opts.impl), that
 *                                                one instead of "auto".
 *   ntt.forward    N=DEGREE,B=BATCH,q=61bit|60bit|50bit
 *   ntt.inverse    (same)                        baseline ntt-soft (61bit, 50bit) or
 *                                                the peer "ntl" (60bit: NTL caps
 *                                                moduli at 60 bits, so both sides use
 *                                                q = 2^60 - 2^18 + 1); 50bit is
 *                                                q = 1125899903827969, below IFMA's 2^50
 *   ntt.mul        (same)                        baseline ntt-soft
 *   lpn.fold       logk=LOGK,n=OUTPUTS,chunk=OUTPUTS_PER_CALL (chunk optional,
 *                                                default n)   baseline lpn-soft
 *   dpf.evalall    bits=N                        baseline "aes-floor:PRG": 2^(N+1)
 *   dpf.eval_keys  bits=N,keys=K                 (resp. N*K) ECB blocks through the
 *                                                same plugin's best PRG
 *   dpf.eval_batch bits=N,keys=K                 eval_keys's keys as one level-major
 *                                                batch (mpce_dpf_keys); same floor
 *   Any shape but prg.dispatch's may add threads=T (T >= 2): the op then runs
 *   through the public API, one large call, on private engines with
 *   [engine] threads = 1 and = T; the threads=T row's baseline is the same
 *   implementation at threads=1.
 */
#ifndef MPCE_TOOLS_BENCH_PUBLIC_H
#define MPCE_TOOLS_BENCH_PUBLIC_H

#include "mpcengine/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a peer is asked to run: one op call of the row's shape. */
typedef struct mpce_bench_case {
    const char *op;       /* "ntt.forward" */
    const char *shape;    /* "N=4096,B=64,q=60bit" */
    const void *internal; /* the parsed shape; read it with mpce_bench_param */
} mpce_bench_case;

/*
 * A shape parameter by its key ("n", "m", "N", "B", "logk", "chunk", "bits",
 * "keys", "threads"), or "q" for the NTT modulus itself (not its label).
 * MPCE_OK, or MPCE_ERR_ARG if the op has no such key.
 */
mpce_status mpce_bench_param(const mpce_bench_case *c, const char *key, uint64_t *value);

/*
 * A competitor that is not an engine implementation. setup returns 0 with
 * *state ready for one case, or non-zero when the peer does not serve the
 * case (then it is left out without a message). run performs one op call of
 * the case, the same work the engine's candidates do, and returns 0.
 * A peer with run == NULL is registered as unavailable: rows that would use
 * it say so with its note (e.g. "NTL not built (configure --with-ntl; Debian: libntl-dev)").
 */
typedef struct mpce_bench_peer {
    size_t struct_size; /* sizeof(mpce_bench_peer) */
    const char *name;   /* shown as the row's impl, e.g. "ntl" */
    const char *op;     /* the op it competes in */
    const char *note;   /* shown on its rows; may be NULL */
    int (*setup)(const mpce_bench_case *c, void *arg, void **state);
    int (*run)(void *state);
    void (*teardown)(void *state);
    void *arg;
} mpce_bench_peer;

/* Zero-initialise, set struct_size, then what you need. */
typedef struct mpce_bench_options {
    size_t struct_size;       /* sizeof(mpce_bench_options) */
    const char *op;           /* NULL: every default row; else only this op */
    const char *shape;        /* NULL: the op's default shapes; else exactly this
                                 shape (with op NULL: the default rows of this shape) */
    const char *impl;         /* NULL: every candidate; else this one (baselines
                                 still run so the ratio can be given) */
    unsigned rounds;          /* 0: 7 */
    unsigned windows;         /* per candidate and round; 0: 3 */
    double window_s;          /* shortest window; 0: 0.02 */
    const mpce_bench_peer *peers; /* extra peers, e.g. NTL */
    size_t n_peers;
    /* Optional: called once every option and shape has been checked, before
     * the first row is measured, with the number of rows selected and the
     * run's arg (the command prints its first line here). */
    void (*start)(size_t rows, void *arg);
    /* Optional: called before each row is measured (a sweep's point, with
     * mpce_bench_sweep), with its index (0..rows-1), the number of rows and
     * the row's op and shape: what the command's progress line shows while
     * the row takes its seconds. */
    void (*row_start)(size_t index, size_t rows, const char *op, const char *shape, void *arg);
} mpce_bench_options;

/* One measured candidate of a row. Strings stay valid during the callback. */
typedef struct mpce_bench_row {
    const char *op;
    const char *impl;
    const char *shape;
    double median_s, min_s, max_s; /* seconds per op call across rounds */
    double unit_rate;              /* in `unit` */
    const char *unit;              /* "GB/s", "ns/NTT", "ns/output", "ns/key", "ns/call" */
    const char *baseline;          /* the baseline's impl name, NULL if none */
    double ratio;                  /* baseline median_s / this median_s; 0 if none */
    const char *note;              /* "" or a remark */
    int skipped;                   /* 1: not measured, the note says why (no
                                      times, no rate) */
} mpce_bench_row;

/* Called once per row, in order; a non-zero return stops the run. */
typedef int (*mpce_bench_row_fn)(const mpce_bench_row *row, void *arg);

/*
 * Run the rows opts selects (opts NULL: every default row). MPCE_ERR_ARG for
 * an unknown op or shape (the detail lists what is accepted) or if no
 * candidate matches --impl; MPCE_ERR_NOMEM if a shape's buffers cannot be
 * allocated. A candidate that fails is reported as a skipped row. engine
 * NULL: the global engine. mpce_last_error() holds the detail of a failure.
 */
mpce_status mpce_bench_run(mpce_engine *engine, const mpce_bench_options *opts,
                           mpce_bench_row_fn fn, void *arg);

/* Default row `index` (0..), in the order mpce_bench_run runs them;
 * MPCE_ERR_ARG past the end. */
mpce_status mpce_bench_default_row(size_t index, const char **op, const char **shape);

#ifdef __cplusplus
}
#endif
#endif
