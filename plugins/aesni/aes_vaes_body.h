/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The VAES kernels, written once for both register widths. Not a header of
 * its own: aes_vaes256.c and aes_vaes512.c include it last, each compiled
 * with its own ISA flags, after defining for their width
 *
 *   vec, LANES           the register type and the blocks it holds
 *   KW, RK_LANES, SEL_LANES  a lane-laid round key's bytes (16 * LANES) and
 *                        the schedule's tables of them (rk2/sel2, rk4/sel4)
 *   vmask, lanes(cnt, l) which of register l's blocks (LANES*l ..) are among
 *                        the first cnt
 *   ld, st               a whole register, unaligned
 *   ldm, stm             only the blocks a vmask names: the others read as
 *                        zero, are never written, and never fault
 *   ld_key, bcast_block  an aligned lane-laid round key; one block to all
 *   vxor, vadd64, aesenc, aesenclast
 *   ctr_first(c0)        block h holds (c0 + h, 0)
 *   ctr_splat(x)         every block holds (x, 0)
 *   ld_blocks(p)         block h from p[h]
 *   dup_seeds(p, safe, have)  the m = 2 layout: LANES / 2 seeds from p, each
 *                        twice; `have` of them exist (none: read `safe`,
 *                        which does, or nothing)
 *   tmask, clr_t         a node's control bit as a block mask; cleared
 *   xor_and(a, c, m)     a ^ (c & m)
 *   bcast_cw_pair(cw)    cw[0], cw[1] in each pair of blocks
 *
 * R registers are in flight: enough independent AES chains to cover the
 * aesenc latency, and with 11 resident round keys still within the register
 * file.
 */
#ifndef MPCE_AES_VAES_BODY_H
#define MPCE_AES_VAES_BODY_H

#define R 8
#define B (LANES * R)  /* blocks per iteration */
#define SPR (LANES / 2) /* seeds per register in the m = 2 layout */
#define AI inline __attribute__((always_inline))

static inline void bcast_keys(const uint8_t *rk, vec k[11])
{
    for (unsigned r = 0; r < 11; r++)
        k[r] = bcast_block(rk + 16 * r);
}

static inline void load_keys(const uint8_t (*rk)[KW], vec k[11])
{
    for (unsigned r = 0; r < 11; r++)
        k[r] = ld_key(rk[r]);
}

/* The rounds unroll too: as a loop, GCC copies every state register once
 * per round, and the kernels' speed then hangs on where that loop lands. */
static inline void enc_r(vec b[R], const vec k[11])
{
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = vxor(b[i], k[0]);
#pragma GCC unroll 9
    for (unsigned r = 1; r < 10; r++) {
#pragma GCC unroll 8
        for (unsigned i = 0; i < R; i++)
            b[i] = aesenc(b[i], k[r]);
    }
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = aesenclast(b[i], k[10]);
}

/* Register i under its own lane-laid round keys kp[i], in three steps so
 * that a caller can choose how far the rounds unroll. */
static AI void lanes_whiten(vec b[R], const uint8_t (*const kp[R])[KW])
{
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = vxor(b[i], ld_key(kp[i][0]));
}

static AI void lanes_round(vec b[R], const uint8_t (*const kp[R])[KW], unsigned r)
{
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = aesenc(b[i], ld_key(kp[i][r]));
}

static AI void lanes_last(vec b[R], const uint8_t (*const kp[R])[KW])
{
#pragma GCC unroll 8
    for (unsigned i = 0; i < R; i++)
        b[i] = aesenclast(b[i], ld_key(kp[i][10]));
}

static inline void enc_r_lanes(vec b[R], const uint8_t (*const kp[R])[KW])
{
    lanes_whiten(b, kp);
    for (unsigned r = 1; r < 10; r++)
        lanes_round(b, kp, r);
    lanes_last(b, kp);
}

static void vaes_ecb(const struct aesni_sched *ks, size_t j, const uint8_t *in, uint8_t *out,
                     size_t n)
{
    vec k[11], b[R];
    size_t i = 0;

    bcast_keys(ks->rk[j], k);
    for (; i + B <= n; i += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = ld(in + 16 * (i + LANES * l));
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            st(out + 16 * (i + LANES * l), b[l]);
    }
    if (i < n) {
        size_t rem = n - i;
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = ldm(in + 16 * (i + LANES * l), lanes(rem, l));
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            stm(out + 16 * (i + LANES * l), lanes(rem, l), b[l]);
    }
}

/* Counter lanes are 64-bit words beside zero words: the adds wrap mod 2^64. */
static void vaes_ctr(const struct aesni_sched *ks, size_t j, uint64_t c0, uint8_t *out, size_t n)
{
    vec k[11], b[R];
    vec ctr = ctr_first(c0);
    const vec step = ctr_splat(B);

    bcast_keys(ks->rk[j], k);
    for (size_t i = 0; i < n; i += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = vadd64(ctr, ctr_splat(LANES * l));
        ctr = vadd64(ctr, step);
        enc_r(b, k);
        if (n - i >= B) {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                st(out + 16 * (i + LANES * l), b[l]);
        } else {
#pragma GCC unroll 8
            for (unsigned l = 0; l < R; l++)
                stm(out + 16 * (i + LANES * l), lanes(n - i, l), b[l]);
        }
    }
}

/* The outputs of seeds i .. i+cnt-1 (cnt <= SPR * R) in the m = 2 layout,
 * two blocks per seed, in order. */
