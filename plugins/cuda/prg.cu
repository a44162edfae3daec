// SPDX-License-Identifier: Apache-2.0
// The PRG kernels for the GPU: the dialect bodies of k_prg.h under nvcc.
#include "plugins/cuda/k_prg.h"
