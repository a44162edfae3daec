/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The built-in peers: OpenSSL EVP AES-128, which the PRG rows are measured
 * against (DESIGN.md: the EVP baseline printed beside our own figures).
 * Each peer does the same work as the row: as many blocks written.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "tools/bench/bench.h"

/* EVP_EncryptUpdate takes an int length. */
#define EVP_STEP ((size_t)1 << 30)

struct evp {
    EVP_CIPHER_CTX *ctx;
    uint8_t *in, *out;
    size_t len;
};

static void evp_teardown(void *arg)
{
    struct evp *e = arg;
    if (!e)
        return;
    EVP_CIPHER_CTX_free(e->ctx);
    free(e->in);
    free(e->out);
    free(e);
}

static int evp_setup(const mpce_bench_case *c, const EVP_CIPHER *cipher, void **state)
{
    uint64_t n = 0, m = 1;
    if (mpce_bench_param(c, "n", &n) != MPCE_OK)
        return -1;
    if (strcmp(c->op, "prg.mmo") == 0 && mpce_bench_param(c, "m", &m) != MPCE_OK)
        return -1;
    struct evp *e = calloc(1, sizeof(*e));
    if (!e)
        return -1;
    static const uint8_t key[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                                    0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
    static const uint8_t iv[16];
    e->len = (size_t)(16 * n * m);
    e->in = malloc(e->len);
    e->out = malloc(e->len);
    e->ctx = EVP_CIPHER_CTX_new();
    if (!e->in || !e->out || !e->ctx ||
        EVP_EncryptInit_ex(e->ctx, cipher, NULL, key, iv) != 1) {
        evp_teardown(e);
        return -1;
    }
    EVP_CIPHER_CTX_set_padding(e->ctx, 0);
    memset(e->in, 0x5a, e->len);
    memset(e->out, 0, e->len);
    *state = e;
    return 0;
}

static int ecb_setup(const mpce_bench_case *c, void *arg, void **state)
{
    return evp_setup(c, EVP_aes_128_ecb(), state);
}

static int ctr_setup(const mpce_bench_case *c, void *arg, void **state)
{
    return evp_setup(c, EVP_aes_128_ctr(), state);
}

/* CTR continues its stream from call to call; the work per call is the same. */
static int evp_run(void *arg)
{
    struct evp *e = arg;
    for (size_t off = 0; off < e->len; off += EVP_STEP) {
        size_t step = e->len - off < EVP_STEP ? e->len - off : EVP_STEP;
        int outl = 0;
        if (EVP_EncryptUpdate(e->ctx, e->out + off, &outl, e->in + off, (int)step) != 1 ||
            (size_t)outl != step)
            return MPCE_ERR_BACKEND;
    }
    return 0;
}

#define PEER(nm, op, note, setup) \
    {sizeof(mpce_bench_peer), nm, op, note, setup, evp_run, evp_teardown, NULL}

static const mpce_bench_peer peers[] = {
    PEER("openssl-evp-aes-128-ecb", "prg.ecb", "", ecb_setup),
    PEER("openssl-evp-aes-128-ecb", "prg.mmo", "ECB over the same m*n blocks, no XOR",
         ecb_setup),
    PEER("openssl-evp-aes-128-ctr", "prg.ctr", "OpenSSL's 128-bit big-endian counter",
         ctr_setup),
};

const mpce_bench_peer *mpce_bench_builtin_peers(size_t *count)
{
    *count = sizeof(peers) / sizeof(peers[0]);
    return peers;
}

int mpce_bench_peer_cand(const mpce_bench_peer *p, const struct mpce_bench_shape *s,
                         struct mpce_bench_cand *c)
{
    mpce_bench_case bc = {s->op, s->text, s};
    void *state = NULL;
    if (!p->run || !p->setup || p->setup(&bc, p->arg, &state) != 0)
        return -1;
    snprintf(c->name, sizeof(c->name), "%s", p->name);
    snprintf(c->note, sizeof(c->note), "%s", p->note ? p->note : "");
    c->run = p->run;
    c->teardown = p->teardown;
    c->state = state;
    return 0;
}
