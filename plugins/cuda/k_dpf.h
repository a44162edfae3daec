/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DPF kernels (SPEC.md section 4) and their launchers in the kernel
 * dialect. A thread works on 4 AES blocks at once in the bitsliced AES,
 * each under kL or kR as its own path says (kd_bs_encrypt_sel): 4 (key,
 * point) walks of eval, or both children of 2 nodes in full-domain
 * expansion, or both children of both parties' seeds in gen. Nodes are as
 * in plugins/common/dpf_walk.h: a seed with its control bit in its t-bit
 * (bit 0 of byte 12, bit 0 of column word 3). Secrets (seeds, t-bits,
 * correction words, alpha, beta) select only through masks; the points
 * are public, as in dpf_walk.h.
 */
#ifndef MPCE_CUDA_K_DPF_H
#define MPCE_CUDA_K_DPF_H

#include "plugins/cuda/k_aes.h"
#include "plugins/cuda/kernels.h"

#define KD_DPF_THREADS 128u

/* The children of 4 nodes, one per block position: block b's child on side
 * (sel >> b) & 1, corrected with cw[b] (that level's seed correction, tLCW
 * in its t-bit) and tr[b] (tRCW) where its node's control bit is set. */
KD_DEVICE void kd_dpf_children(const uint64_t *rk, uint32_t node[4][4], unsigned sel,
                               const uint32_t cw[4][4], const unsigned tr[4])
{
    uint64_t q[8];
    uint32_t seed[4][4];
    for (unsigned b = 0; b < 4; b++) {
        for (unsigned k = 0; k < 4; k++)
            seed[b][k] = node[b][k];
        seed[b][3] &= ~1u;
        mpce_bs_pack_block(q, b, seed[b]);
    }
    kd_bs_encrypt_sel(q, rk, rk + CUDA_BS_RK_WORDS, sel);
    for (unsigned b = 0; b < 4; b++) {
        uint32_t c[4];
        mpce_bs_unpack_block(q, b, c);
        const uint32_t t = node[b][3] & 1u, m = 0u - t;
        const unsigned side = (sel >> b) & 1u;
        for (unsigned k = 0; k < 4; k++)
            c[k] ^= seed[b][k];
        /* The child's own t-bit stays where it is; the correction's t-bit
         * is replaced by that side's t correction. */
        const uint32_t tcw = side ? tr[b] : (cw[b][3] & 1u);
        for (unsigned k = 0; k < 3; k++)
            c[k] ^= cw[b][k] & m;
        c[3] ^= ((cw[b][3] & ~1u) | tcw) & m;
        for (unsigned k = 0; k < 4; k++)
            node[b][k] = c[k];
    }
}

/* y = conv(clr s) + t * CW, negated for party 1 (group 1: u64). */
KD_DEVICE void kd_dpf_output(unsigned group, const uint32_t node[4], const uint32_t cwo[4],
                             unsigned party, uint8_t *out)
{
    const uint32_t m = 0u - (node[3] & 1u);
    if (group == 0) {
        uint32_t y[4];
        for (unsigned k = 0; k < 4; k++)
            y[k] = node[k] ^ (cwo[k] & m);
        y[3] ^= node[3] & 1u; /* clr s: only t & CW's t-bit remains there */
        kd_store_block(out, y);
    } else {
        const uint64_t s = (uint64_t)node[0] | (uint64_t)node[1] << 32;
        const uint64_t cw = (uint64_t)cwo[0] | (uint64_t)cwo[1] << 32;
        const uint64_t neg = 0ull - (uint64_t)(party & 1u);
        const uint64_t y = ((s + (cw & (0ull - (uint64_t)(m & 1u)))) ^ neg) - neg;
        /* Little-endian on both sides: one word store where aligned. */
        if (((uintptr_t)out & 7u) == 0) {
            *(uint64_t *)(void *)out = y;
            return;
        }
        for (unsigned k = 0; k < 8; k++)
            out[k] = (uint8_t)(y >> (8 * k));
    }
}

/* Walks of items first .. n-1: item j is key (j / key_div) * key_step at
 * points[j], `depth` levels down; what 0: the leaf's output, 1: the node
 * reached. */
