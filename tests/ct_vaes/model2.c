/* SPDX-License-Identifier: Apache-2.0 */
/* The VAES body at the ymm kernels' width, on AES-NI (model.h). */
#include "config.h"

#define MODEL_LANES 2
#include "tests/ct_vaes/model.h"

const struct aesni_aes_kernel ct_vaes_model2 = {
    .name = "vaes-body-2-lanes",
    .ecb = vaes_ecb,
    .ctr = vaes_ctr,
    .mmo = vaes_mmo,
    .dpf_expand = vaes_dpf_expand,
    .dpf_step = vaes_dpf_step,
};
