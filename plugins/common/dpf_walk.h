/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DPF tree algorithms (SPEC.md section 4), written once over a batch PRG
 * for every backend. The backend supplies a PRG state holding two keys,
 * kL = key 0 and kR = key 1, so that mmo() is the length-doubling G and
 * ecb(key b) ^ seed is child b alone.
 *
 * Walks keep nodes: a seed with its control bit t in its t-bit (bit 0 of
 * byte 12). Correcting child b of a node is then one masked XOR with side
 * b's correction word whose t-bit carries that side's t correction: the
 * child's t-bit becomes its control bit. A backend may supply fused kernels
 * for the two node operations (struct mpce_dpf_accel); without them the
 * generic ones run over the PRG ops.
 *
 * Secrets (seeds, t-bits, alpha, beta, correction words) only ever select
 * through masks. Evaluation points are grouped by their bits: in the
 * protocols that evaluate DPFs the points are public (masked inputs, PIR
 * indices), and grouping halves the AES work of a point walk.
 */
#ifndef MPCE_COMMON_DPF_WALK_H
#define MPCE_COMMON_DPF_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpcengine/common.h"
#include "mpcengine/plugin.h"
#include "plugins/common/host_call.h"
#include "spec/dpf_batch.h"
#include "spec/spec.h"

/* Points (or subtree roots) walked together: one PRG call (two for the
 * generic step) per level. The stack buffers hold the largest. */
#define MPCE_DPF_BATCH 256u
/* Full-domain evaluation expands a forest of up to 2^MPCE_DPF_FOREST_LOG
 * adjacent subtrees breadth-first, one PRG call per level, until it holds
 * 2^tile leaves: memory stays two node buffers of 2^tile nodes (64 KiB each
 * at the default 12, sized for L2) for any domain, and every level past the
 * first four has 16+ parents. Tiles stay within the engine's full-domain
 * slices (2^14 leaves), so no slice recomputes a neighbour's nodes. */
#define MPCE_DPF_CHUNK_LOG 12u
#define MPCE_DPF_TILE_MIN 10u
#define MPCE_DPF_TILE_MAX 13u
#define MPCE_DPF_FOREST_LOG 4u
/* Levels ahead whose correction words a many-key walk asks for. */
#define MPCE_DPF_KEY_PREFETCH 4u

/* The walks' knobs (plugins/common/skeleton_knobs.h declares them), in the
 * order of the call's knob values. tile: full-domain tile, log2 leaves (the
 * PRG batch of its deepest level, and the L2 footprint); batch: points or
 * subtree roots walked together; key_prefetch (generic walk only): levels
 * ahead for keys' correction words. */
enum { MPCE_DPF_KNOB_TILE, MPCE_DPF_KNOB_BATCH, MPCE_DPF_KNOB_KEY_PREFETCH, MPCE_DPF_N_KNOBS };

struct mpce_dpf_tuning {
    unsigned tile;        /* MPCE_DPF_TILE_MIN..MPCE_DPF_TILE_MAX */
    size_t batch;         /* 1..MPCE_DPF_BATCH */
    unsigned key_prefetch;
};

/* Fused node kernels over the backend's PRG state (nodes as above). */
struct mpce_dpf_accel {
    /* child[2i+b] = G_b(clr p[i]) ^ (t(p[i]) ? cw[b] : 0) for n parents.
     * parents and children do not overlap (the walks expand between two
     * buffers): kernels may read a parent again after storing children. */
    void (*expand)(const void *prg_state, const uint8_t *parents, uint8_t *children, size_t n,
                   const uint8_t cw[2][16]);
    /* node[i] = G_{dir[i]}(clr node[i]) ^ (t(node[i]) ? cw[i] : 0), in place. */
    void (*step)(const void *prg_state, uint8_t *nodes, const uint8_t *dir, const uint8_t *cw,
                 size_t n);
    /* Optional (NULL: expand, then convert the leaves in C). The last level
     * of a full-domain walk: expand's children written straight as outputs
     * of key in group (0 bytes, 16 each; 1 u64, 8 each), leaves 2i, 2i+1.
     * stream: this call is part of an output larger than the caches (at
     * least MPCE_DPF_STREAM_BYTES), so stores may bypass them. */
    void (*expand_leaves)(const void *prg_state, const uint8_t *parents, uint8_t *out, size_t n,
                          const uint8_t cw[2][16], const struct mpce_dpf_key_v1 *key,
                          unsigned group, int stream);
    /* Optional (NULL: one step call per level). Whole point walks, any n:
     * point j from the root of keys[j * key_step] down `depth` levels (the
     * low depth bits of points[j], most significant first; level i uses
     * correction word i); out[j] is the reached node when what is
     * MPCE_DPF_NODES, else the output value in group `what`. */
    void (*walk)(const void *prg_state, const struct mpce_dpf_key_v1 *const *keys,
                 size_t key_step, const uint64_t *points, size_t n, unsigned depth, unsigned what,
                 uint8_t *out);
    /* Optional (NULL: keys unpacked a batch at a time and walked as
     * eval_keys walks them). walk's contract for keys first .. first + n - 1
     * of a level-major batch. */
    void (*walk_batch)(const void *prg_state, const struct mpce_dpf_batch_v1 *batch,
                       size_t first, const uint64_t *points, size_t n, unsigned depth,
                       unsigned what, uint8_t *out);
};