KD_KERNEL(kd_dpf_walk_k, struct cudak_dpf d, struct cudak_dpf_keys keys, unsigned key_step,
          size_t key_div, const uint64_t *points, size_t n, unsigned depth, unsigned what,
          uint8_t *out)
{
    KD_THREADS
    {
        const size_t g = KD_BID * KD_BDIM + kd_tid;
        if (4 * g >= n)
            continue;
        uint32_t node[4][4], cw[4][4];
        unsigned tr[4];
        size_t kj[4];
        uint64_t x[4];
        for (unsigned b = 0; b < 4; b++) {
            /* Past the end: a copy of the last item, never written. */
            const size_t j = 4 * g + b < n ? 4 * g + b : n - 1;
            kj[b] = (key_div == 1 ? j : j / key_div) * key_step;
            x[b] = points[j];
            for (unsigned k = 0; k < 4; k++)
                node[b][k] = keys.seed[4 * kj[b] + k];
            node[b][3] = (node[b][3] & ~1u) | (keys.party[kj[b]] & 1u);
        }
        for (unsigned i = 0; i < depth; i++) {
            unsigned sel = 0;
            for (unsigned b = 0; b < 4; b++) {
                sel |= (unsigned)((x[b] >> (d.bits - 1u - i)) & 1u) << b;
                const uint32_t *row = keys.cw_s + 4 * ((size_t)i * keys.nkeys + kj[b]);
                for (unsigned k = 0; k < 4; k++)
                    cw[b][k] = row[k];
                tr[b] = (unsigned)((keys.cw_tr[kj[b]] >> i) & 1u);
            }
            kd_dpf_children(d.rk, node, sel, cw, tr);
        }
        const size_t osz = what ? 16u : (d.group ? 8u : 16u);
        for (unsigned b = 0; b < 4 && 4 * g + b < n; b++) {
            uint8_t *o = out + osz * (4 * g + b);
            if (what)
                kd_store_block(o, node[b]);
            else
                kd_dpf_output(d.group, node[b], keys.cw_out + 4 * kj[b], keys.party[kj[b]], o);
        }
    }
}

/* Full domains by subtrees, one per block: subtree blk belongs to key
 * blk / per_key and is rooted at roots[blk], a node at level top; its
 * 2^sub_log leaves (top + sub_log = bits) go to out + (blk << sub_log)
 * outputs, in order. The root is expanded breadth first in shared memory
 * to a frontier of up to KD_DPF_FRONTIER nodes (two per thread), then each
 * thread walks its two frontier nodes depth first, in lockstep: both
 * children of both are the bitsliced AES's 4 blocks, so every expansion
 * fills it. The right children wait on a stack of one pair per level, in
 * the thread's own (local) memory. */
#define KD_DPF_FRONTIER_LOG 8u
#define KD_DPF_FRONTIER (1u << KD_DPF_FRONTIER_LOG) /* 2 * KD_DPF_THREADS */
#define KD_DPF_DFS_MAX 24u                          /* levels below the frontier */
#if KD_DPF_FRONTIER != 2 * KD_DPF_THREADS
#error "the depth-first section gives each thread two frontier nodes"
#endif

/* Level `level`'s seed correction (tLCW in its t-bit) and tRCW of key kj,
 * for each of the 4 blocks. */
KD_DEVICE void kd_dpf_level_cw(const struct cudak_dpf_keys *keys, size_t kj, unsigned level,
                               uint32_t cw[4][4], unsigned tr[4])
{
    const uint32_t *row = keys->cw_s + 4 * ((size_t)level * keys->nkeys + kj);
    const unsigned t = (unsigned)((keys->cw_tr[kj] >> level) & 1u);
    for (unsigned b = 0; b < 4; b++) {
        for (unsigned k = 0; k < 4; k++)
            cw[b][k] = row[k];
        tr[b] = t;
    }
}

