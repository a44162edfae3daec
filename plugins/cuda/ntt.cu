// SPDX-License-Identifier: Apache-2.0
// The NTT kernels for the GPU: the dialect bodies of k_ntt.h under nvcc.
#include "plugins/cuda/k_ntt.h"
