/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The call a skeleton makes to its backend's own PRG: host memory, finished
 * before it returns (the skeletons run on the CPU).
 */
#ifndef MPCE_COMMON_HOST_CALL_H
#define MPCE_COMMON_HOST_CALL_H

#include "mpcengine/plugin.h"

static const struct mpce_call mpce_common_host_call = MPCE_CALL_HOST_INIT;

#endif
