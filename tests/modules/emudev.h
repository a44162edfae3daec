/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test hooks of the emulated-device module (tests/modules/mod_emudev.c).
 * Tests dlopen the module file the engine loaded (the same handle, so the
 * same counters) and reach these with dlsym under the names below.
 */
#ifndef MPCE_TESTS_EMUDEV_H
#define MPCE_TESTS_EMUDEV_H

#include <stdint.h>

#include "mpcengine/common.h"

/* Process-wide, over every engine that loaded the module; compare deltas.
 * Job counters count jobs that completed successfully, whether they came
 * from a queue or ran inline for a call without a completion. */
struct emudev_stats {
    uint64_t uploads, downloads, copies;  /* copy jobs run, by kind */
    uint64_t upload_bytes, download_bytes;
    uint64_t ops;                         /* NTT op jobs run (host or device memory) */
    uint64_t device_ops;                  /* of those, on device memory */
    uint64_t allocs_live, bytes_live;     /* device allocations not yet freed (bytes
                                             as requested, before rounding) */
    uint64_t queues_live;                 /* queues not yet freed (default queue excluded) */
    uint64_t bad_frees;                   /* frees of addresses alloc did not return */
};
MPCE_API void emudev_stats(struct emudev_stats *out);

/* The n-th op job from now whose op name ("ntt.forward", "ntt.inverse",
 * "ntt.mul"; NULL for any) matches fails with MPCE_ERR_BACKEND; n = 0 is the
 * next one. Jobs are counted when they start to run, not when submitted. A
 * later call replaces an armed one; the injection fires once. */
MPCE_API void emudev_fail_after(unsigned n, const char *op);

/* Breaks the ABI once, as a buggy plugin would: the next call that carries
 * a completion runs at once, calls host->complete and then returns 0
 * instead of MPCE_OP_PENDING. The engine must count it finished once and
 * report a failure the completion carried. */
MPCE_API void emudev_complete_and_return_once(void);

/* For dlsym. */
#define EMUDEV_STATS_SYMBOL "emudev_stats"
#define EMUDEV_FAIL_AFTER_SYMBOL "emudev_fail_after"
#define EMUDEV_COMPLETE_AND_RETURN_SYMBOL "emudev_complete_and_return_once"
typedef void (*emudev_stats_fn)(struct emudev_stats *out);
typedef void (*emudev_fail_after_fn)(unsigned n, const char *op);
typedef void (*emudev_complete_and_return_fn)(void);

#endif