/* Outputs from this size on are written past the caches where a backend
 * can: they would evict everything else and be gone by the time they are
 * read, and skipping the line fills halves the memory traffic. */
#define MPCE_DPF_STREAM_BYTES ((uint64_t)4 << 20)

/* walk's `what` for nodes rather than outputs. */
#define MPCE_DPF_NODES 2u

struct mpce_dpf_walk {
    const struct mpce_prg_ops *prg;
    void *prg_state;                    /* keys kL (index 0), kR (index 1) */
    const struct mpce_dpf_accel *accel; /* NULL: the generic node operations */
    unsigned bits;                      /* 1..64 */
    unsigned group;                     /* 0 bytes, 1 u64 */
    uint8_t kl[16];
    uint8_t kr[16];
};

/* The call's knob values, each bounded here too: a value outside what the
 * skeleton declares is never used as a buffer size. A backend with node
 * kernels declares no key_prefetch (skeleton_knobs.h), so its calls carry
 * none and the default stands (its kernels' walks do their own fetching). */
static inline struct mpce_dpf_tuning mpce_dpf_tuning_of(const struct mpce_call *call)
{
    struct mpce_dpf_tuning t = {
        .tile = mpce_call_knob(call, MPCE_DPF_KNOB_TILE, MPCE_DPF_CHUNK_LOG),
        .batch = mpce_call_knob(call, MPCE_DPF_KNOB_BATCH, MPCE_DPF_BATCH),
        .key_prefetch =
            mpce_call_knob(call, MPCE_DPF_KNOB_KEY_PREFETCH, MPCE_DPF_KEY_PREFETCH),
    };
    if (t.tile < MPCE_DPF_TILE_MIN || t.tile > MPCE_DPF_TILE_MAX)
        t.tile = MPCE_DPF_CHUNK_LOG;
    if (t.batch == 0 || t.batch > MPCE_DPF_BATCH)
        t.batch = MPCE_DPF_BATCH;
    if (t.key_prefetch > 16)
        t.key_prefetch = MPCE_DPF_KEY_PREFETCH;
    return t;
}

/* The control bit (SPEC.md section 4). */
static inline unsigned mpce_dpf_tbit(const uint8_t *b)
{
    return b[MPCE_SPEC_DPF_TBIT_BYTE] & 1u;
}

static inline void mpce_dpf_clr(uint8_t *b)
{
    b[MPCE_SPEC_DPF_TBIT_BYTE] &= 0xfeu;
}

/* Little-endian words; on little-endian hosts a plain (unaligned) load,
 * which the compiler does not reliably make of the portable loop. */
static inline uint64_t mpce_dpf__le64(const uint8_t *p)
{
    uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&v, p, 8);
#else
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8u * i);
#endif
    return v;
}

static inline void mpce_dpf__put64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 8);
#else
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8u * i));
#endif
}

/* d ^= s & m, m = 0x00 or 0xff. */
static inline void mpce_dpf__xor_masked(uint8_t *d, const uint8_t *s, uint8_t m)
{
    for (unsigned i = 0; i < 16; i++)
        d[i] ^= (uint8_t)(s[i] & m);
}

/* r = m ? b : a, m = 0x00 or 0xff. */
static inline void mpce_dpf__select(uint8_t *r, const uint8_t *a, const uint8_t *b, uint8_t m)
{
    for (unsigned i = 0; i < 16; i++)
        r[i] = (uint8_t)(a[i] ^ ((a[i] ^ b[i]) & m));
}

static inline unsigned mpce_dpf__tr(const struct mpce_dpf_key_v1 *key, unsigned level)
{
    return (key->cw_tr[level / 8u] >> (level % 8u)) & 1u;
}

/* The group value of a leaf seed. For bytes it is the whole block: every
 * seed reached here already had its t-bit taken as the control bit and
 * cleared, so bit 0 of byte 12 of an output is t & (that bit of CW), which
 * is what myl7 produces (the vectors confirm). */
static inline void mpce_dpf__conv_bytes(uint8_t *y, const uint8_t *s)
{
    memcpy(y, s, 16);
}

/* y = conv(s) + t*CW, negated for party 1, in the engine layout. */
static inline void mpce_dpf__output(unsigned group, const struct mpce_dpf_key_v1 *key,
                                    const uint8_t *s, unsigned t, uint8_t *out)
{
    if (group == 0) {
        uint8_t y[16];
        mpce_dpf__conv_bytes(y, s);
        mpce_dpf__xor_masked(y, key->cw_out, (uint8_t)(0u - t));
        memcpy(out, y, 16);
    } else {
        uint64_t neg = 0u - (uint64_t)(key->party & 1u);
        uint64_t y = mpce_dpf__le64(s) + (mpce_dpf__le64(key->cw_out) & (0u - (uint64_t)t));
        mpce_dpf__put64(out, (y ^ neg) - neg);
    }
}

