/* SPDX-License-Identifier: Apache-2.0 */
/* mpcengine bench: the side-by-side figures of tools/bench/bench_public.h,
 * as a table for people or JSON for machines. The first line comes at once,
 * and every row as soon as it is measured, also through a pipe. With
 * --plot, a sweep of shapes per op (tools/bench/bench_sweep.c, drawn by bench_svg.c) and its SVG. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpcengine.h"
#include "tools/bench/bench.h"
#include "tools/bench/bench_public.h"
#include "tools/cli.h"
#include "tools/cli_args.h"
#include "tools/cli_engine.h"
#include "tools/cli_io.h"
#ifdef HAVE_NTL
#include "tools/bench/bench_ntl.h"
#endif

const char cli_usage_bench[] =
    "usage: mpcengine bench [--op OP [--shape S]] [--json] [--rounds N] [--impl NAME]\n"
    "                       [--window-ms MS] [--plot FILE.svg] [--plugin-path DIRS]\n"
    "                       [--config FILE]\n"
    "  Every implementation of an op at a named shape, measured side by side in\n"
    "  one run (interleaved rounds; median and min-max across rounds) against a\n"
    "  baseline: OpenSSL EVP for the PRG, ntt-soft or NTL for the NTT, lpn-soft,\n"
    "  and for the DPF the same plugin's AES on as many blocks (aes-floor:PRG).\n"
    "  Without --op, every default row; --op alone, that op's default rows.\n"
    "  Ops and shapes (add ,threads=T to time one large public-API call with\n"
    "  [engine] threads = T against threads = 1):\n"
    "    prg.ecb n=1048576               prg.mmo m=2,n=65536\n"
    "    prg.ctr n=1048576               ntt.forward|ntt.inverse|ntt.mul\n"
    "                                      N=4096,B=64,q=61bit|60bit|50bit (50bit: what\n"
    "                                      IFMA serves)\n"
    "    prg.dispatch n=1                the public API's overhead per call: mpce_prg_ecb\n"
    "                                    (\"api\") against the op it runs, called through\n"
    "                                    the op table (\"direct\"); no threads=T\n"
    "    ntt.dispatch N=4096,B=64,q=61bit[,op=forward|inverse|mul][,inplace=keep|zero]\n"
    "                                    the same for an NTT call, one thread each;\n"
    "                                    inplace=: out is the input, on a context whose\n"
    "                                    refusal mode is keep (the engine checks first)\n"
    "                                    or zero (mpce_ntt_set_refusal: kernels that\n"
    "                                    check in place run unchecked, others are still\n"
    "                                    checked first)\n"
    "    lpn.fold logk=19,n=4194304,chunk=8192\n"
    "    dpf.evalall bits=20             dpf.eval_keys bits=20,keys=65536\n"
    "    dpf.eval_batch bits=20,keys=65536  the same keys as one mpce_dpf_keys batch\n"
    "    dpf.eval bits=20,points=1       one key at P points; with P = 1 a lookup's\n"
    "                                    latency, which its AES floor (as many blocks\n"
    "                                    in one call) understates: a point's levels\n"
    "                                    are a chain of dependent AES calls, timed\n"
    "                                    beside it as aes-chain:PRG. Each call's first\n"
    "                                    point waits on the call before's output, so\n"
    "                                    that calls cannot overlap\n"
    "  --op OP            one op (with --shape: exactly one row)\n"
    "  --shape S          the shape, key=value,... as above\n"
    "  --json             a JSON array of rows: op, impl, shape, median_s, min_s,\n"
    "                     max_s, unit_rate, unit, and baseline and ratio (baseline\n"
    "                     time / this time) where a baseline was measured, note\n"
    "                     where there is one; rows not measured go to stderr, as\n"
    "                     does the first line (rows and CPU)\n"
    "  --rounds N         rounds per row (default 7; 5 with --plot)\n"
    "  --window-ms MS     shortest timed window (default 20; 5 with --plot)\n"
    "  On a terminal, stderr shows which row is being measured; every row is\n"
    "  written (and flushed) as soon as it is measured, also into a pipe.\n"
    "  --plot FILE.svg    instead of the default rows, run every op (with --op, that\n"
    "                     one) over 5-7 shapes from tiny to large, print the rows as\n"
    "                     usual (on stderr when FILE.svg is '-', standard output),\n"
    "                     and write FILE.svg: per op, each implementation's\n"
    "                     time per unit against work elements, the size classes,\n"
    "                     what auto picks at each point and where the fastest\n"
    "                     implementation changes. 2 windows per round. Combines with\n"
    "                     --op, --impl, --json, --rounds, --window-ms; not --shape\n"
    CLI_COMMON_HELP;

#ifndef HAVE_NTL
static const mpce_bench_peer no_ntl[] = {
    {sizeof(mpce_bench_peer), "ntl", "ntt.forward", "NTL not built (configure --with-ntl; Debian: libntl-dev)",
     NULL, NULL, NULL, NULL},
    {sizeof(mpce_bench_peer), "ntl", "ntt.inverse", "NTL not built (configure --with-ntl; Debian: libntl-dev)",
     NULL, NULL, NULL, NULL},
};
#endif

struct out {
    int json;
    int rows;
    int started;
    const char *plot; /* --plot FILE, for the first line */
    FILE *fp;         /* where rows go: stdout, or stderr when the SVG takes it */
    int progress;     /* stderr is a terminal: show what is being measured */
    int shown;        /* the width of the progress line on the screen, 0: none */
};

