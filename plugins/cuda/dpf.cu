// SPDX-License-Identifier: Apache-2.0
// The DPF kernels for the GPU: the dialect bodies of k_dpf.h under nvcc.
#include "plugins/cuda/k_dpf.h"
