/*
 * The DPF tree algorithms (SPEC.md section 4), written once over a batch PRG
 * for every backend. The backend supplies a PRG state holding two keys,
 * kL = key 0 and kR = key 1, so that mmo() is the length-doubling G and
 * ecb(key b) ^ seed is child b alone.
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

/* Points (or subtree roots) walked together: one or two ecb calls per level. */
#define MPCE_DPF_BATCH 256u
/* Full-domain evaluation expands subtrees of 2^12 leaves breadth-first, one
 * mmo call per level, so memory stays O(4096 blocks) for any domain. */
#define MPCE_DPF_SUBTREE_LOG 12u

struct mpce_dpf_walk {
    const struct mpce_prg_vtable *prg;
    void *prg_state;   /* keys kL (index 0), kR (index 1) */
    unsigned bits;     /* 1..64 */
    unsigned group;    /* 0 bytes, 1 u64 */
    uint8_t kl[16];
    uint8_t kr[16];
};

/* The control bit: bit 0 of byte 12. */
static inline unsigned mpce_dpf_tbit(const uint8_t *b)
{
    return b[12] & 1u;
}

static inline void mpce_dpf_clr(uint8_t *b)
{
    b[12] &= 0xfeu;
}

static inline uint64_t mpce_dpf__le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8u * i);
    return v;
}

static inline void mpce_dpf__put64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8u * i));
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

/*
 * Correct child c (side 0 = L, 1 = R) of a node with control bit t at
 * `level`: take and clear its t-bit, then when t is 1 XOR in the seed
 * correction and the side's t correction. Returns the child's control bit.
 */
