/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpcengine pins --verify: each current row's winner against a fresh
 * side-by-side run of every implementation at the row's shape (the rows
 * `mpcengine bench` prints). A winner that is not the fastest there, by
 * more than that run's noise (its spread across rounds, and at least 1 %),
 * is reported: the pins are stale in a way no signature shows (a noisy
 * tune, a machine under other load then), and `mpcengine tune --force`
 * measures again.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/selector/pins.h"
#include "engine/selector/selector.h"
#include "tools/bench/bench_public.h"
#include "tools/cli.h"
#include "tools/cli_engine.h"

/* The fastest implementation of a row and the winner's figures. */
struct verify_row {
    mpce_engine *e;
    const char *winner;
    char fastest[96];
    double fastest_s, winner_s, winner_noise;
};

static int take_row(const mpce_bench_row *row, void *arg)
{
    struct verify_row *v = arg;
    /* Implementations only: peers and AES floors are not "auto"'s to pick. */
    if (row->skipped || mpce_registry_find(v->e, row->impl) == NULL)
        return 0;
    if (!v->fastest[0] || row->median_s < v->fastest_s) {
        snprintf(v->fastest, sizeof(v->fastest), "%s", row->impl);
        v->fastest_s = row->median_s;
    }
    if (strcmp(row->impl, v->winner) == 0) {
        v->winner_s = row->median_s;
        v->winner_noise = row->median_s > 0 ? (row->max_s - row->min_s) / row->median_s : 0;
    }
    return 0;
}

int cli_pins_verify(mpce_engine *e, const struct mpce_pins *p, const char *path)
{
    size_t checked = 0, off = 0;
    char cpu[512];
    mpce_signature_cpu(cpu, sizeof(cpu));
    printf("verifying %s against a side-by-side run at each row's shape (%s)\n", path, cpu);
    for (size_t i = 0; i < p->n_rows; i++) {
        const struct mpce_pins_row *row = &p->rows[i];
        char why[512], op[64];
        if (!row->winner[0] || !mpce_selector_row_current(e, p, row, why, sizeof(why)))
            continue;
        snprintf(op, sizeof(op), "%s", row->key);
        char *dot = strchr(op, '.');
        dot = dot ? strchr(dot + 1, '.') : NULL;
        if (dot)
            *dot = '\0';
        struct verify_row v = {.e = e, .winner = row->winner};
        mpce_bench_options o = {.struct_size = sizeof(o), .op = op, .shape = row->shape,
                                .rounds = 7, .windows = 3, .window_s = 0.002};
        if (mpce_bench_run(e, &o, take_row, &v) != MPCE_OK || !v.fastest[0] || !v.winner_s) {
            char detail[1024];
            printf("  %-28s not run: %s\n", row->key,
                   cli_engine_detail(cli_last_error_or("the winner did not run"), detail,
                                     sizeof(detail)));
            continue;
        }
        checked++;
        double gap = v.winner_s / v.fastest_s - 1.0;
        double noise = v.winner_noise > 0.01 ? v.winner_noise : 0.01;
        const char *verdict = strcmp(v.fastest, row->winner) == 0 ? "fastest"
                              : gap <= noise                     ? "within the run's noise"
                                                                 : "NOT the fastest";
        off += gap > noise && strcmp(v.fastest, row->winner) != 0;
        printf("  %-28s pinned %-22s fastest %-22s gap %5.1f %%  noise %4.1f %%  %s\n",
               row->key, row->winner, v.fastest, 100.0 * gap, 100.0 * v.winner_noise, verdict);
    }
    printf("%zu rows checked, %zu not the fastest beyond the noise%s\n", checked, off,
           off ? ": `mpcengine tune --force` measures them again" : "");
    return off ? CLI_EXIT_ENGINE : CLI_EXIT_OK;
}
