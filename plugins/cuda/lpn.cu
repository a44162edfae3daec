// SPDX-License-Identifier: Apache-2.0
// The LPN fold kernel for the GPU: the dialect body of k_lpn.h under nvcc.
#include "plugins/cuda/k_lpn.h"
