/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's one clock for deadlines and timeouts (internal.h). */
#include "config.h"

#include <time.h>

#include "engine/internal.h"

long long mpce_monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