/* Progress goes to a terminal only, and on one line it rewrites: a log or a
 * pipe would keep every step. */
static void progress_clear(struct out *o)
{
    if (o->shown > 0)
        fprintf(stderr, "\r%*s\r", o->shown, "");
    o->shown = 0;
    fflush(stderr);
}

static void on_row_start(size_t index, size_t rows, const char *op, const char *shape,
                         void *arg)
{
    struct out *o = arg;
    if (!o->progress)
        return;
    progress_clear(o);
    int n = fprintf(stderr, "bench: [%zu/%zu] %s %s...", index + 1, rows, op, shape);
    o->shown = n > 0 ? n : 0;
    fflush(stderr);
}

static const struct {
    double scale;
    const char *unit;
} time_units[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};

#define N_TIME_UNITS (sizeof(time_units) / sizeof(time_units[0]))

/* The unit a time reads best in: the largest that keeps it >= 1. */
static size_t time_unit(double s)
{
    size_t i = 0;
    while (i + 1 < N_TIME_UNITS && s < time_units[i].scale)
        i++;
    return i;
}

/* Three significant digits in unit u, without the unit. */
static void time_in(double s, size_t u, char *buf, size_t len)
{
    double v = s / time_units[u].scale;
    snprintf(buf, len, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
}

static void print_json_row(const mpce_bench_row *r, struct out *o)
{
    if (r->skipped) {
        fprintf(stderr, "mpcengine bench: note: %s %s: %s: %s\n", r->op, r->shape, r->impl,
                r->note);
        return;
    }
    const char *const names[] = {"op", r->op, "impl", r->impl, "shape", r->shape};
    fprintf(o->fp, "%s\n  {", o->rows++ ? "," : "");
    cli_json_fields_to(o->fp, names, 3);
    fprintf(o->fp, ", \"median_s\": %.9g, \"min_s\": %.9g, \"max_s\": %.9g, \"unit_rate\": %.6g, "
            "\"unit\": ",
            r->median_s, r->min_s, r->max_s, r->unit_rate);
    cli_json_string_to(o->fp, r->unit);
    if (r->baseline) {
        fprintf(o->fp, ", \"baseline\": ");
        cli_json_string_to(o->fp, r->baseline);
        fprintf(o->fp, ", \"ratio\": %.4f", r->ratio);
    }
    if (r->note && r->note[0]) {
        fprintf(o->fp, ", \"note\": ");
        cli_json_string_to(o->fp, r->note);
    }
    fputc('}', o->fp);
}

static void print_table_row(const mpce_bench_row *r, struct out *o)
{
    o->rows++;
    if (r->skipped) {
        fprintf(o->fp, "%-13s  %-30s  %-32s  %9s  %-15s  %10s  %-9s  skipped: %s\n", r->op,
                r->shape, r->impl, "-", "-", "-", "", r->note);
        return;
    }
    char med[32], lo[32], hi[32], spread[80], vs[160];
    size_t u = time_unit(r->median_s);
    time_in(r->median_s, u, med, sizeof(med));
    time_in(r->min_s, u, lo, sizeof(lo));
    time_in(r->max_s, u, hi, sizeof(hi));
    snprintf(spread, sizeof(spread), "%s-%s", lo, hi);
    if (r->baseline)
        snprintf(vs, sizeof(vs), "%.2fx %s", r->ratio, r->baseline);
    else
        snprintf(vs, sizeof(vs), "-");
    char rate[32];
    double v = r->unit_rate;
    snprintf(rate, sizeof(rate), v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : v >= 1 ? "%.2f" : "%.3f",
             v);
    fprintf(o->fp, "%-13s  %-30s  %-32s  %6s %-2s  %-15s  %10s  %-9s  %s%s%s\n", r->op,
            r->shape, r->impl, med, time_units[u].unit, spread, rate, r->unit, vs,
            r->note && r->note[0] ? "  # " : "", r->note ? r->note : "");
}

/* Once the options are checked, before the first row is measured (which may
 * take a while): what is coming, and on which CPU. JSON keeps stdout a JSON
 * array, so its first line goes to stderr. */
static void on_start(size_t rows, void *arg)
{
    struct out *o = arg;
    char cpu[256];
    mpce_bench_cpu_model(cpu, sizeof(cpu));
    o->started = 1;
    FILE *first = o->json ? stderr : o->fp;
    fprintf(first, "bench: %zu row%s, CPU %s%s%s\n", rows, rows == 1 ? "" : "s", cpu,
            o->plot ? "; sweep for --plot " : "", o->plot ? o->plot : "");
    if (o->json) {
        fprintf(o->fp, "[");
    } else {
        fprintf(o->fp, "%-13s  %-30s  %-32s  %9s  %-15s  %10s  %-9s  %s\n", "OP", "SHAPE",
                "IMPL", "MEDIAN", "MIN-MAX", "RATE", "UNIT", "VS BASELINE");
    }
    fflush(o->fp);
}

static int on_row(const mpce_bench_row *r, void *arg)
{
    struct out *o = arg;
    /* The row takes the progress line's place on the screen; the next
     * row_start draws it again. */
    progress_clear(o);
    if (o->json)
        print_json_row(r, o);
    else
        print_table_row(r, o);
    /* Each row as it is measured, also through a pipe: a run takes minutes. */
    fflush(o->fp);
    return ferror(o->fp) ? 1 : 0;
}

/* The --plot file, opened before anything is measured so that a path that
 * cannot be written is refused at once. Its old contents stay until the SVG
 * replaces them; a file made here goes again if there is nothing to write. */
struct plot_file {
    const char *path;
    int fd;
    int created;
};

static int plot_open(const struct cli_cmd *cmd, struct plot_file *pf)
{
    if (cli_is_std(pf->path))
        return 0; /* written to stdout at the end, the rows going to stderr */
    pf->fd = open(pf->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    pf->created = pf->fd >= 0;
    if (pf->fd < 0 && errno == EEXIST)
        pf->fd = open(pf->path, O_WRONLY | O_CLOEXEC);
    if (pf->fd < 0)
        return cli_fail(cmd, CLI_EXIT_ENGINE, "--plot: cannot write '%s': %s", pf->path,
                        strerror(errno));
    return 0;
}

static void plot_drop(struct plot_file *pf)
{
    if (pf->fd < 0)
        return;
    close(pf->fd);
    pf->fd = -1;
    if (pf->created)
        unlink(pf->path);
}

static int plot_write(const struct cli_cmd *cmd, struct plot_file *pf,
                      const struct mpce_bench_plot *plot)
{
    if (cli_is_std(pf->path)) {
        if (mpce_bench_plot_svg(plot, stdout) != 0 || fflush(stdout) != 0)
            return cli_fail(cmd, CLI_EXIT_ENGINE, "--plot -: cannot write to standard "
                            "output: %s", strerror(errno));
        return 0;
    }
    struct stat st;
    FILE *fp = NULL;
    int ok = fstat(pf->fd, &st) == 0 && (!S_ISREG(st.st_mode) || ftruncate(pf->fd, 0) == 0) &&
             (fp = fdopen(pf->fd, "w")) != NULL;
    int err = errno;
    if (fp) {
        pf->fd = -1; /* fclose closes it */
        ok = mpce_bench_plot_svg(plot, fp) == 0;
        err = errno;
        if (fclose(fp) != 0 && ok) {
            ok = 0;
            err = errno;
        }
    }
    if (ok)
        return 0;
    if (pf->fd >= 0)
        close(pf->fd);
    pf->fd = -1;
    if (pf->created)
        unlink(pf->path);
    return cli_fail(cmd, CLI_EXIT_ENGINE, "--plot: cannot write '%s': %s", pf->path,
                    strerror(err));
}

int cmd_bench(int argc, char **argv)
{
    struct cli_opt opts[] = {{"op", CLI_ARG, NULL},          {"shape", CLI_ARG, NULL},
                             {"json", 0, NULL},              {"rounds", CLI_ARG, NULL},
                             {"window-ms", CLI_ARG, NULL},
                             {"plot", CLI_ARG | CLI_OUT | CLI_TEXT, NULL},
                             CLI_COMMON_OPTS};
    const struct cli_cmd cmd = {"mpcengine bench", cli_usage_bench, opts};
    uint64_t rounds = 0, window_ms = 0; /* 0: the harness's defaults */
    /* Rows take seconds each: show each line as it comes, also when stdout
     * is a pipe or a file (before anything is written to it). */
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return cli_parse_exit(rc);
    if ((rc = cli_u64(&cmd, "rounds", 1, 64, &rounds)) != 0 ||
        (rc = cli_u64(&cmd, "window-ms", 1, 10000, &window_ms)) != 0)
        return rc;
    struct plot_file pf = {cli_value(&cmd, "plot"), -1, 0};
    if (pf.path && cli_value(&cmd, "shape"))
        return cli_fail(&cmd, CLI_EXIT_USAGE, "--plot runs its own sweep of shapes, so it does "
                        "not take --shape; it combines with --op, --impl, --json, --rounds "
                        "and --window-ms");
    if (pf.path && (rc = plot_open(&cmd, &pf)) != 0)
        return rc;

    mpce_bench_options bo;
    memset(&bo, 0, sizeof(bo));
    bo.struct_size = sizeof(bo);
    bo.op = cli_value(&cmd, "op");
    bo.shape = cli_value(&cmd, "shape");
    bo.impl = cli_impl(&cmd);
    bo.rounds = (unsigned)rounds;
    bo.window_s = (double)window_ms / 1000.0; /* 0 when absent */
#ifdef HAVE_NTL
    bo.peers = bench_ntl_peers(&bo.n_peers);
#else
    bo.peers = no_ntl;
    bo.n_peers = sizeof(no_ntl) / sizeof(no_ntl[0]);
#endif

    if ((rc = cli_engine_start(&cmd)) != 0) {
        plot_drop(&pf);
        return rc;
    }
    /* With --plot -, the SVG is stdout's and the rows go to stderr. */
    struct out o = {cli_value(&cmd, "json") != NULL, 0, 0, pf.path,
                    cli_is_std(pf.path) ? stderr : stdout, isatty(STDERR_FILENO), 0};
    bo.start = on_start;
    bo.row_start = on_row_start;
    struct mpce_bench_plot *plot = NULL;
    mpce_status st = pf.path ? mpce_bench_sweep(NULL, &bo, on_row, &o, &plot)
                             : mpce_bench_run(NULL, &bo, on_row, &o);
    /* Nothing of it is left on the screen when the run is over. */
    progress_clear(&o);
    /* Refused before any row: nothing on stdout, only the message. */
    if (o.json && o.started)
        fprintf(o.fp, "%s]\n", o.rows ? "\n" : "");
    fflush(o.fp);
    if (st != MPCE_OK) {
        rc = cli_engine_fail(&cmd, st);
        if (st == MPCE_ERR_ARG)
            rc = CLI_EXIT_USAGE;
    } else if (ferror(stdout)) {
        rc = cli_fail(&cmd, CLI_EXIT_ENGINE, "cannot write the results to stdout");
    } else if (plot && (rc = plot_write(&cmd, &pf, plot)) == 0 && !cli_is_std(pf.path)) {
        fprintf(o.json ? stderr : stdout, "bench: plot written to %s\n", pf.path);
    }
    plot_drop(&pf);
    mpce_bench_plot_free(plot);
    return rc;
}