KD_KERNEL(kd_dpf_subtree_k, struct cudak_dpf d, struct cudak_dpf_keys keys, size_t per_key,
          unsigned top, unsigned sub_log, const uint8_t *roots, uint8_t *out)
{
    KD_SHARED uint32_t front[2][KD_DPF_FRONTIER][4];
    const unsigned flog = sub_log < KD_DPF_FRONTIER_LOG ? sub_log : KD_DPF_FRONTIER_LOG;
    KD_THREADS
    {
        if (kd_tid != 0)
            continue;
        kd_load_block(roots + 16 * KD_BID, front[0][0]);
    }
    KD_SYNC();
    /* Breadth first: level lv holds 2^lv nodes in front[lv & 1]. */
    for (unsigned lv = 0; lv < flog; lv++) {
        KD_THREADS
        {
            const size_t n = (size_t)1 << lv;
            if (2 * (size_t)kd_tid >= n)
                continue;
            uint32_t(*cur)[4] = front[lv & 1u], (*nxt)[4] = front[(lv & 1u) ^ 1u];
            uint32_t node[4][4], cw[4][4];
            unsigned tr[4];
            for (unsigned b = 0; b < 4; b++) {
                const size_t pnode = 2 * (size_t)kd_tid + b / 2 < n ? 2 * (size_t)kd_tid + b / 2
                                                                    : n - 1;
                for (unsigned k = 0; k < 4; k++)
                    node[b][k] = cur[pnode][k];
            }
            kd_dpf_level_cw(&keys, KD_BID / per_key, top + lv, cw, tr);
            kd_dpf_children(d.rk, node, 0xAu, cw, tr); /* blocks 1, 3: right children */
            for (unsigned b = 0; b < 4 && 2 * (size_t)kd_tid + b / 2 < n; b++)
                for (unsigned k = 0; k < 4; k++)
                    nxt[4 * (size_t)kd_tid + b][k] = node[b][k];
        }
        KD_SYNC();
    }
    /* Depth first from the frontier: frontier nodes 2t and 2t + 1. */
    KD_THREADS
    {
        const size_t nf = (size_t)1 << flog;
        if (2 * (size_t)kd_tid >= nf)
            continue;
        const uint32_t(*fr)[4] = front[flog & 1u];
        const size_t kj = KD_BID / per_key;
        const unsigned depth = sub_log - flog, osz = d.group ? 8u : 16u;
        const unsigned pair = 2 * kd_tid + 1 < nf; /* a second node of its own */
        uint32_t cur[2][4], stack[KD_DPF_DFS_MAX][2][4];
        for (unsigned k = 0; k < 4; k++) {
            cur[0][k] = fr[2 * kd_tid][k];
            cur[1][k] = fr[pair ? 2 * kd_tid + 1 : 2 * kd_tid][k];
        }
        uint8_t *base = out + ((KD_BID << sub_log) + ((size_t)2 * kd_tid << depth)) * osz;
        const uint32_t *cwo = keys.cw_out + 4 * kj;
        const unsigned party = keys.party[kj];
        unsigned level = 0;
        for (uint64_t leaf = 0;; leaf++) {
            while (level < depth) {
                uint32_t node[4][4], cw[4][4];
                unsigned tr[4];
                for (unsigned k = 0; k < 4; k++) {
                    node[0][k] = node[1][k] = cur[0][k];
                    node[2][k] = node[3][k] = cur[1][k];
                }
                kd_dpf_level_cw(&keys, kj, top + flog + level, cw, tr);
                kd_dpf_children(d.rk, node, 0xAu, cw, tr);
                for (unsigned k = 0; k < 4; k++) {
                    cur[0][k] = node[0][k];
                    cur[1][k] = node[2][k];
                    stack[level][0][k] = node[1][k];
                    stack[level][1][k] = node[3][k];
                }
                level++;
            }
            kd_dpf_output(d.group, cur[0], cwo, party, base + leaf * osz);
            if (pair)
                kd_dpf_output(d.group, cur[1], cwo, party, base + (((uint64_t)1 << depth) + leaf) * osz);
            if (leaf + 1 == (uint64_t)1 << depth)
                break;
            /* The next leaf turns right where this one's lowest left turn
             * was: j levels above the bottom. */
            unsigned j = 0;
            while ((leaf >> j) & 1u)
                j++;
            level = depth - 1 - j;
            for (unsigned k = 0; k < 4; k++) {
                cur[0][k] = stack[level][0][k];
                cur[1][k] = stack[level][1][k];
            }
            level++;
        }
    }
}

/* Gen for n key pairs, one per thread (SPEC.md's pseudo-code, as
 * mpce_dpfw_gen): its 4 blocks per level are (s0 under kL, s0 under kR,
 * s1 under kL, s1 under kR). Writes per pair: bits seed corrections (tLCW
 * in the t-bit) at cws + 4 * (pair * 64 + i), the tRCW bits, the output
 * correction. */
