/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The variance gate (DESIGN.md, after emp-ot's tuner): the priority default
 * keeps a row unless a challenger's median beats it by more than the
 * default's own spread across rounds (as ratios: probe_clears) and by at
 * least 1 %. On a noisy shared machine a lucky round would otherwise flip
 * pins back and forth.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tools/probe/probe.h"

static int is_ok(const struct mpce_pins_cand *c)
{
    return strcmp(c->status, "ok") == 0;
}

static const struct mpce_pins_cand *ok_cand(const struct mpce_pins_row *row, const char *name)
{
    for (size_t i = 0; i < row->n_cands; i++)
        if (strcmp(row->cands[i].impl, name) == 0 && is_ok(&row->cands[i]))
            return &row->cands[i];
    return NULL;
}

/* The fastest ok candidate other than `not`. */
static const struct mpce_pins_cand *fastest(const struct mpce_pins_row *row,
                                            const struct mpce_pins_cand *not)
{
    const struct mpce_pins_cand *best = NULL;
    for (size_t i = 0; i < row->n_cands; i++) {
        const struct mpce_pins_cand *c = &row->cands[i];
        if (c != not && is_ok(c) && (!best || c->median < best->median))
            best = c;
    }
    return best;
}

void probe_gate(struct mpce_pins_row *row, const char *const *order, size_t n_order,
                char *winner, char *runner_up, char *verdict, size_t len)
{
    winner[0] = runner_up[0] = '\0';
    const struct mpce_pins_cand *fast = fastest(row, NULL), *def = NULL;
    if (fast == NULL) {
        snprintf(verdict, len, "no candidate ran correctly: priority order");
        return;
    }
    for (size_t i = 0; i < n_order && !def; i++)
        def = ok_cand(row, order[i]);
    if (!def)
        def = fast; /* the default did not run here: the fastest stands in */
    const struct mpce_pins_cand *win = def, *next = fastest(row, def);
    const double spread = def->spread;
    size_t screened = 0;
    for (size_t i = 0; i < row->n_cands; i++)
        screened += strcmp(row->cands[i].status, "screened") == 0;
    if (next == NULL && screened) {
        snprintf(verdict, len, "%s is the only candidate left: %zu more %s over 3x behind it",
                 def->impl, screened, screened == 1 ? "was" : "were");
    } else if (next == NULL) {
        snprintf(verdict, len, "%s is the only candidate that ran correctly", def->impl);
    } else if (fast == def) {
        snprintf(verdict, len, "default %s is fastest; %s is %.1f %% slower", def->impl,
                 next->impl, 100.0 * (next->median / def->median - 1.0));
    } else {
        const double gain = 1.0 - fast->median / def->median;
        if (probe_clears(gain, spread)) {
            win = fast;
            snprintf(verdict, len, "%s beats default %s by %.1f %% (the default takes "
                     "%.2fx as long: more than 1 + its spread %.1f %%, and the gain is at "
                     "least 1 %%)", fast->impl, def->impl, 100.0 * gain,
                     def->median / fast->median, 100.0 * spread);
        } else {
            snprintf(verdict, len, "default %s kept: %s is faster by only %.1f %% (with the "
                     "default's spread of %.1f %% a challenger needs more than %.1f %%)",
                     def->impl, fast->impl, 100.0 * gain, 100.0 * spread,
                     100.0 * probe_needed_gain(spread));
        }
    }
    snprintf(winner, 64, "%s", win->impl);
    const struct mpce_pins_cand *ru = fastest(row, win);
    if (ru)
        snprintf(runner_up, 64, "%s", ru->impl);
}
