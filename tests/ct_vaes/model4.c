/* SPDX-License-Identifier: Apache-2.0 */
/* The VAES body at the zmm kernels' width, on AES-NI (model.h). */
#include "config.h"

#define MODEL_LANES 4
#include "tests/ct_vaes/model.h"

const struct aesni_aes_kernel ct_vaes_model4 = {
    .name = "vaes-body-4-lanes",
    .ecb = vaes_ecb,
    .ctr = vaes_ctr,
    .mmo = vaes_mmo,
    .dpf_expand = vaes_dpf_expand,
    .dpf_step = vaes_dpf_step,
};
