/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Key material a backend holds (AES schedules, seeds on their way to a
 * device): cleared where the compiler cannot drop the stores as dead, and
 * the schedule-holding context state allocated and freed the same way by
 * every CPU backend, so that none of them forgets the wipe or words its
 * out-of-memory error differently. Header-only.
 */
#ifndef MPCE_COMMON_KEY_STATE_H
#define MPCE_COMMON_KEY_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpcengine/plugin.h"

/* Zeroes p[0..len): volatile stores, which the compiler must keep even
 * when the memory is freed or goes out of scope next. */
static inline void mpce_wipe(void *p, size_t len)
{
    volatile uint8_t *v = p;
    while (len--)
        *v++ = 0;
}

/* A context state of `bytes` (rounded up to a multiple of 64, 64-byte
 * aligned, as aligned_alloc wants) holding m key schedules, or NULL with
 * "PLUGIN: out of memory for M AES key schedules (N bytes)" set through
 * host (when there is one). */
static inline void *mpce_key_state_new(const struct mpce_host *host, const char *plugin,
                                       size_t bytes, size_t m)
{
    const size_t rounded = (bytes + 63u) & ~(size_t)63u;
    void *p = aligned_alloc(64, rounded);
    if (p == NULL && host != NULL)
        host->set_error(host, "%s: out of memory for %zu AES key schedules (%zu bytes)", plugin,
                        m, rounded);
    return p;
}

/* Wipes the state's bytes, then frees it (NULL is fine). */
static inline void mpce_key_state_free(void *state, size_t bytes)
{
    if (state == NULL)
        return;
    mpce_wipe(state, bytes);
    free(state);
}

#endif