static inline size_t mpce_dpfw_output_bytes(unsigned group)
{
    return mpce_spec_dpf_output_size(group);
}

/* ---- Gen ------------------------------------------------------------- */

/* Both keys for x -> beta at alpha (SPEC.md section 4 pseudo-code). s0, s1
 * have their t-bits clear (cleared again here regardless). */
static inline int mpce_dpfw_gen(const struct mpce_dpf_walk *w, uint64_t alpha,
                               const uint8_t beta[16], const uint8_t s0in[16],
                               const uint8_t s1in[16], struct mpce_dpf_key_v1 *key0,
                               struct mpce_dpf_key_v1 *key1)
{
    uint8_t seeds[2][16], ch[4][16], scw[16], lo[16], hi[16];
    unsigned t0 = 0, t1 = 1;
    int rc;

    memset(key0, 0, sizeof *key0);
    memset(key1, 0, sizeof *key1);
    memcpy(seeds[0], s0in, 16);
    memcpy(seeds[1], s1in, 16);
    mpce_dpf_clr(seeds[0]);
    mpce_dpf_clr(seeds[1]);
    key0->bits = key1->bits = (uint8_t)w->bits;
    key0->group = key1->group = (uint8_t)w->group;
    key0->party = 0;
    key1->party = 1;
    memcpy(key0->kl, w->kl, 16);
    memcpy(key1->kl, w->kl, 16);
    memcpy(key0->kr, w->kr, 16);
    memcpy(key1->kr, w->kr, 16);
    memcpy(key0->seed, seeds[0], 16);
    memcpy(key1->seed, seeds[1], 16);

    for (unsigned i = 0; i < w->bits; i++) {
        unsigned tb[4], a, tlcw, trcw, tkeep;
        uint8_t am;

        rc = w->prg->mmo(w->prg_state, &mpce_common_host_call, &seeds[0][0], &ch[0][0], 2);
        if (rc != 0)
            return rc;
        for (unsigned c = 0; c < 4; c++) {
            tb[c] = mpce_dpf_tbit(ch[c]);
            mpce_dpf_clr(ch[c]);
        }
        a = (unsigned)(alpha >> (w->bits - 1u - i)) & 1u;
        am = (uint8_t)(0u - a);
        /* sCW corrects the side off the path: R when a = 0, L when a = 1. */
        for (unsigned b = 0; b < 16; b++) {
            lo[b] = (uint8_t)(ch[1][b] ^ ch[3][b]);
            hi[b] = (uint8_t)(ch[0][b] ^ ch[2][b]);
        }
        mpce_dpf__select(scw, lo, hi, am);
        tlcw = tb[0] ^ tb[2] ^ a ^ 1u;
        trcw = tb[1] ^ tb[3] ^ a;
        tkeep = (tlcw & (a ^ 1u)) | (trcw & a);

        {
            unsigned t0keep = (tb[0] & (a ^ 1u)) | (tb[1] & a);
            unsigned t1keep = (tb[2] & (a ^ 1u)) | (tb[3] & a);
            mpce_dpf__select(seeds[0], ch[0], ch[1], am);
            mpce_dpf__select(seeds[1], ch[2], ch[3], am);
            mpce_dpf__xor_masked(seeds[0], scw, (uint8_t)(0u - t0));
            mpce_dpf__xor_masked(seeds[1], scw, (uint8_t)(0u - t1));
            t0 = t0keep ^ (t0 & tkeep);
            t1 = t1keep ^ (t1 & tkeep);
        }
        memcpy(key0->cw_s[i], scw, 16);
        key0->cw_s[i][12] |= (uint8_t)tlcw;
        key0->cw_tr[i / 8u] |= (uint8_t)(trcw << (i % 8u));
    }
    memcpy(key1->cw_s, key0->cw_s, sizeof key0->cw_s);
    memcpy(key1->cw_tr, key0->cw_tr, sizeof key0->cw_tr);

    if (w->group == 0) {
        uint8_t c0[16], c1[16];
        mpce_dpf__conv_bytes(c0, seeds[0]);
        mpce_dpf__conv_bytes(c1, seeds[1]);
        for (unsigned b = 0; b < 16; b++)
            key0->cw_out[b] = (uint8_t)(beta[b] ^ c0[b] ^ c1[b]);
    } else {
        uint64_t neg = 0u - (uint64_t)t1;
        uint64_t v = mpce_dpf__le64(beta) - mpce_dpf__le64(seeds[0]) + mpce_dpf__le64(seeds[1]);
        mpce_dpf__put64(key0->cw_out, (v ^ neg) - neg);
    }
    memcpy(key1->cw_out, key0->cw_out, 16);
    return 0;
}

