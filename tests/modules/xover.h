/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cost model of the crossover fixture (tests/modules/mod_xover.c), which
 * tests/test_tune.c checks the selector's crossover against. Per call of E
 * work elements, on top of OpenSSL's AES (the same for both, so it cancels):
 *
 *   prg-xover-host  XOVER_HOST_PER_NS * E            (synchronous)
 *   prg-xover-dev   XOVER_DEV_FIXED_NS + XOVER_DEV_PER_NS * E
 *                   (asynchronous: completes through host->complete)
 *
 * The device wins from E* = FIXED / (HOST_PER - DEV_PER), about 289500
 * elements: inside the large class (262144 up), so the large row's own
 * shape (262144 blocks) is the host's (by 0.5 ms) and four times that the
 * device's by 15 ms. The search (tools/probe/crossover.c) tries 262144,
 * 370727, 524288 and 1048576 elements there: it must land on 370727 or
 * 524288 (1.3x and 1.8x E*), and at 524288 the device is ahead by 4.5 ms,
 * 1.7x, which clears a host spread of up to 70 %. Milliseconds, not microseconds, so that neither a
 * sanitizer's slowdown nor a loaded machine moves the decisions: soft's
 * AES, slowed by AddressSanitizer, is never the host side's best (the host
 * implementation costs 20 ns a block, soft's bitsliced AES ~78 ns
 * unsanitized on an AMD EPYC Zen 4).
 */
#ifndef MPCE_TEST_XOVER_H
#define MPCE_TEST_XOVER_H

#define XOVER_HOST_PER_NS 20L
#define XOVER_DEV_FIXED_NS 5500000L
#define XOVER_DEV_PER_NS 1L
#define XOVER_TRUE_CROSSOVER                                                                 \
    ((double)XOVER_DEV_FIXED_NS / (double)(XOVER_HOST_PER_NS - XOVER_DEV_PER_NS))

#endif
