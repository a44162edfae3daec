// SPDX-License-Identifier: Apache-2.0
//
// Embedding libmpcengine in a C++ program: a private engine, one PRG
// context and one NTT context, each checked against an answer known without
// the library. `make check` builds this file as tests/embed_cxx with -Wall
// -Wextra -pedantic (and -Werror with configure --enable-werror) against the
// installed headers only, links it with libmpcengine.so and runs it.
//
// Outside the source tree:
//   c++ embed.cpp $(pkg-config --cflags --libs mpcengine) -o embed
//
// The headers are C with extern "C" guards: no C++ wrapper is needed. Below,
// std::unique_ptr with the library's free functions owns each object.
#include <mpcengine.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace {

struct EngineFree {
    void operator()(mpce_engine *e) const { mpce_engine_free(e); }
};
struct PrgFree {
    void operator()(mpce_prg *c) const { mpce_prg_free(c); }
};
struct NttFree {
    void operator()(mpce_ntt *c) const { mpce_ntt_free(c); }
};
using Engine = std::unique_ptr<mpce_engine, EngineFree>;
using Prg = std::unique_ptr<mpce_prg, PrgFree>;
using Ntt = std::unique_ptr<mpce_ntt, NttFree>;

// Every call returns a status; on failure mpce_last_error() says what went
// wrong and what to do about it.
bool ok(mpce_status st, const char *what)
{
    if (st == MPCE_OK)
        return true;
    std::fprintf(stderr, "embed: %s: %s: %s\n", what, mpce_status_name(st), mpce_last_error());
    return false;
}

bool same(const void *got, const void *want, std::size_t len, const char *what)
{
    if (std::memcmp(got, want, len) == 0) {
        std::printf("embed: %s: as expected\n", what);
        return true;
    }
    std::fprintf(stderr, "embed: %s: wrong result\n", what);
    return false;
}

// AES-128 under two keys: FIPS-197 appendix C.1 in ECB mode, and counter
// mode's first block under the zero key, which is AES_0(0^128).
bool prg(mpce_engine *engine)
{
    std::uint8_t keys[2 * MPCE_BLOCK_BYTES] = {};
    for (int i = 0; i < MPCE_BLOCK_BYTES; i++)
        keys[MPCE_BLOCK_BYTES + i] = static_cast<std::uint8_t>(i);  // 000102..0f
    static const std::uint8_t fips_pt[MPCE_BLOCK_BYTES] = {
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
        0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    static const std::uint8_t fips_ct[MPCE_BLOCK_BYTES] = {
        0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
        0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
    static const std::uint8_t zero_ct[MPCE_BLOCK_BYTES] = {
        0x66, 0xe9, 0x4b, 0xd4, 0xef, 0x8a, 0x2c, 0x3b,
        0x88, 0x4c, 0xfa, 0x59, 0xca, 0x34, 0x2b, 0x2e};

    mpce_prg *raw = nullptr;
    if (!ok(mpce_prg_new(engine, keys, 2, &raw), "mpce_prg_new"))
        return false;
    Prg ctx(raw);  // keys are expanded once, here

    std::uint8_t out[MPCE_BLOCK_BYTES];
    if (!ok(mpce_prg_ecb(ctx.get(), "auto", 1, fips_pt, out, 1), "mpce_prg_ecb") ||
        !same(out, fips_ct, sizeof(out), "prg.ecb, FIPS-197 C.1"))
        return false;
    if (!ok(mpce_prg_ctr(ctx.get(), "auto", 0, 0, out, 1), "mpce_prg_ctr") ||
        !same(out, zero_ct, sizeof(out), "prg.ctr, zero key, counter 0"))
        return false;

    const char *impl = nullptr;
    if (!ok(mpce_prg_resolve(ctx.get(), "auto", "prg.ctr", 1, &impl), "mpce_prg_resolve"))
        return false;
    std::printf("embed: \"auto\" runs prg.ctr on %s\n", impl);
    return true;
}

// The negacyclic product X^(N-1) * X = X^N = -1 in Z_q[X]/(X^N + 1): two
// forward transforms, a pointwise product and the inverse transform give
// the coefficients (q - 1, 0, ..., 0) whatever order the NTT domain uses.
bool ntt(mpce_engine *engine)
{
    const std::size_t n = 16;
    const std::uint64_t q = 12289;  // prime, q = 1 mod 2N

    mpce_ntt *raw = nullptr;
    if (!ok(mpce_ntt_new(engine, n, &q, 1, &raw), "mpce_ntt_new"))
        return false;
    Ntt ctx(raw);

    std::vector<std::uint64_t> a(n, 0), b(n, 0), want(n, 0);
    a[n - 1] = 1;
    b[1] = 1;
    want[0] = q - 1;
    if (!ok(mpce_ntt_forward(ctx.get(), "auto", a.data(), a.data(), 1), "mpce_ntt_forward") ||
        !ok(mpce_ntt_forward(ctx.get(), "auto", b.data(), b.data(), 1), "mpce_ntt_forward") ||
        !ok(mpce_ntt_mul(ctx.get(), "auto", a.data(), b.data(), a.data(), 1), "mpce_ntt_mul") ||
        !ok(mpce_ntt_inverse(ctx.get(), "auto", a.data(), a.data(), 1), "mpce_ntt_inverse"))
        return false;
    return same(a.data(), want.data(), n * sizeof(std::uint64_t), "ntt, X^15 * X = -1");
}

}  // namespace

int main()
{
    // A private engine that reads no configuration, environment or pins and
    // loads no modules, so this program gives the same answer on every
    // machine. An application that wants the administrator's settings and
    // plugins passes NULL options here, or uses the global engine (NULL).
    mpce_options opts;
    std::memset(&opts, 0, sizeof(opts));
    opts.struct_size = sizeof(opts);
    opts.flags = MPCE_OPT_NO_SYSTEM_CONFIG | MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV |
                 MPCE_OPT_NO_TUNE | MPCE_OPT_NO_PLUGINS;

    mpce_engine *raw = nullptr;
    if (!ok(mpce_engine_new(&opts, &raw), "mpce_engine_new"))
        return 1;
    Engine engine(raw);  // freed on return, after the contexts

    std::printf("embed: libmpcengine %s\n", mpce_version());
    if (!prg(engine.get()) || !ntt(engine.get()))
        return 1;
    return 0;
}