/* ---- nodes ------------------------------------------------------------ */

struct mpce_dpf__u128 {
    uint64_t lo, hi; /* bytes 0..7, 8..15 little-endian: the t-bit is hi bit 32 */
};

#define MPCE_DPF__THI ((uint64_t)1 << 32)

static inline struct mpce_dpf__u128 mpce_dpf__ld(const uint8_t *p)
{
    struct mpce_dpf__u128 v = {mpce_dpf__le64(p), mpce_dpf__le64(p + 8)};
    return v;
}

static inline void mpce_dpf__st(uint8_t *p, struct mpce_dpf__u128 v)
{
    mpce_dpf__put64(p, v.lo);
    mpce_dpf__put64(p + 8, v.hi);
}

/* The root node of a key: its seed with the party as control bit. */
static inline void mpce_dpf__root(const struct mpce_dpf_key_v1 *key, uint8_t *node)
{
    memcpy(node, key->seed, 16);
    node[12] = (uint8_t)((node[12] & 0xfeu) | (key->party & 1u));
}

/* Side b's correction word at `level`: the seed correction with tLCW (b = 0,
 * as stored) or tRCW (b = 1) in its t-bit. */
static inline void mpce_dpf__cw_side(const struct mpce_dpf_key_v1 *key, unsigned level,
                                     unsigned b, uint8_t *cw)
{
    memcpy(cw, key->cw_s[level], 16);
    cw[12] = (uint8_t)(cw[12] ^ ((cw[12] ^ mpce_dpf__tr(key, level)) & 1u & (0u - b)));
}

/* The output of a leaf node: y = conv(clr s) + t*CW, negated for party 1. */
static inline void mpce_dpf__leaf(unsigned group, const struct mpce_dpf_key_v1 *key,
                                  const uint8_t *node, uint8_t *out)
{
    uint8_t s[16];

    memcpy(s, node, 16);
    mpce_dpf_clr(s);
    mpce_dpf__output(group, key, s, mpce_dpf_tbit(node), out);
}

/* Outputs of n consecutive leaf nodes, 64-bit words at a time. */
static inline void mpce_dpf__leaves(unsigned group, const struct mpce_dpf_key_v1 *key,
                                    const uint8_t (*nodes)[16], size_t n, uint8_t *out)
{
    const struct mpce_dpf__u128 cw = mpce_dpf__ld(key->cw_out);

    if (group == 0) {
        for (size_t j = 0; j < n; j++) {
            struct mpce_dpf__u128 v = mpce_dpf__ld(nodes[j]);
            uint64_t m = 0u - ((v.hi >> 32) & 1u);
            v.hi &= ~MPCE_DPF__THI;
            v.lo ^= cw.lo & m;
            v.hi ^= cw.hi & m;
            mpce_dpf__st(out + 16u * j, v);
        }
    } else {
        const uint64_t neg = 0u - (uint64_t)(key->party & 1u);
        for (size_t j = 0; j < n; j++) {
            struct mpce_dpf__u128 v = mpce_dpf__ld(nodes[j]);
            uint64_t y = v.lo + (cw.lo & (0u - ((v.hi >> 32) & 1u)));
            mpce_dpf__put64(out + 8u * j, (y ^ neg) - neg);
        }
    }
}

/* v ^= cw & (t ? all ones : 0). */
static inline void mpce_dpf__fix(uint8_t *v, const uint8_t *raw_in, const uint8_t *cw,
                                 uint64_t t)
{
    struct mpce_dpf__u128 a = mpce_dpf__ld(v), s = mpce_dpf__ld(raw_in), c = mpce_dpf__ld(cw);
    uint64_t m = 0u - t;

    a.lo ^= s.lo ^ (c.lo & m);
    a.hi ^= s.hi ^ (c.hi & m);
    mpce_dpf__st(v, a);
}

/* Generic expand over mmo: parents is consumed (t-bits cleared in place);
 * tb holds n bytes of scratch. */
static inline int mpce_dpf__expand_generic(const struct mpce_dpf_walk *w, uint8_t (*parents)[16],
                                           uint8_t (*children)[16], size_t n,
                                           const uint8_t cw[2][16], uint8_t *tb)
{
    int rc;

    for (size_t p = 0; p < n; p++) {
        tb[p] = (uint8_t)mpce_dpf_tbit(parents[p]);
        mpce_dpf_clr(parents[p]);
    }
    rc = w->prg->mmo(w->prg_state, &mpce_common_host_call, &parents[0][0], &children[0][0], n);
    if (rc != 0)
        return rc;
    /* mmo already XORed the seed in; only the corrections remain. */
    for (size_t c = 0; c < 2u * n; c++) {
        static const uint8_t zero[16];
        mpce_dpf__fix(children[c], zero, cw[c & 1u], tb[c >> 1]);
    }
    return 0;
}

/* Generic point step over ecb: the nodes going left, then those going right,
 * each side one ecb call. n <= MPCE_DPF_BATCH. */
