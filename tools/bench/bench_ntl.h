/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The NTL peer of `mpcengine bench` (tools/bench/bench_ntl.cc, C++, built
 * only when configure finds NTL): NTL's FFT, twisted into a negacyclic NTT,
 * for the ntt.forward and ntt.inverse rows with the 60-bit modulus.
 */
#ifndef MPCE_TOOLS_BENCH_NTL_H
#define MPCE_TOOLS_BENCH_NTL_H

#include <stddef.h>

#include "tools/bench/bench_public.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The peers (static storage); *count receives how many. */
const mpce_bench_peer *bench_ntl_peers(size_t *count);

#ifdef __cplusplus
}
#endif
#endif