KD_KERNEL(kd_dpf_gen_k, struct cudak_dpf d, size_t n, const uint64_t *alpha,
          const uint32_t *beta, const uint32_t *s0in, const uint32_t *s1in, uint32_t *cws,
          uint64_t *trs, uint32_t *cwout)
{
    KD_THREADS
    {
        const size_t j = KD_BID * KD_BDIM + kd_tid;
        if (j >= n)
            continue;
        uint32_t s[2][4];
        unsigned t0 = 0, t1 = 1;
        uint64_t trbits = 0;
        for (unsigned k = 0; k < 4; k++) {
            s[0][k] = s0in[4 * j + k];
            s[1][k] = s1in[4 * j + k];
        }
        s[0][3] &= ~1u;
        s[1][3] &= ~1u;
        for (unsigned i = 0; i < d.bits; i++) {
            uint64_t q[8];
            uint32_t ch[4][4], scw[4];
            unsigned tb[4];
            for (unsigned b = 0; b < 4; b++)
                mpce_bs_pack_block(q, b, s[b / 2]);
            kd_bs_encrypt_sel(q, d.rk, d.rk + CUDA_BS_RK_WORDS, 0xAu);
            for (unsigned b = 0; b < 4; b++) {
                mpce_bs_unpack_block(q, b, ch[b]);
                for (unsigned k = 0; k < 4; k++)
                    ch[b][k] ^= s[b / 2][k];
                tb[b] = ch[b][3] & 1u;
                ch[b][3] &= ~1u;
            }
            const unsigned a = (unsigned)((alpha[j] >> (d.bits - 1u - i)) & 1u);
            const uint32_t am = 0u - a;
            for (unsigned k = 0; k < 4; k++) {
                const uint32_t lo = ch[1][k] ^ ch[3][k], hi = ch[0][k] ^ ch[2][k];
                scw[k] = lo ^ ((lo ^ hi) & am);
            }
            const unsigned tlcw = tb[0] ^ tb[2] ^ a ^ 1u, trcw = tb[1] ^ tb[3] ^ a;
            const unsigned tkeep = (tlcw & (a ^ 1u)) | (trcw & a);
            const unsigned t0keep = (tb[0] & (a ^ 1u)) | (tb[1] & a);
            const unsigned t1keep = (tb[2] & (a ^ 1u)) | (tb[3] & a);
            const uint32_t m0 = 0u - t0, m1 = 0u - t1;
            for (unsigned k = 0; k < 4; k++) {
                s[0][k] = (ch[0][k] ^ ((ch[0][k] ^ ch[1][k]) & am)) ^ (scw[k] & m0);
                s[1][k] = (ch[2][k] ^ ((ch[2][k] ^ ch[3][k]) & am)) ^ (scw[k] & m1);
            }
            t0 = t0keep ^ (t0 & tkeep);
            t1 = t1keep ^ (t1 & tkeep);
            uint32_t *o = cws + 4 * (j * 64 + i);
            for (unsigned k = 0; k < 4; k++)
                o[k] = scw[k];
            o[3] |= tlcw;
            trbits |= (uint64_t)trcw << i;
        }
        trs[j] = trbits;
        uint32_t *co = cwout + 4 * j;
        if (d.group == 0) {
            for (unsigned k = 0; k < 4; k++)
                co[k] = beta[4 * j + k] ^ s[0][k] ^ s[1][k];
        } else {
            const uint64_t b64 = (uint64_t)beta[4 * j] | (uint64_t)beta[4 * j + 1] << 32;
            const uint64_t v = b64 - ((uint64_t)s[0][0] | (uint64_t)s[0][1] << 32) +
                               ((uint64_t)s[1][0] | (uint64_t)s[1][1] << 32);
            const uint64_t neg = 0ull - (uint64_t)t1;
            const uint64_t c = (v ^ neg) - neg;
            co[0] = (uint32_t)c;
            co[1] = (uint32_t)(c >> 32);
            co[2] = co[3] = 0;
        }
    }
}

/* ---- launchers ---- */

KD_LAUNCHER void cudak_dpf_eval(cudak_stream s, const struct cudak_dpf *d,
                                const struct cudak_dpf_keys *keys, unsigned key_step,
                                const uint64_t *points, size_t n, uint8_t *out)
{
    KD_LAUNCH(kd_dpf_walk_k, kd_ceil_div(kd_ceil_div(n, 4), KD_DPF_THREADS), KD_DPF_THREADS, s,
              *d, *keys, key_step, (size_t)1, points, n, d->bits, 0u, out);
}

KD_LAUNCHER void cudak_dpf_subtrees(cudak_stream s, const struct cudak_dpf *d,
                                    const struct cudak_dpf_keys *keys, size_t per_key,
                                    const uint64_t *points, size_t n, unsigned sub_log,
                                    uint8_t *roots, uint8_t *out)
{
    /* Out of range (callers check first): nothing launched rather than a
     * walk of 2^32 levels or a stack written past its end. */
    if (sub_log > d->bits || sub_log > KD_DPF_FRONTIER_LOG + KD_DPF_DFS_MAX || per_key == 0 ||
        n == 0)
        return;
    const unsigned top = d->bits - sub_log;
    KD_LAUNCH(kd_dpf_walk_k, kd_ceil_div(kd_ceil_div(n, 4), KD_DPF_THREADS), KD_DPF_THREADS, s,
              *d, *keys, 1u, per_key, points, n, top, 1u, roots);
    KD_LAUNCH(kd_dpf_subtree_k, n, KD_DPF_THREADS, s, *d, *keys, per_key, top, sub_log, roots,
              out);
}

KD_LAUNCHER void cudak_dpf_gen(cudak_stream s, const struct cudak_dpf *d, size_t n,
                               const uint64_t *alpha, const uint32_t *beta, const uint32_t *s0,
                               const uint32_t *s1, uint32_t *cws, uint64_t *trs, uint32_t *cwout)
{
    KD_LAUNCH(kd_dpf_gen_k, kd_ceil_div(n, KD_DPF_THREADS), KD_DPF_THREADS, s, *d, n, alpha, beta,
              s0, s1, cws, trs, cwout);
}

#endif
