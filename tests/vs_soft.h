/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The differential scaffolding every accelerated backend's suite runs
 * against the soft backend (tests/test_aesni.c, tests/test_aesni_ntt.c,
 * tests/test_neon.c): one copy, so that a fix to what "agrees with soft"
 * means (a guard byte, an in-place pass, a wrapping counter) reaches every
 * backend at once. Each function returns 1 when impl agrees bit for bit
 * and prints what differed otherwise; the callers wrap it in CU_ASSERT.
 */
#ifndef MPCE_TESTS_VS_SOFT_H
#define MPCE_TESTS_VS_SOFT_H

#include <stddef.h>
#include <stdint.h>

#include "mpcengine.h"

/* Written past every output: the byte after it must survive the call. */
#define VS_PATTERN 0xA5
/* The PRG reference: constant time, and checked by the FIPS vectors. */
#define VS_REF_PRG "prg-soft-bitslice"

struct vs_prg_case {
    mpce_prg *ctx[8]; /* ctx[m-1] holds m keys */
};

void vs_prg_case_new(mpce_engine *e, struct vs_prg_case *c);
void vs_prg_case_free(struct vs_prg_case *c);

/* ecb (out of place and in place), ctr and mmo of n blocks under m keys,
 * with the given misalignments of input and output. */
int vs_prg_compare(const struct vs_prg_case *c, const char *impl, size_t n, size_t m,
                   size_t mis_in, size_t mis_out, uint64_t c0);

/* The fold of n outputs over a 2^logk table by impl and by lpn-soft. */
int vs_lpn_compare(mpce_engine *e, const char *impl, unsigned logk, size_t n, uint64_t c0);

/* vs_lpn_compare at each of the n[i] output counts (the table sizes
 * vary with i), then at the production shape, the b13 table of 2^19
 * blocks. */
int vs_lpn_all(mpce_engine *e, const char *impl, const size_t *ns, size_t count);

/* How hard vs_dpf_compare presses: emulated runs need smaller shapes. */
struct vs_dpf_shape {
    size_t keys;           /* points (and keys) in the many-point calls */
    unsigned max_all_bits; /* evalall only for domains of at most 2^this */
    size_t few_max;        /* the short calls: 1, 1 + few_step, ... <= few_max */
    size_t few_step;
};

/* gen (keys compared serialized), eval, eval_keys and evalall of a
 * bits-bit DPF over group g. */
int vs_dpf_compare(mpce_engine *e, const char *impl, unsigned bits, mpce_dpf_group g,
                   uint64_t seed, const struct vs_dpf_shape *shape);

/* vs_dpf_compare at every listed domain size, both groups. */
int vs_dpf_all(mpce_engine *e, const char *impl, const unsigned *bits, size_t nbits,
               const struct vs_dpf_shape *shape);

/* evalall_range is not public API: through the engine's own normalized op
 * table of impl (the suites link the core), slices at odd boundaries of
 * every domain from 2^1 to 2^max_bits equal the whole evalall. CUnit
 * assertions inside. */
void vs_dpf_range(mpce_engine *e, const char *impl, unsigned max_bits);

/* The index-th largest prime q < 2^bits with q = 1 mod 2^18 (valid for
 * every N up to 2^17). */
uint64_t vs_find_prime(unsigned bits, unsigned index);

/* Every op of impl equals ntt-soft on `in` (and on `in` times a shuffled
 * copy of itself for mul), out of place into a buffer 8 bytes off a
 * 64-byte boundary, and in place. */
int vs_ntt_compare(mpce_ntt *ctx, const char *impl, const uint64_t *in, size_t words,
                   size_t batch, const char *what);

const mpce_impl_info *vs_find_row(const mpce_impl_info *rows, size_t n, const char *impl);

/* Whether impl passes its self-test in an engine loading plugin_path with
 * `flags`: how the suites show a mask variable obeying the environment
 * rules. */
int vs_impl_passes(const char *plugin_path, unsigned flags, const char *impl);

/* This program again (argv[0] is the name it runs under), in a fresh
 * process that sets a mask variable itself; 1 if it exited 0. */
int vs_rerun_self(char *const argv[]);

/* In the re-run child: root ignores MPCENGINE_* variables, so the child
 * that needs one runs as nobody (the build tree stays readable, and root
 * owns it). 0, or -1 after saying why. */
int vs_child_drop_root(const char *prog);

#endif
