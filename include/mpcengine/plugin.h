/*
 * The plugin ABI, installed for third-party backends.
 *
 * A module exports one symbol, MPCE_PLUGIN_ENTRY_SYMBOL, whose name carries
 * the ABI major. The engine calls it once after dlopen(RTLD_NOW|RTLD_LOCAL)
 * and reads the returned descriptor, checking struct_size before each field.
 *
 * Compatibility rules (SQLite VFS style): every struct begins with its own
 * size and only ever grows at the end; a minor version adds fields, a major
 * version changes or removes them. The engine accepts its own major and any
 * minor not newer than its own.
 *
 * Contract for implementations: the engine validates every argument (sizes,
 * ranges, canonical NTT inputs, parsed DPF keys) before calling a vtable, and
 * never calls an op with n == 0. Ops return 0 on success or an mpce_status,
 * and may call host->set_error() first to explain. An op may be called from
 * several threads at once on the same state; ctx_new/ctx_free are not
 * concurrent with ops on that state.
 */
#ifndef MPCENGINE_PLUGIN_H
#define MPCENGINE_PLUGIN_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPCE_PLUGIN_ABI_MAJOR 1u
#define MPCE_PLUGIN_ABI_MINOR 0u
#define MPCE_PLUGIN_ENTRY_SYMBOL "mpce_plugin_entry_v1"

/* Services the engine offers a plugin. */
struct mpce_host {
    size_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;
    /* Informational message tagged with the plugin (level 0 info, 1 warning). */
    void (*log)(const struct mpce_host *host, int level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
    /* Detail for the op that is about to return an error (thread-local). */
    void (*set_error)(const struct mpce_host *host, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
    void *host_data; /* engine private */
};

/* PRG state holds m (1..8) expanded AES-128 keys. */
struct mpce_prg_vtable {
    size_t struct_size;
    int (*ctx_new)(const uint8_t *keys, size_t m, void **state);
    void (*ctx_free)(void *state);
    int (*ecb)(void *state, size_t key_index, const uint8_t *in, uint8_t *out, size_t n);
    int (*mmo)(void *state, const uint8_t *seeds, uint8_t *out, size_t n);
    int (*ctr)(void *state, size_t key_index, uint64_t c0, uint8_t *out, size_t n);
};

/* NTT state for degree n and l moduli; the engine has checked every q and
 * found psi[i], the primitive 2n-th root of unity of SPEC.md for q[i]. */
struct mpce_ntt_vtable {
    size_t struct_size;
    int (*ctx_new)(size_t n, size_t l, const uint64_t *q, const uint64_t *psi, void **state);
    void (*ctx_free)(void *state);
    int (*forward)(void *state, const uint64_t *in, uint64_t *out, size_t batch);
    int (*inverse)(void *state, const uint64_t *in, uint64_t *out, size_t batch);
    int (*mul)(void *state, const uint64_t *a, const uint64_t *b, uint64_t *out, size_t batch);
};

/* LPN state for a seed and logk; table holds 2^logk blocks. */
struct mpce_lpn_vtable {
    size_t struct_size;
    int (*ctx_new)(const uint8_t seed[16], unsigned logk, void **state);
    void (*ctx_free)(void *state);
    int (*fold)(void *state, uint64_t c0, const uint8_t *table, uint8_t *out, size_t n);
};

/* A parsed, validated DPF key (format v1 fields, fixed size). */
struct mpce_dpf_key_v1 {
    uint8_t bits;          /* 1..64 */
    uint8_t group;         /* 0 bytes, 1 u64 */
    uint8_t party;         /* 0 or 1 */
    uint8_t reserved;      /* 0 */
    uint8_t kl[16];
    uint8_t kr[16];
    uint8_t seed[16];      /* t-bit clear */
    uint8_t cw_s[64][16];  /* cw_s[i]: seed correction, tLCW in its t-bit */
    uint8_t cw_tr[8];      /* tRCW bit i: bit i%8 of byte i/8 */
    uint8_t cw_out[16];    /* u64: 8-byte LE value then 8 zero bytes */
};

/* DPF state for domain bits, group and PRG keys (those of every key given). */
struct mpce_dpf_vtable {
    size_t struct_size;
    int (*ctx_new)(unsigned bits, unsigned group, const uint8_t kl[16], const uint8_t kr[16],
                   void **state);
    void (*ctx_free)(void *state);
    /* s0, s1 have their t-bits clear; beta is as in mpce_dpf_gen (t-bit clear
     * for bytes). Fills both keys completely. */
    int (*gen)(void *state, uint64_t alpha, const uint8_t beta[16], const uint8_t s0[16],
               const uint8_t s1[16], struct mpce_dpf_key_v1 *key0,
               struct mpce_dpf_key_v1 *key1);
    int (*eval)(void *state, const struct mpce_dpf_key_v1 *key, const uint64_t *points,
                size_t npoints, uint8_t *out);
    int (*eval_keys)(void *state, const struct mpce_dpf_key_v1 *const *keys,
                     const uint64_t *points, size_t nkeys, uint8_t *out);
    /* 2^bits outputs, bits <= 32. */
    int (*evalall)(void *state, const struct mpce_dpf_key_v1 *key, uint8_t *out);
    /* The outputs for x in [x_begin, x_end) only, x_begin's first: a slice of
     * evalall, so the engine can split one over its worker threads. */
    int (*evalall_range)(void *state, const struct mpce_dpf_key_v1 *key, uint64_t x_begin,
                         uint64_t x_end, uint8_t *out);
};

/* One implementation of one primitive. */
struct mpce_impl {
    size_t struct_size;
    uint32_t primitive;      /* mpce_primitive */
    const char *name;        /* unique, e.g. "prg-aesni-vaes512" */
    int priority;            /* soft 100, SIMD 300, accelerator 400 */
    uint32_t flags;          /* MPCE_IMPL_* */
    const void *vtable;      /* struct mpce_<primitive>_vtable */
    /* NULL: runs wherever the plugin does. Else 0 if this CPU/device can run
     * it, non-zero with a reason in why (e.g. "no AVX-512F") if not. */
    int (*probe)(const struct mpce_host *host, char *why, size_t why_len);
};

/* What the entry symbol returns; static storage owned by the module. */
struct mpce_plugin {
    size_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;
    const char *name;        /* unique plugin name, e.g. "aesni" */
    const char *version;
    /* NULL or 0: usable here; non-zero: the whole module is skipped with why. */
    int (*probe)(const struct mpce_host *host, char *why, size_t why_len);
    size_t n_impls;
    const struct mpce_impl *const *impls;
};

typedef const struct mpce_plugin *(*mpce_plugin_entry_fn)(const struct mpce_host *host);

#ifdef __cplusplus
}
#endif
#endif
