/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The measured sweep of mpcengine bench --plot, shared by the file that
 * records it (bench_sweep.c) and the one that draws it (bench_svg.c); to
 * everyone else struct mpce_bench_plot is opaque (bench.h).
 */
#ifndef MPCE_TOOLS_BENCH_SWEEP_H
#define MPCE_TOOLS_BENCH_SWEEP_H

#include <stddef.h>
#include <stdint.h>

/* One candidate of one point. The measured ones of a point have distinct
 * names: only threads= and prg.dispatch rows, which the sweep has none of,
 * time one implementation twice. */
struct mpce_bench_plot_cand {
    char impl[96];
    int reference;  /* a peer or an AES floor: not something "auto" can pick */
    int skipped;
    double y;       /* ns per plotted unit (per block for the PRG) */
    char note[256];
};

/* One point: one row of the harness. */
struct mpce_bench_plot_point {
    char op[24], shape[128];
    char panel[80];           /* its panel: the op, and the variant the selector
                                 routes apart ("ntt.forward, q < 2^50") */
    uint64_t x;               /* work elements */
    int prg;                  /* y is time per block, not the row's GB/s */
    char unit[16];            /* the row's unit */
    char auto_impl[96];       /* "" when it could not be resolved */
    char auto_why[256];
    char error[256];          /* the row as a whole was not measured */
    struct mpce_bench_plot_cand *cand;
    size_t n, cap;
};

struct mpce_bench_plot {
    struct mpce_bench_plot_point *point;  /* in the sweep's order */
    size_t n;
    unsigned rounds, windows;             /* the timing every row had */
    double window_s;
};

#endif