static inline void store_m2(uint8_t *out, size_t i, size_t cnt, const vec b[R])
{
    if (cnt == SPR * R) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            st(out + 32 * (i + SPR * l), b[l]);
    } else {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            stm(out + 32 * (i + SPR * l), lanes(2 * cnt, l), b[l]);
    }
}

/* Seed i + SPR*l .. of p in the m = 2 layout, of seeds i .. i+cnt-1. */
static inline vec dup_reg(const uint8_t *p, size_t i, size_t cnt, unsigned l)
{
    size_t have = cnt > SPR * l ? cnt - SPR * l : 0;

    return dup_seeds(p + 16 * (i + SPR * l), p + 16 * i, have);
}

/* m = 2, the DPF shape: each seed under (k0, k1), its two outputs adjacent,
 * so the lane keys stay in registers. */
static void mmo_m2(const struct aesni_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    vec k[11], b[R], s[R];

    load_keys(ks->RK_LANES[0], k);
    for (size_t i = 0; i < n; i += SPR * R) {
        size_t cnt = n - i < SPR * R ? n - i : SPR * R;
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = s[l] = dup_reg(seeds, i, cnt, l);
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = vxor(b[l], s[l]);
        store_m2(out, i, cnt, b);
    }
}

static void mmo_m1(const struct aesni_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    vec k[11], b[R], s[R];

    bcast_keys(ks->rk[0], k);
    for (size_t i = 0; i < n; i += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            b[l] = s[l] = ldm(seeds + 16 * (i + LANES * l), lanes(n - i, l));
        enc_r(b, k);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            stm(out + 16 * (i + LANES * l), lanes(n - i, l), vxor(b[l], s[l]));
    }
}

/* Any m: output f = i*m + j is seed i under key j; register l holds outputs
 * f + LANES*l .., whose lane keys start at key (f + LANES*l) mod m. */
static void vaes_mmo(const struct aesni_sched *ks, const uint8_t *seeds, uint8_t *out, size_t n)
{
    const size_t m = ks->m, total = n * m;
    const uint8_t (*kp[R])[KW];
    vec b[R], s[R];
    size_t si = 0, kj = 0;

    if (m == 2) {
        mmo_m2(ks, seeds, out, n);
        return;
    }
    if (m == 1) {
        mmo_m1(ks, seeds, out, n);
        return;
    }
    for (size_t f = 0; f < total; f += B) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            const uint8_t *p[LANES];
            kp[l] = ks->RK_LANES[kj];
            for (unsigned h = 0; h < LANES; h++) {
                /* Lanes past the end read seed 0 and are never stored. */
                p[h] = seeds + 16 * (f + LANES * l + h < total ? si : 0);
                if (++kj == m) {
                    kj = 0;
                    si++;
                }
            }
            b[l] = s[l] = ld_blocks(p);
        }
        enc_r_lanes(b, kp);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++)
            stm(out + 16 * (f + LANES * l), lanes(total - f, l), vxor(b[l], s[l]));
    }
}

/* The children of parents i .. i+cnt-1 (cnt <= SPR * R) in the m = 2
 * layout, corrected where the parent's control bit is set. */
static inline void expand_r(const vec k[11], const uint8_t *parents, size_t i, size_t cnt,
                            vec cwv, vec b[R])
{
    vec s[R], tm[R];

#pragma GCC unroll 8
    for (unsigned l = 0; l < R; l++) {
        vec x = dup_reg(parents, i, cnt, l);
        tm[l] = tmask(x);
        b[l] = s[l] = clr_t(x);
    }
    enc_r(b, k);
#pragma GCC unroll 8
    for (unsigned l = 0; l < R; l++)
        b[l] = xor_and(vxor(b[l], s[l]), cwv, tm[l]);
}

/* The m = 2 mmo with the parent's control bit selecting the corrections. */
static void vaes_dpf_expand(const struct aesni_sched *ks, const uint8_t *parents,
                            uint8_t *children, size_t n, const uint8_t cw[2][16])
{
    const vec cwv = bcast_cw_pair(cw);
    vec k[11], b[R];

    load_keys(ks->RK_LANES[0], k);
    for (size_t i = 0; i < n; i += SPR * R) {
        size_t cnt = n - i < SPR * R ? n - i : SPR * R;
        expand_r(k, parents, i, cnt, cwv, b);
        store_m2(children, i, cnt, b);
    }
}

static void vaes_dpf_step(const struct aesni_sched *ks, uint8_t *nodes, const uint8_t *dir,
                          const uint8_t *cw, size_t n)
{
    const uint8_t (*kp[R])[KW];
    vec b[R], s[R], tm[R];

    for (size_t i = 0; i < n; i += B) {
        size_t cnt = n - i < B ? n - i : B;
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            unsigned c = 0;
            for (unsigned h = 0; h < LANES; h++)
                if (LANES * l + h < cnt)
                    c |= (dir[i + LANES * l + h] & 1u) << h;
            vec x = ldm(nodes + 16 * (i + LANES * l), lanes(cnt, l));
            kp[l] = ks->SEL_LANES[c];
            tm[l] = tmask(x);
            b[l] = s[l] = clr_t(x);
        }
        enc_r_lanes(b, kp);
#pragma GCC unroll 8
        for (unsigned l = 0; l < R; l++) {
            vmask mk = lanes(cnt, l);
            stm(nodes + 16 * (i + LANES * l), mk,
                xor_and(vxor(b[l], s[l]), ldm(cw + 16 * (i + LANES * l), mk), tm[l]));
        }
    }
}

#endif
