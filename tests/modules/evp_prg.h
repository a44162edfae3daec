/*
 * A PRG implementation on OpenSSL's EVP AES for the loader's test modules:
 * independent of the soft backend, so a module built from it passes the
 * self-test on its own merits.
 */
#ifndef MPCE_TEST_EVP_PRG_H
#define MPCE_TEST_EVP_PRG_H

#include "mpcengine/plugin.h"

/* Correct ops; the wrong-answer module wraps ecb. */
int evp_prg_ctx_new(const uint8_t *keys, size_t m, void **state);
void evp_prg_ctx_free(void *state);
int evp_prg_ecb(void *state, size_t key_index, const uint8_t *in, uint8_t *out, size_t n);
int evp_prg_mmo(void *state, const uint8_t *seeds, uint8_t *out, size_t n);
int evp_prg_ctr(void *state, size_t key_index, uint64_t c0, uint8_t *out, size_t n);

extern const struct mpce_prg_vtable evp_prg_vtable;

/* A descriptor with one PRG implementation named impl_name, for the modules
 * that are broken in their descriptor, not their code. */
#define EVP_PRG_IMPL(var, impl_name, prio)                                     \
    static const struct mpce_impl var = {                                      \
        .struct_size = sizeof(struct mpce_impl),                               \
        .primitive = MPCE_PRIM_PRG,                                            \
        .name = impl_name,                                                     \
        .priority = prio,                                                      \
        .flags = MPCE_IMPL_CONSTANT_TIME,                                      \
        .vtable = &evp_prg_vtable,                                             \
    }

#endif