static inline unsigned mpce_dpf__correct(uint8_t *c, unsigned side, unsigned t,
                                         const struct mpce_dpf_key_v1 *key, unsigned level)
{
    uint8_t cw[16];
    unsigned tc = mpce_dpf_tbit(c);
    unsigned tl, tcw;

    mpce_dpf_clr(c);
    memcpy(cw, key->cw_s[level], 16);
    tl = mpce_dpf_tbit(cw);
    mpce_dpf_clr(cw);
    mpce_dpf__xor_masked(c, cw, (uint8_t)(0u - t));
    tcw = side ? mpce_dpf__tr(key, level) : tl;
    return tc ^ (t & tcw);
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
    return group == 0 ? 16u : 8u;
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

        rc = w->prg->mmo(w->prg_state, &seeds[0][0], &ch[0][0], 2);
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

/* ---- point walks ------------------------------------------------------ */

/*
 * Walk `depth` levels for npts (<= MPCE_DPF_BATCH) points: point j follows
 * the low `depth` bits of points[j], most significant first, from the root
 * of keys[j * key_step]; level i uses correction word i. Leaves the reached
 * seeds in s[j] and control bits in t[j].
 */
static inline int mpce_dpf__walk(const struct mpce_dpf_walk *w,
                                 const struct mpce_dpf_key_v1 *const *keys, size_t key_step,
                                 const uint64_t *points, size_t npts, unsigned depth,
                                 uint8_t (*s)[16], uint8_t *t)
{
    uint8_t in[MPCE_DPF_BATCH][16], ob[MPCE_DPF_BATCH][16];
    uint16_t order[MPCE_DPF_BATCH];
    int rc;

    for (size_t j = 0; j < npts; j++) {
        memcpy(s[j], keys[j * key_step]->seed, 16);
        t[j] = (uint8_t)(keys[j * key_step]->party & 1u);
    }
    for (unsigned i = 0; i < depth; i++) {
        unsigned p = depth - 1u - i;
        size_t nl = 0, q;

        for (size_t j = 0; j < npts; j++)
            if (((points[j] >> p) & 1u) == 0)
                order[nl++] = (uint16_t)j;
        q = nl;
        for (size_t j = 0; j < npts; j++)
            if (((points[j] >> p) & 1u) != 0)
                order[q++] = (uint16_t)j;
        for (q = 0; q < npts; q++)
            memcpy(in[q], s[order[q]], 16);
        if (nl > 0 && (rc = w->prg->ecb(w->prg_state, 0, &in[0][0], &ob[0][0], nl)) != 0)
            return rc;
        if (npts > nl &&
            (rc = w->prg->ecb(w->prg_state, 1, &in[nl][0], &ob[nl][0], npts - nl)) != 0)
            return rc;
        for (q = 0; q < npts; q++) {
            size_t j = order[q];
            for (unsigned b = 0; b < 16; b++)
                ob[q][b] ^= in[q][b];
            t[j] = (uint8_t)mpce_dpf__correct(ob[q], q >= nl, t[j], keys[j * key_step], i);
            memcpy(s[j], ob[q], 16);
        }
    }
    return 0;
}

static inline int mpce_dpf__eval_batches(const struct mpce_dpf_walk *w,
                                         const struct mpce_dpf_key_v1 *const *keys,
                                         size_t key_step, const uint64_t *points, size_t n,
                                         uint8_t *out)
{
    uint8_t s[MPCE_DPF_BATCH][16], t[MPCE_DPF_BATCH];
    size_t osz = mpce_dpfw_output_bytes(w->group);

    for (size_t base = 0; base < n; base += MPCE_DPF_BATCH) {
        size_t cnt = n - base < MPCE_DPF_BATCH ? n - base : MPCE_DPF_BATCH;
        const struct mpce_dpf_key_v1 *const *k = keys + base * key_step;
        int rc = mpce_dpf__walk(w, k, key_step, points + base, cnt, w->bits, s, t);
        if (rc != 0)
            return rc;
        for (size_t j = 0; j < cnt; j++)
            mpce_dpf__output(w->group, k[j * key_step], s[j], t[j], out + (base + j) * osz);
    }
    return 0;
}

/* One key at npoints points; out holds npoints output values. */
static inline int mpce_dpfw_eval_points(const struct mpce_dpf_walk *w,
                                       const struct mpce_dpf_key_v1 *key,
                                       const uint64_t *points, size_t npoints, uint8_t *out)
{
    const struct mpce_dpf_key_v1 *const one[1] = {key};
    return mpce_dpf__eval_batches(w, one, 0, points, npoints, out);
}

/* Key i at points[i]; out holds nkeys output values. */
static inline int mpce_dpfw_eval_keys(const struct mpce_dpf_walk *w,
                                     const struct mpce_dpf_key_v1 *const *keys,
                                     const uint64_t *points, size_t nkeys, uint8_t *out)
{
    return mpce_dpf__eval_batches(w, keys, 1, points, nkeys, out);
}

/* ---- full-domain evaluation ------------------------------------------ */

/* Scratch for one evalall_range call (heap: about 140 KiB). */
struct mpce_dpf__scratch {
    uint8_t nodes[2][(size_t)1 << MPCE_DPF_SUBTREE_LOG][16];
    uint8_t tbits[2][(size_t)1 << MPCE_DPF_SUBTREE_LOG];
    uint64_t roots[MPCE_DPF_BATCH];
    uint8_t rs[MPCE_DPF_BATCH][16];
    uint8_t rt[MPCE_DPF_BATCH];
};

/* Leaves per subtree: ranges aligned to this split without waste. */
static inline uint64_t mpce_dpfw_evalall_chunk(unsigned bits)
{
    return (uint64_t)1 << (bits < MPCE_DPF_SUBTREE_LOG ? bits : MPCE_DPF_SUBTREE_LOG);
}

/*
 * Outputs for x in [x_begin, x_end) (x_end <= 2^bits, bits <= 32 for the
 * whole domain; any range of a larger domain works too) into out, x_begin's
 * value first. Each subtree of mpce_dpfw_evalall_chunk(bits) leaves is
 * expanded level by level with one mmo call; its root is reached by a
 * batched point walk. Returns 0, MPCE_ERR_NOMEM or the PRG's error.
 */
static inline int mpce_dpfw_evalall_range(const struct mpce_dpf_walk *w,
                                         const struct mpce_dpf_key_v1 *key, uint64_t x_begin,
                                         uint64_t x_end, uint8_t *out)
{
    const struct mpce_dpf_key_v1 *const one[1] = {key};
    unsigned d = w->bits < MPCE_DPF_SUBTREE_LOG ? w->bits : MPCE_DPF_SUBTREE_LOG;
    unsigned top = w->bits - d;
    size_t osz = mpce_dpfw_output_bytes(w->group);
    struct mpce_dpf__scratch *sc;
    uint64_t r_first, r_last;
    int rc = 0;

    if (x_end <= x_begin)
        return 0;
    sc = malloc(sizeof *sc);
    if (sc == NULL)
        return MPCE_ERR_NOMEM;
    r_first = x_begin >> d;
    r_last = (x_end - 1u) >> d;
    for (uint64_t rb = r_first; rb <= r_last && rc == 0; rb += MPCE_DPF_BATCH) {
        size_t cnt = r_last - rb + 1u < MPCE_DPF_BATCH ? (size_t)(r_last - rb + 1u)
                                                       : MPCE_DPF_BATCH;
        for (size_t q = 0; q < cnt; q++)
            sc->roots[q] = rb + q;
        rc = mpce_dpf__walk(w, one, 0, sc->roots, cnt, top, sc->rs, sc->rt);
        for (size_t q = 0; q < cnt && rc == 0; q++) {
            unsigned cur = 0;
            size_t count = 1;
            uint64_t x0 = sc->roots[q] << d;
            uint64_t lo, hi;

            memcpy(sc->nodes[0][0], sc->rs[q], 16);
            sc->tbits[0][0] = sc->rt[q];
            for (unsigned i = top; i < w->bits; i++) {
                uint8_t (*nx)[16] = sc->nodes[cur ^ 1u];
                uint8_t *nt = sc->tbits[cur ^ 1u];
                const uint8_t *pt = sc->tbits[cur];
                rc = w->prg->mmo(w->prg_state, &sc->nodes[cur][0][0], &nx[0][0], count);
                if (rc != 0)
                    break;
                for (size_t c = 0; c < 2u * count; c++)
                    nt[c] = (uint8_t)mpce_dpf__correct(nx[c], (unsigned)(c & 1u), pt[c >> 1],
                                                       key, i);
                count *= 2u;
                cur ^= 1u;
            }
            if (rc != 0)
                break;
            lo = x0 < x_begin ? x_begin - x0 : 0;
            hi = x_end - x0 < count ? x_end - x0 : count;
            for (uint64_t j = lo; j < hi; j++)
                mpce_dpf__output(w->group, key, sc->nodes[cur][j], sc->tbits[cur][j],
                                 out + (x0 + j - x_begin) * osz);
        }
        if (rb > UINT64_MAX - MPCE_DPF_BATCH)
            break;
    }
    free(sc);
    return rc;
}

/* All 2^bits outputs (bits <= 32). */
static inline int mpce_dpfw_evalall(const struct mpce_dpf_walk *w,
                                   const struct mpce_dpf_key_v1 *key, uint8_t *out)
{
    return mpce_dpfw_evalall_range(w, key, 0, (uint64_t)1 << w->bits, out);
}

#endif