static inline int mpce_dpf__step_generic(const struct mpce_dpf_walk *w, uint8_t (*nodes)[16],
                                         const uint8_t *dir, const uint8_t (*cw)[16], size_t n)
{
    uint8_t in[MPCE_DPF_BATCH][16], ob[MPCE_DPF_BATCH][16];
    uint16_t order[MPCE_DPF_BATCH];
    size_t nl = 0, q;
    int rc;

    for (size_t j = 0; j < n; j++)
        if (dir[j] == 0)
            order[nl++] = (uint16_t)j;
    q = nl;
    for (size_t j = 0; j < n; j++)
        if (dir[j] != 0)
            order[q++] = (uint16_t)j;
    for (q = 0; q < n; q++) {
        memcpy(in[q], nodes[order[q]], 16);
        mpce_dpf_clr(in[q]);
    }
    if (nl > 0 && (rc = w->prg->ecb(w->prg_state, &mpce_common_host_call, 0, &in[0][0], &ob[0][0], nl)) != 0)
        return rc;
    if (n > nl && (rc = w->prg->ecb(w->prg_state, &mpce_common_host_call, 1, &in[nl][0], &ob[nl][0], n - nl)) != 0)
        return rc;
    for (q = 0; q < n; q++) {
        size_t j = order[q];
        uint64_t t = mpce_dpf_tbit(nodes[j]);
        memcpy(nodes[j], ob[q], 16);
        mpce_dpf__fix(nodes[j], in[q], cw[j], t);
    }
    return 0;
}

/* ---- point walks ------------------------------------------------------ */

/*
 * Walk `depth` levels for npts (<= MPCE_DPF_BATCH) points: point j follows
 * the low `depth` bits of points[j], most significant first, from the root
 * of keys[j * key_step]; level i uses correction word i. Leaves the reached
 * nodes in s[j]. One AES per point and level: only the child on the path.
 */
