/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A PRG implementation on OpenSSL's EVP AES for the loader's test modules:
 * independent of the soft backend, so a module built from it passes the
 * self-test on its own merits.
 */
#ifndef MPCE_TEST_EVP_PRG_H
#define MPCE_TEST_EVP_PRG_H

#include "mpcengine/plugin.h"

/* Correct ops; a module that must compute wrong answers wraps ecb. */
int evp_prg_ctx_new(void *module, const uint8_t *keys, size_t m, void **state);
void evp_prg_ctx_free(void *state);
int evp_prg_ecb(void *state, const struct mpce_call *call, size_t key_index, const uint8_t *in,
                uint8_t *out, size_t n);
int evp_prg_mmo(void *state, const struct mpce_call *call, const uint8_t *seeds, uint8_t *out,
                size_t n);
int evp_prg_ctr(void *state, const struct mpce_call *call, size_t key_index, uint64_t c0,
                uint8_t *out, size_t n);

extern const struct mpce_prg_ops evp_prg_ops;

#endif
