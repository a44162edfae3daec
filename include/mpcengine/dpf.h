/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Two-party tree DPF (BGI CCS'16, lambda = 127), myl7/fss compatible
 * (SPEC.md section 4). Keys serialize to format v1.
 *
 * Outputs: the bytes group writes 16 bytes per point (shares XOR to beta at
 * alpha, 0 elsewhere); the u64 group writes 8 little-endian bytes per point
 * (shares add mod 2^64 to beta at alpha, 0 elsewhere).
 *
 * What is public: evaluation points, the domain size, the group and the PRG
 * keys kL/kR are PUBLIC by design, as in myl7/fss: evaluation walks the
 * tree along the point's bits, so its branches and addresses follow the
 * point. Never evaluate at a secret point. Secret: the root seeds, beta,
 * alpha and the keys' contents. Gen does not branch on, or index memory
 * by, the seeds, beta, the PRG keys or alpha (tests/check_ct.sh checks the
 * default implementations under valgrind, with alpha's bits inside the
 * domain secret); only the check that alpha lies inside the domain, which
 * refuses the call, looks at the bits above it.
 */
#ifndef MPCENGINE_DPF_H
#define MPCENGINE_DPF_H

#include "buffer.h"
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPCE_DPF_MAX_BITS 64u
#define MPCE_DPF_MAX_EVALALL_BITS 32u

typedef enum mpce_dpf_group {
    MPCE_DPF_BYTES = 0,
    MPCE_DPF_U64 = 1
} mpce_dpf_group;

/* Threads: a context may be used by any number of threads at once; calls
 * only read it (what a call resolves the first time is published under the
 * context's own lock). mpce_dpf_free must not race with another call on it. */
typedef struct mpce_dpf mpce_dpf;
/* Threads: a key is never changed once made: any number of threads may
 * evaluate, serialize or inspect it at once; mpce_dpf_key_free must not race
 * with them. Key batches (mpce_dpf_keys, below) likewise. */
typedef struct mpce_dpf_key mpce_dpf_key;
typedef struct mpce_dpf_keys mpce_dpf_keys;

/* Output bytes per point: 16 (bytes) or 8 (u64); 0 for an unknown group. */
MPCE_API size_t mpce_dpf_output_size(mpce_dpf_group group);

/*
 * A context for domain bits n (1..64), a group and the PRG keys kL, kR
 * (16 bytes each; both NULL for the default keys, the first 16 bytes of
 * SHA-256("mpcengine dpf prg key L") and of "... key R").
 */
MPCE_API mpce_status mpce_dpf_new(mpce_engine *engine, unsigned bits, mpce_dpf_group group,
                                  const uint8_t *kl, const uint8_t *kr, mpce_dpf **out);
/* A context matching a parsed key's domain, group and PRG keys. */
MPCE_API mpce_status mpce_dpf_new_for_key(mpce_engine *engine, const mpce_dpf_key *key,
                                          mpce_dpf **out);
MPCE_API void mpce_dpf_free(mpce_dpf *ctx);

/*
 * Keys for the point function x -> beta at x = alpha. beta is 16 bytes: for
 * the bytes group a block (its t-bit, bit 0 of byte 12, is forced to 0); for
 * u64 the value as 8 little-endian bytes followed by 8 zero bytes.
 * seed0/seed1 (16 bytes each) are the root seeds; NULL draws them with
 * OpenSSL RAND_bytes. Both keys are freed with mpce_dpf_key_free.
 */
MPCE_API mpce_status mpce_dpf_gen(mpce_dpf *ctx, const char *impl, uint64_t alpha,
                                  const uint8_t beta[16], const uint8_t *seed0,
                                  const uint8_t *seed1, mpce_dpf_key **key0,
                                  mpce_dpf_key **key1);
/* Convenience for the u64 group. */
MPCE_API mpce_status mpce_dpf_gen_u64(mpce_dpf *ctx, const char *impl, uint64_t alpha,
                                      uint64_t beta, const uint8_t *seed0,
                                      const uint8_t *seed1, mpce_dpf_key **key0,
                                      mpce_dpf_key **key1);

/* One key at npoints points: out holds npoints * output_size bytes. */
MPCE_API mpce_status mpce_dpf_eval(mpce_dpf *ctx, const char *impl, const mpce_dpf_key *key,
                                   const uint64_t *points, size_t npoints, uint8_t *out);
/* nkeys keys, key i at points[i]: out holds nkeys * output_size bytes. */
MPCE_API mpce_status mpce_dpf_eval_keys(mpce_dpf *ctx, const char *impl,
                                        const mpce_dpf_key *const *keys,
                                        const uint64_t *points, size_t nkeys, uint8_t *out);
/*
 * Key batches, for evaluating many keys many times: the keys are checked
 * once, when the batch is made, and laid out level-major, so that a walk
 * over consecutive keys reads consecutive memory (each key takes ~16n bytes
 * instead of a 1 KiB struct of its own). A batch holds copies of the
 * keys' secret shares and wipes them when freed. It is read-only once
 * made: it may be shared by threads and contexts (mpce_dpf_keys_free must
 * not race with their calls), and outlive the context that made it; it
 * serves every context with its keys' domain bits, group and PRG keys. A
 * batch of 0 keys is allowed.
 *
 * mpce_dpf_keys_new: batch key i is keys[i]; the first key that does not
 * match ctx is named and nothing is made. The keys may be freed after.
 * mpce_dpf_keys_parse: from nkeys serialized keys (format v1) back to back,
 * len = nkeys * mpce_dpf_key_size(bits) bytes; each is validated as
 * mpce_dpf_key_parse does, and a refusal names the key's index.
 */
MPCE_API mpce_status mpce_dpf_keys_new(mpce_dpf *ctx, const mpce_dpf_key *const *keys,
                                       size_t nkeys, mpce_dpf_keys **out);
MPCE_API mpce_status mpce_dpf_keys_parse(mpce_dpf *ctx, const uint8_t *buf, size_t len,
                                         size_t nkeys, mpce_dpf_keys **out);
/* The number of keys in a batch; 0 for NULL. */
MPCE_API size_t mpce_dpf_keys_count(const mpce_dpf_keys *batch);
MPCE_API void mpce_dpf_keys_free(mpce_dpf_keys *batch);
/* Keys first .. first + n - 1 of the batch, key first + j at points[j]: out
 * holds n * output_size bytes, the outputs mpce_dpf_eval_keys gives for the
 * same keys. The batch must match ctx (domain bits, group, PRG keys) and
 * hold the range; then only the points are checked, not the keys again. On
 * any refusal nothing is written. Routed as dpf.eval_keys. */
MPCE_API mpce_status mpce_dpf_eval_batch(mpce_dpf *ctx, const char *impl,
                                         const mpce_dpf_keys *batch, size_t first,
                                         const uint64_t *points, size_t n, uint8_t *out);

/* Every x in 0 .. 2^n - 1 in order (n <= 32): out_len must be at least
 * 2^n * output_size bytes. */
MPCE_API mpce_status mpce_dpf_evalall(mpce_dpf *ctx, const char *impl,
                                      const mpce_dpf_key *key, uint8_t *out, size_t out_len);

/* Serialized size of a key with n domain bits: 72 + 16n + ceil(n/8). */
MPCE_API size_t mpce_dpf_key_size(unsigned bits);
/* Format v1; *written (may be NULL) receives mpce_dpf_key_size(bits). */
MPCE_API mpce_status mpce_dpf_key_serialize(const mpce_dpf_key *key, uint8_t *buf,
                                            size_t buf_len, size_t *written);
/* Parse and validate format v1; a malformed key is refused with a message
 * naming the field (length, magic, version, n, group, party, seed, cw_tr,
 * cw_out). */
MPCE_API mpce_status mpce_dpf_key_parse(const uint8_t *buf, size_t len, mpce_dpf_key **out);
MPCE_API void mpce_dpf_key_free(mpce_dpf_key *key);
MPCE_API unsigned mpce_dpf_key_bits(const mpce_dpf_key *key);
MPCE_API mpce_dpf_group mpce_dpf_key_group(const mpce_dpf_key *key);
MPCE_API unsigned mpce_dpf_key_party(const mpce_dpf_key *key);

/* Buffer forms: points holds npoints uint64 words, out the outputs. The key
 * is read before the call returns (an asynchronous implementation copies
 * what it needs): it may be freed right after. */
MPCE_API mpce_status mpce_dpf_eval_buf(mpce_dpf *ctx, mpce_queue *queue, const char *impl,
                                       const mpce_dpf_key *key, const mpce_buffer *points,
                                       size_t npoints, mpce_buffer *out);
MPCE_API mpce_status mpce_dpf_evalall_buf(mpce_dpf *ctx, mpce_queue *queue, const char *impl,
                                          const mpce_dpf_key *key, mpce_buffer *out);

/* The implementation a call of op ("dpf.gen", "dpf.eval", "dpf.eval_keys",
 * "dpf.evalall") over `units` points or keys (evalall: ignored, the domain)
 * in host memory would run with this impl argument; *name stays valid while
 * the engine lives. */
MPCE_API mpce_status mpce_dpf_resolve(mpce_dpf *ctx, const char *impl, const char *op,
                                      size_t units, const char **name);

#ifdef __cplusplus
}
#endif
#endif