static inline int mpce_dpf__walk(const struct mpce_dpf_walk *w, const struct mpce_dpf_tuning *t,
                                 const struct mpce_dpf_key_v1 *const *keys, size_t key_step,
                                 const uint64_t *points, size_t npts, unsigned depth,
                                 uint8_t (*s)[16])
{
    uint8_t dir[MPCE_DPF_BATCH], cw[MPCE_DPF_BATCH][16];
    int rc;

    if (w->accel != NULL && w->accel->walk != NULL) {
        w->accel->walk(w->prg_state, keys, key_step, points, npts, depth, MPCE_DPF_NODES, &s[0][0]);
        return 0;
    }
#if defined(__GNUC__)
    /* Many keys: each is 1 KiB apart, so its seed, first correction words
     * and t corrections miss cache. Asking for all of them before using
     * any keeps many misses in flight. */
    for (size_t j = 0; key_step != 0 && j < npts; j++) {
        const struct mpce_dpf_key_v1 *k = keys[j * key_step];
        __builtin_prefetch(k->seed, 0, 2);
        __builtin_prefetch(k->cw_s[1], 0, 2);
        __builtin_prefetch(k->cw_s[5], 0, 2);
        __builtin_prefetch(k->cw_tr, 0, 2);
        __builtin_prefetch(k->cw_out + 15, 0, 2);
    }
#endif
    for (size_t j = 0; j < npts; j++)
        mpce_dpf__root(keys[j * key_step], s[j]);
    for (unsigned i = 0; i < depth; i++) {
        unsigned p = depth - 1u - i;

        for (size_t j = 0; j < npts; j++) {
#if defined(__GNUC__)
            /* Many keys: each is 1 KiB apart, so its correction words miss
             * cache; fetch those a few levels ahead while this one runs. */
            if (key_step != 0 && t->key_prefetch != 0 && i + t->key_prefetch < depth)
                __builtin_prefetch(keys[j * key_step]->cw_s[i + t->key_prefetch], 0, 2);
#endif
            dir[j] = (uint8_t)((points[j] >> p) & 1u);
            mpce_dpf__cw_side(keys[j * key_step], i, dir[j], cw[j]);
        }
        if (w->accel != NULL) {
            w->accel->step(w->prg_state, &s[0][0], dir, &cw[0][0], npts);
        } else {
            rc = mpce_dpf__step_generic(w, s, dir, (const uint8_t (*)[16])cw, npts);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

static inline int mpce_dpf__eval_batches(const struct mpce_dpf_walk *w,
                                         const struct mpce_dpf_tuning *t,
                                         const struct mpce_dpf_key_v1 *const *keys,
                                         size_t key_step, const uint64_t *points, size_t n,
                                         uint8_t *out)
{
    uint8_t s[MPCE_DPF_BATCH][16];
    size_t osz = mpce_dpfw_output_bytes(w->group);

    if (w->accel != NULL && w->accel->walk != NULL) {
        w->accel->walk(w->prg_state, keys, key_step, points, n, w->bits, w->group, out);
        return 0;
    }
    for (size_t base = 0; base < n; base += t->batch) {
        size_t cnt = n - base < t->batch ? n - base : t->batch;
        const struct mpce_dpf_key_v1 *const *k = keys + base * key_step;
        int rc = mpce_dpf__walk(w, t, k, key_step, points + base, cnt, w->bits, s);
        if (rc != 0)
            return rc;
        if (key_step == 0) {
            mpce_dpf__leaves(w->group, k[0], (const uint8_t (*)[16])s, cnt, out + base * osz);
        } else {
            for (size_t j = 0; j < cnt; j++)
                mpce_dpf__leaf(w->group, k[j], s[j], out + (base + j) * osz);
        }
    }
    return 0;
}

/* One key at npoints points; out holds npoints output values. */
static inline int mpce_dpfw_eval_points(const struct mpce_dpf_walk *w,
                                       const struct mpce_dpf_tuning *t,
                                       const struct mpce_dpf_key_v1 *key,
                                       const uint64_t *points, size_t npoints, uint8_t *out)
{
    const struct mpce_dpf_key_v1 *const one[1] = {key};
    return mpce_dpf__eval_batches(w, t, one, 0, points, npoints, out);
}

/* Key i at points[i]; out holds nkeys output values. */
static inline int mpce_dpfw_eval_keys(const struct mpce_dpf_walk *w,
                                     const struct mpce_dpf_tuning *t,
                                     const struct mpce_dpf_key_v1 *const *keys,
                                     const uint64_t *points, size_t nkeys, uint8_t *out)
{
    return mpce_dpf__eval_batches(w, t, keys, 1, points, nkeys, out);
}

/* Keys first .. first + n - 1 of a level-major batch, key first + j at
 * points[j]. Without a kernel for the layout, each run of keys is unpacked
 * into whole keys (spec/dpf_batch.h) and walked as eval_keys walks them:
 * the layout's gain is a kernel's to take, the result is the same. */
static inline int mpce_dpfw_eval_batch(const struct mpce_dpf_walk *w,
                                      const struct mpce_dpf_tuning *t,
                                      const struct mpce_dpf_batch_v1 *b, size_t first,
                                      const uint64_t *points, size_t n, uint8_t *out)
{
    if (w->accel != NULL && w->accel->walk_batch != NULL) {
        w->accel->walk_batch(w->prg_state, b, first, points, n, w->bits, w->group, out);
        return 0;
    }
    const size_t run = n < t->batch ? n : t->batch, osz = mpce_dpfw_output_bytes(w->group);
    struct mpce_dpf_key_v1 *keys = malloc((run ? run : 1) * sizeof(*keys));
    const struct mpce_dpf_key_v1 **ptrs = malloc((run ? run : 1) * sizeof(*ptrs));
    int rc = keys != NULL && ptrs != NULL ? 0 : MPCE_ERR_NOMEM;

    for (size_t base = 0; rc == 0 && base < n; base += run) {
        const size_t cnt = n - base < run ? n - base : run;
        mpce_spec_dpf_batch_unpack(b, first + base, cnt, w->bits, w->group, w->kl, w->kr, keys,
                                   ptrs);
        rc = mpce_dpf__eval_batches(w, t, ptrs, 1, points + base, cnt, out + base * osz);
    }
    if (keys != NULL)
        mpce_spec_wipe(keys, run * sizeof(*keys)); /* whole keys: one party's shares */
    free(keys);
    free(ptrs);
    return rc;
}

/* ---- full-domain evaluation ------------------------------------------ */

/* Scratch for one evalall_range call (heap: about 140 KiB at tile 12): two
 * node buffers of 2^tile nodes, their t-bits, and a batch of roots. */
struct mpce_dpf__scratch {
    uint8_t (*nodes[2])[16];
    uint8_t *tb;
    uint64_t roots[MPCE_DPF_BATCH];
    uint8_t rs[MPCE_DPF_BATCH][16];
};

static inline struct mpce_dpf__scratch *mpce_dpf__scratch_new(unsigned tile)
{
    const size_t leaves = (size_t)1 << tile;
    struct mpce_dpf__scratch *sc = malloc(sizeof(*sc) + leaves * 33u);
    if (sc == NULL)
        return NULL;
    uint8_t *mem = (uint8_t *)(sc + 1);
    sc->nodes[0] = (uint8_t (*)[16])mem;
    sc->nodes[1] = (uint8_t (*)[16])(mem + leaves * 16u);
    sc->tb = mem + leaves * 32u;
    return sc;
}

/* Depth of the subtrees below the walked roots. */
static inline unsigned mpce_dpf__subtree_log(unsigned bits, unsigned tile)
{
    return bits <= tile ? bits : tile - MPCE_DPF_FOREST_LOG;
}

/*
 * Outputs for x in [x_begin, x_end) (x_end <= 2^bits, bits <= 32 for the
 * whole domain; any range of a larger domain works too) into out, x_begin's
 * value first. The roots of subtrees of 2^d leaves are reached by batched
 * point walks; up to 2^MPCE_DPF_FOREST_LOG adjacent subtrees are expanded
 * together level by level, one PRG call per level, the children of parent p
 * at 2p and 2p+1 so that the leaves come out in x order. Returns 0,
 * MPCE_ERR_NOMEM or the PRG's error.
 */
static inline int mpce_dpfw_evalall_range(const struct mpce_dpf_walk *w,
                                         const struct mpce_dpf_tuning *t,
                                         const struct mpce_dpf_key_v1 *key, uint64_t x_begin,
                                         uint64_t x_end, uint8_t *out)
{
    const struct mpce_dpf_key_v1 *const one[1] = {key};
    const unsigned d = mpce_dpf__subtree_log(w->bits, t->tile);
    const unsigned top = w->bits - d;
    const size_t forest = (size_t)1 << (t->tile - d);
    const size_t osz = mpce_dpfw_output_bytes(w->group);
    uint8_t cw[64][2][16];
    struct mpce_dpf__scratch *sc;
    uint64_t r_first, r_last;
    int rc = 0, stream;

    if (x_end <= x_begin)
        return 0;
    sc = mpce_dpf__scratch_new(t->tile);
    if (sc == NULL)
        return MPCE_ERR_NOMEM;
    for (unsigned i = top; i < w->bits; i++) {
        mpce_dpf__cw_side(key, i, 0, cw[i][0]);
        mpce_dpf__cw_side(key, i, 1, cw[i][1]);
    }
    stream = (x_end - x_begin) >= MPCE_DPF_STREAM_BYTES / osz;
    r_first = x_begin >> d;
    r_last = (x_end - 1u) >> d;
    for (uint64_t rb = r_first; rb <= r_last && rc == 0; rb += t->batch) {
        size_t cnt = r_last - rb + 1u < t->batch ? (size_t)(r_last - rb + 1u) : t->batch;
        for (size_t q = 0; q < cnt; q++)
            sc->roots[q] = rb + q;
        rc = mpce_dpf__walk(w, t, one, 0, sc->roots, cnt, top, sc->rs);
        for (size_t q0 = 0; q0 < cnt && rc == 0; q0 += forest) {
            size_t count = cnt - q0 < forest ? cnt - q0 : forest;
            unsigned cur = 0;
            uint64_t x0 = sc->roots[q0] << d;
            uint64_t lo, hi;

            /* The whole forest's leaves are wanted: its last level can
             * write outputs directly. */
            int fused = w->accel != NULL && w->accel->expand_leaves != NULL &&
                        x0 >= x_begin && x_end - x0 >= (uint64_t)count << d;

            memcpy(sc->nodes[0], sc->rs[q0], 16 * count);
            for (unsigned i = top; i < w->bits; i++) {
                uint8_t (*par)[16] = sc->nodes[cur];
                uint8_t (*nx)[16] = sc->nodes[cur ^ 1u];
                if (fused && i + 1u == w->bits) {
                    w->accel->expand_leaves(w->prg_state, &par[0][0], out + (x0 - x_begin) * osz,
                                            count, (const uint8_t (*)[16])cw[i], key, w->group,
                                            stream);
                    break;
                }
                if (w->accel != NULL) {
                    w->accel->expand(w->prg_state, &par[0][0], &nx[0][0], count,
                                     (const uint8_t (*)[16])cw[i]);
                } else {
                    rc = mpce_dpf__expand_generic(w, par, nx, count,
                                                  (const uint8_t (*)[16])cw[i], sc->tb);
                    if (rc != 0)
                        break;
                }
                count *= 2u;
                cur ^= 1u;
            }
            if (rc != 0)
                break;
            if (fused)
                continue;
            lo = x0 < x_begin ? x_begin - x0 : 0;
            hi = x_end - x0 < count ? x_end - x0 : count;
            if (lo < hi)
                mpce_dpf__leaves(w->group, key, (const uint8_t (*)[16])(sc->nodes[cur] + lo),
                                 (size_t)(hi - lo), out + (x0 + lo - x_begin) * osz);
        }
        if (rb > UINT64_MAX - t->batch)
            break;
    }
    free(sc);
    return rc;
}

/* All 2^bits outputs (bits <= 32). */
static inline int mpce_dpfw_evalall(const struct mpce_dpf_walk *w,
                                   const struct mpce_dpf_tuning *t,
                                   const struct mpce_dpf_key_v1 *key, uint8_t *out)
{
    return mpce_dpfw_evalall_range(w, t, key, 0, (uint64_t)1 << w->bits, out);
}

/* ---- op-table glue -----------------------------------------------------
 * A backend's dpf.c is MPCE_DPF_SKELETON_OPS(name, its PRG ops, its accel or
 * NULL); the state is a struct mpce_dpf_walk over a PRG state of kL, kR. */

static inline void mpce_dpfw_ctx_free(void *state)
{
    struct mpce_dpf_walk *w = state;

    if (w == NULL)
        return;
    if (w->prg_state != NULL)
        w->prg->ctx_free(w->prg_state);
    free(w);
}

static inline int mpce_dpfw_ctx_new(const struct mpce_prg_ops *prg, void *module,
                                    const struct mpce_dpf_accel *accel, unsigned bits,
                                    unsigned group, const uint8_t *kl, const uint8_t *kr,
                                    void **state)
{
    struct mpce_dpf_walk *w = calloc(1, sizeof *w);
    uint8_t keys[32];
    int rc;

    if (w == NULL)
        return MPCE_ERR_NOMEM;
    w->prg = prg;
    w->accel = accel;
    w->bits = bits;
    w->group = group;
    memcpy(w->kl, kl, 16);
    memcpy(w->kr, kr, 16);
    memcpy(keys, kl, 16);
    memcpy(keys + 16, kr, 16);
    rc = prg->ctx_new(module, keys, 2, &w->prg_state);
    if (rc != 0) {
        w->prg_state = NULL;
        mpce_dpfw_ctx_free(w);
        return rc;
    }
    *state = w;
    return 0;
}

/* The ops: host memory only (the skeleton runs on the CPU); the call
 * carries the knob values. */
static inline int mpce_dpfw_op_gen(void *state, const struct mpce_call *call, uint64_t alpha,
                                   const uint8_t *beta, const uint8_t *s0, const uint8_t *s1,
                                   struct mpce_dpf_key_v1 *key0, struct mpce_dpf_key_v1 *key1)
{
    (void)call;
    return mpce_dpfw_gen(state, alpha, beta, s0, s1, key0, key1);
}

static inline int mpce_dpfw_op_eval(void *state, const struct mpce_call *call,
                                    const struct mpce_dpf_key_v1 *key, const uint64_t *points,
                                    size_t npoints, uint8_t *out)
{
    const struct mpce_dpf_tuning t = mpce_dpf_tuning_of(call);
    return mpce_dpfw_eval_points(state, &t, key, points, npoints, out);
}

static inline int mpce_dpfw_op_eval_keys(void *state, const struct mpce_call *call,
                                         const struct mpce_dpf_key_v1 *const *keys,
                                         const uint64_t *points, size_t nkeys, uint8_t *out)
{
    const struct mpce_dpf_tuning t = mpce_dpf_tuning_of(call);
    return mpce_dpfw_eval_keys(state, &t, keys, points, nkeys, out);
}

static inline int mpce_dpfw_op_eval_batch(void *state, const struct mpce_call *call,
                                          const struct mpce_dpf_batch_v1 *batch, size_t first,
                                          const uint64_t *points, size_t n, uint8_t *out)
{
    const struct mpce_dpf_tuning t = mpce_dpf_tuning_of(call);
    return mpce_dpfw_eval_batch(state, &t, batch, first, points, n, out);
}

static inline int mpce_dpfw_op_evalall(void *state, const struct mpce_call *call,
                                       const struct mpce_dpf_key_v1 *key, uint8_t *out)
{
    const struct mpce_dpf_tuning t = mpce_dpf_tuning_of(call);
    return mpce_dpfw_evalall(state, &t, key, out);
}

static inline int mpce_dpfw_op_evalall_range(void *state, const struct mpce_call *call,
                                             const struct mpce_dpf_key_v1 *key, uint64_t x_begin,
                                             uint64_t x_end, uint8_t *out)
{
    const struct mpce_dpf_tuning t = mpce_dpf_tuning_of(call);
    return mpce_dpfw_evalall_range(state, &t, key, x_begin, x_end, out);
}

/* Defines `const struct mpce_dpf_ops name` over the PRG ops (and accel, may be
 * NULL) that the given expressions yield at ctx_new, where they may use
 * `module` (the module state). */
#define MPCE_DPF_SKELETON_OPS(name, prg_ops, dpf_accel)                                    \
    static int name##_ctx_new(void *module, unsigned bits, unsigned group,                 \
                              const uint8_t *kl, const uint8_t *kr, void **state)          \
    {                                                                                      \
        return mpce_dpfw_ctx_new((prg_ops), module, (dpf_accel), bits, group, kl, kr,      \
                                 state);                                                   \
    }                                                                                      \
    const struct mpce_dpf_ops name = {                                                     \
        .struct_size = sizeof(struct mpce_dpf_ops),                                        \
        .ctx_new = name##_ctx_new,                                                         \
        .ctx_free = mpce_dpfw_ctx_free,                                                    \
        .gen = mpce_dpfw_op_gen,                                                           \
        .eval = mpce_dpfw_op_eval,                                                         \
        .eval_keys = mpce_dpfw_op_eval_keys,                                               \
        .evalall = mpce_dpfw_op_evalall,                                                   \
        .evalall_range = mpce_dpfw_op_evalall_range,                                       \
        .eval_batch = mpce_dpfw_op_eval_batch,                                             \
    }

#endif
