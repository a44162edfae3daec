/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NTL as a peer of the NTT rows. NTL has no negacyclic transform of its
 * own: its FFT (TofftRep on a zz_pX, size N = 2^k) is cyclic. Multiplying
 * a_i by psi^i first, with psi a square root of NTL's N-th root of unity,
 * turns it into the negacyclic transform (in NTL's own output order), which
 * is the closest equivalent of ours; the twist costs N multiplications with
 * precomputed quotients (MulModPrecon), as our Shoup-style butterflies do.
 * The inverse is FromfftRep followed by the psi^-i untwist (N^-1 folded in
 * if NTL leaves it out). setup checks both before anything is timed.
 */
#include "config.h"

#include <NTL/lzz_pX.h>

#include <cstdint>
#include <new>
#include <vector>

#include "tools/bench/bench_ntl.h"

namespace {

struct ntl_ntt {
    NTL::zz_pContext ctx;      // the user FFT prime, restored before each run
    long n = 0, k = 0, batch = 0, q = 0;
    bool inverse = false;
    std::vector<long> in;      // batch * n canonical inputs
    std::vector<long> tw, untw;
    std::vector<NTL::mulmod_precon_t> twp, untwp;
    NTL::zz_pX x;              // scratch polynomial of n coefficients
    std::vector<NTL::fftRep> reps;  // forward: outputs; inverse: saved inputs
    NTL::fftRep scratch;
    std::vector<NTL::zz_p> coef;
    std::vector<long> out;
};

long log2_exact(long n)
{
    long k = 0;
    while ((1L << k) < n)
        k++;
    return (1L << k) == n ? k : -1;
}

void forward_one(ntl_ntt *s, const long *a, NTL::fftRep &r)
{
    for (long i = 0; i < s->n; i++)
        s->x.rep[i].LoopHole() = NTL::MulModPrecon(a[i], s->tw[i], s->q, s->twp[i]);
    NTL::TofftRep(r, s->x, s->k, 0, s->n - 1);
}

// FromfftRep consumes its input, so the saved transform is copied first.
void inverse_one(ntl_ntt *s, const NTL::fftRep &saved, long *out)
{
    s->scratch = saved;
    NTL::FromfftRep(s->coef.data(), s->scratch, 0, s->n - 1);
    for (long i = 0; i < s->n; i++)
        out[i] = NTL::MulModPrecon(NTL::rep(s->coef[i]), s->untw[i], s->q, s->untwp[i]);
}

void set_untwist(ntl_ntt *s, long psi_inv, long scale)
{
    long v = scale;
    NTL::mulmod_t qinv = NTL::zz_p::ModulusInverse();
    for (long i = 0; i < s->n; i++) {
        s->untw[i] = v;
        s->untwp[i] = NTL::PrepMulModPrecon(v, s->q, qinv);
        v = NTL::MulMod(v, psi_inv, s->q, qinv);
    }
}

/* Forward of X must land on roots of X^N + 1 (y^N = -1: negacyclic, not
 * cyclic), and inverse(forward(a)) must give a back: fixes the N^-1 factor. */
bool check(ntl_ntt *s, long psi_inv)
{
    std::vector<long> a(s->n, 0), back(s->n);
    a[1] = 1;
    NTL::fftRep r;
    forward_one(s, a.data(), r);
    for (long j = 0; j < 4; j++) {
        NTL::zz_p y;
        y.LoopHole() = r.tbl[0][j] % s->q;
        if (NTL::rep(NTL::power(y, s->n)) != s->q - 1)
            return false;
    }
    set_untwist(s, psi_inv, 1);
    inverse_one(s, r, back.data());
    if (back == a)
        return true;
    long ninv = NTL::InvMod(s->n % s->q, s->q);
    set_untwist(s, psi_inv, ninv);
    inverse_one(s, r, back.data());
    return back == a;
}

int setup(const mpce_bench_case *c, void *arg, void **state, bool inverse)
{
    uint64_t n, batch, q;
    if (mpce_bench_param(c, "N", &n) != MPCE_OK || mpce_bench_param(c, "B", &batch) != MPCE_OK ||
        mpce_bench_param(c, "q", &q) != MPCE_OK || q >= (UINT64_C(1) << NTL_SP_NBITS))
        return 1;
    ntl_ntt *s = new (std::nothrow) ntl_ntt;
    if (!s)
        return 1;
    try {
        s->n = (long)n;
        s->k = log2_exact(s->n);
        s->batch = (long)batch;
        s->q = (long)q;
        s->inverse = inverse;
        NTL::zz_p::UserFFTInit(s->q);
        s->ctx.save();
        const NTL::FFTPrimeInfo *info = NTL::zz_pInfo->p_info;
        if (!info || s->k < 1 || s->k + 1 >= info->RootTable[0].length())
            throw 0;
        long psi = info->RootTable[0][s->k + 1];
        long psi_inv = NTL::InvMod(psi, s->q);
        NTL::mulmod_t qinv = NTL::zz_p::ModulusInverse();
        s->tw.resize(s->n);
        s->twp.resize(s->n);
        s->untw.resize(s->n);
        s->untwp.resize(s->n);
        for (long i = 0, v = 1; i < s->n; i++) {
            s->tw[i] = v;
            s->twp[i] = NTL::PrepMulModPrecon(v, s->q, qinv);
            v = NTL::MulMod(v, psi, s->q, qinv);
        }
        s->x.rep.SetLength(s->n);
        s->coef.resize(s->n);
        s->scratch.SetSize(s->k);
        if (!check(s, psi_inv))
            throw 0;
        uint64_t seed = 11;
        s->in.resize(s->n * s->batch);
        for (long &v : s->in) {
            seed = seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
            v = (long)((seed >> 4) % q);
        }
        s->reps.resize(s->batch);
        for (long b = 0; b < s->batch; b++) {
            s->reps[b].SetSize(s->k);
            forward_one(s, s->in.data() + b * s->n, s->reps[b]);
        }
        s->out.assign(s->n * s->batch, 0);
    } catch (...) {
        delete s;
        return 1;
    }
    *state = s;
    return 0;
}

int setup_forward(const mpce_bench_case *c, void *arg, void **state)
{
    return setup(c, arg, state, false);
}

int setup_inverse(const mpce_bench_case *c, void *arg, void **state)
{
    return setup(c, arg, state, true);
}

int run(void *state)
{
    ntl_ntt *s = static_cast<ntl_ntt *>(state);
    try {
        s->ctx.restore();
        for (long b = 0; b < s->batch; b++) {
            if (s->inverse)
                inverse_one(s, s->reps[b], s->out.data() + b * s->n);
            else
                forward_one(s, s->in.data() + b * s->n, s->reps[b]);
        }
    } catch (...) {
        return MPCE_ERR_BACKEND;
    }
    return 0;
}

void teardown(void *state)
{
    delete static_cast<ntl_ntt *>(state);
}

const mpce_bench_peer peers[] = {
    {sizeof(mpce_bench_peer), "ntl", "ntt.forward",
     "NTL TofftRep (cyclic FFT) after a psi twist = negacyclic, NTL's order", setup_forward,
     run, teardown, nullptr},
    {sizeof(mpce_bench_peer), "ntl", "ntt.inverse",
     "fftRep copy (FromfftRep consumes it), FromfftRep, psi^-i untwist", setup_inverse, run,
     teardown, nullptr},
};

}  // namespace

extern "C" const mpce_bench_peer *bench_ntl_peers(size_t *count)
{
    *count = sizeof(peers) / sizeof(peers[0]);
    return peers;
}
