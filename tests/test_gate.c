/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tuner's gate rule (tools/probe/probe.h: probe_clears) and the
 * verdicts probe_gate writes, on made-up medians and spreads: the rule at
 * its boundaries, and texts that say what was compared. The end-to-end
 * tunes in test_tune only show the rule on a machine's real noise.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "tests/testutil.h"
#include "tools/probe/probe.h"

static void test_clears_boundaries(void)
{
    /* No noise: the 1 % floor alone. */
    CU_ASSERT(!probe_clears(0.0099, 0));
    CU_ASSERT(probe_clears(0.01, 0));
    CU_ASSERT_DOUBLE_EQUAL(probe_needed_gain(0), 0.01, 1e-12);
    /* As ratios: 1 / (1 - gain) against 1 + noise. */
    CU_ASSERT(!probe_clears(0.28, 0.40)); /* 1.389x against 1.40 */
    CU_ASSERT(probe_clears(0.30, 0.40));  /* 1.429x */
    CU_ASSERT_DOUBLE_EQUAL(probe_needed_gain(0.40), 0.40 / 1.40, 1e-12);
    /* The case that made the rule: a pair 4.8x faster under a spread of
     * 85 %, which no gain can exceed past a spread of 100 % by subtraction. */
    CU_ASSERT(probe_clears(0.79, 0.85));
    CU_ASSERT(probe_clears(0.70, 1.50));
    CU_ASSERT(!probe_clears(0.55, 1.50));
    /* Slower, equal, or measurements that are not numbers: never. */
    CU_ASSERT(!probe_clears(-0.5, 0));
    CU_ASSERT(!probe_clears(0, 0));
    CU_ASSERT(!probe_clears(NAN, 0));
    CU_ASSERT(!probe_clears(0.5, NAN));
    CU_ASSERT(!probe_clears(0.5, INFINITY));
}

static struct mpce_pins_cand cand(const char *impl, double median, double spread)
{
    return (struct mpce_pins_cand){.impl = (char *)impl, .status = (char *)"ok",
                                   .median = median, .spread = spread, .why = (char *)""};
}

/* The gate on two candidates, def first in priority order. */
static void gate(double def_median, double def_spread, double fast_median, char *winner,
                 char *verdict, size_t len)
{
    struct mpce_pins_cand c[2] = {cand("def", def_median, def_spread),
                                  cand("chal", fast_median, 0.01)};
    struct mpce_pins_row row = {.key = (char *)"prg.ecb.large", .cands = c, .n_cands = 2};
    static const char *const order[] = {"def", "chal"};
    char runner_up[64];
    probe_gate(&row, order, 2, winner, runner_up, verdict, len);
}

static void test_gate_verdicts(void)
{
    char winner[64], verdict[400];
    /* Taken: the ratio and the spread it beat, both true. */
    gate(1.0, 0.85, 0.21, winner, verdict, sizeof(verdict));
    CU_ASSERT_STRING_EQUAL(winner, "chal");
    CU_ASSERT(strstr(verdict, "chal beats default def by 79.0 % (the default takes 4.76x as "
                              "long: more than 1 + its spread 85.0 %") != NULL);
    /* Refused: the gain it would have needed. */
    gate(1.0, 0.40, 0.72, winner, verdict, sizeof(verdict));
    CU_ASSERT_STRING_EQUAL(winner, "def");
    CU_ASSERT(strstr(verdict, "default def kept: chal is faster by only 28.0 % (with the "
                              "default's spread of 40.0 % a challenger needs more than "
                              "28.6 %)") != NULL);
    gate(1.0, 0.40, 0.70, winner, verdict, sizeof(verdict));
    CU_ASSERT_STRING_EQUAL(winner, "chal");
    /* Below the 1 % floor without noise. */
    gate(1.0, 0, 0.995, winner, verdict, sizeof(verdict));
    CU_ASSERT_STRING_EQUAL(winner, "def");
    CU_ASSERT(strstr(verdict, "needs more than 1.0 %") != NULL);
    if (strstr(verdict, "needs more than 1.0 %") == NULL)
        fprintf(stderr, "  verdict: %s\n", verdict);
}

static const struct tu_test tests[] = {
    {"the rule at its boundaries", test_clears_boundaries},
    {"the gate's verdicts say what was compared", test_gate_verdicts},
    {NULL, NULL},
};

int main(void)
{
    return tu_main("gate", tests);
}
