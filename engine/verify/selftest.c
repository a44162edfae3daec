/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known-answer self-test: the embedded vectors run through one
 * implementation, every op called through the libffi descriptors
 * (opdesc.h), on host memory; an asynchronous implementation's ops are
 * waited for. Expected
 * values that the vectors give only as a key or a hash (LPN tables, hash
 * records) are derived with OpenSSL, independently of the code under test.
 * Records too large for a start-up check (NTT N > 4096, LPN n > 8192, DPF
 * EvalAll n > 16) are left to the test suites.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "engine/internal.h"
#include "spec/dpf_batch.h"
#include "spec/spec.h"
#include "engine/runtime/exec.h"
#include "engine/verify/kat.h"
#include "engine/spec/dpf_key.h"
#include "engine/spec/ntt_params.h"
#include "engine/verify/opdesc.h"
#include "engine/verify/selftest.h"

#define NTT_MAX_SELFTEST_N 4096u
#define LPN_MAX_SELFTEST_N 8192u
#define DPF_MAX_SELFTEST_EVALALL 16u
#define MAX_ALLOCS 32

/* One record's run: where to report, and what to free afterwards. */
struct run {
    const struct mpce_slot *slot;
    const union mpce_ops *ops;
    struct mpce_call call;        /* host memory; done set for async slots */
    const struct mpce_call *callp; /* what data ops get as their call */
    char *reason;
    size_t reason_len;
    const struct mpce_kat_record *rec;
    const char *prim;
    void *allocs[MAX_ALLOCS];
    int nallocs;
    void *state;
    struct mpce_params params; /* the record's, for serves() */
    int unserved; /* serves() or ctx_new refused the record's parameters */
    uint64_t *ops_ran; /* bit per op id that ran and passed its check so far */
    int no_memory;     /* stopped for lack of memory: no verdict on the code */
};

_Static_assert(MPCE_OP_COUNT <= 64, "ops_ran is one 64-bit mask");

#define OP(prim, name) MPCE_OP_##prim##_##name
#define NARGS(argv) ((unsigned)(sizeof(argv) / sizeof((argv)[0])))

static int fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct run *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(r->reason, r->reason_len, "%s.%s record at %s:%u: %s", r->prim, r->rec->op,
             r->rec->file, r->rec->line, msg);
    return -1;
}

/* A record that memory ran out for proves nothing either way. */
static int oom(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int oom(struct run *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    r->no_memory = 1;
    return fail(r, "%s", msg);
}

static void *keep(struct run *r, void *p)
{
    if (p && r->nallocs < MAX_ALLOCS) {
        r->allocs[r->nallocs++] = p;
        return p;
    }
    free(p);
    return NULL;
}

static void *zalloc(struct run *r, size_t len)
{
    return keep(r, calloc(1, len ? len : 1));
}

/* Release everything the record allocated, the plugin state included. */
static void finish(struct run *r)
{
    if (r->state) {
        mpce_ops_ctx_free(r->ops, r->state);
        r->state = NULL;
    }
    for (int i = 0; i < r->nallocs; i++)
        free(r->allocs[i]);
    r->nallocs = 0;
}

/* Call op id with argc arguments; -1 with the reason set unless it ran and
 * returned 0 (after its completion, for an asynchronous implementation). */
static int call(struct run *r, enum mpce_op_id id, void **argv, unsigned argc)
{
    const char *name = mpce_op_info[id].name;
    const int async = (r->slot->flags & MPCE_IMPL_ASYNC) && mpce_op_routed(id);
    struct mpce_completion done;
    int ret = 0;
    r->unserved = 0;
    if (async) {
        mpce_completion_init(&done, r->slot, name);
        r->call.done = &done;
    }
    mpce_status st = mpce_op_call(id, r->ops, argv, argc, &ret);
    if (async) {
        if (st == MPCE_OK) {
            mpce_status fin = ret == MPCE_OP_PENDING
                                  ? mpce_completion_wait(&done)
                                  : mpce_completion_returned(&done, ret, mpce_completion_op_status);
            if (ret == MPCE_OP_PENDING || ret == 0)
                ret = fin == MPCE_OK ? 0 : MPCE_ERR_BACKEND;
        }
        mpce_completion_destroy(&done);
        r->call.done = NULL;
    } else if (st == MPCE_OK && ret != 0) {
        mpce_op_status(r->slot, name, ret);
    }
    if (st == MPCE_ERR_NOMEM || (st == MPCE_OK && ret == MPCE_ERR_NOMEM))
        return oom(r, "%s", mpce_last_error());
    if (st != MPCE_OK)
        return fail(r, "%s", mpce_last_error());
    if (ret == MPCE_ERR_NOIMPL && id == mpce_op_first(r->slot->prim))
        r->unserved = 1;
    if (ret != 0)
        return fail(r, "%s", mpce_last_error());
    /* Counted as run once it returned; a wrong result fails the whole test
     * anyway. */
    *r->ops_ran |= (uint64_t)1 << id;
    return 0;
}

/* The plugin state for the record (argv[0] is set to the module state);
 * freed by finish(). */
static int make_state(struct run *r, void **argv, unsigned argc)
{
    void *module = r->slot->module->state;
    argv[0] = &module;
    if (r->slot->impl->serves != NULL) {
        char why[200] = "";
        if (r->slot->impl->serves(module, &r->params, NULL, why, sizeof(why)) != 0) {
            r->unserved = 1;
            why[sizeof(why) - 1] = '\0';
            return fail(r, "not served: %s", why);
        }
    }
    enum mpce_op_id id = mpce_op_first(r->slot->prim);
    if (call(r, id, argv, argc) != 0)
        return -1;
    if (!r->state)
        return fail(r, "%s returned no state", mpce_op_info[id].name);
    return 0;
}

static uint8_t *hex(struct run *r, const char *name, size_t *len)
{
    uint8_t *b = NULL;
    int rc = mpce_kat_hex(r->rec, name, &b, len);
    if (rc != 0) {
        (rc == MPCE_KAT_NO_MEMORY ? oom : fail)(r, "%s", mpce_last_error());
        return NULL;
    }
    return keep(r, b);
}

/* A hex field of exactly `want` bytes. */
static uint8_t *hex_n(struct run *r, const char *name, size_t want)
{
    size_t len;
    uint8_t *b = hex(r, name, &len);
    if (b && len != want) {
        fail(r, "field %s has %zu bytes, expected %zu", name, len, want);
        return NULL;
    }
    return b;
}

static int u64(struct run *r, const char *name, uint64_t *v)
{
    if (mpce_kat_u64(r->rec, name, v) != 0)
        return fail(r, "%s", mpce_last_error());
    return 0;
}

static uint64_t *u64_list(struct run *r, const char *name, size_t want)
{
    uint64_t *v = NULL;
    size_t n;
    int rc = mpce_kat_u64_list(r->rec, name, &v, &n);
    if (rc != 0) {
        (rc == MPCE_KAT_NO_MEMORY ? oom : fail)(r, "%s", mpce_last_error());
        return NULL;
    }
    keep(r, v);
    if (want && n != want) {
        fail(r, "field %s has %zu values, expected %zu", name, n, want);
        return NULL;
    }
    return v;
}

/* -1 if equal, else the index of the first differing unit. */
static long first_diff(const void *a, const void *b, size_t units, size_t unit)
{
    const uint8_t *x = a, *y = b;
    for (size_t i = 0; i < units; i++)
        if (memcmp(x + i * unit, y + i * unit, unit) != 0)
            return (long)i;
    return -1;
}

static int expect_blocks(struct run *r, const char *what, const void *got, const void *want,
                         size_t units, size_t unit, const char *unit_name)
{
    long i = first_diff(got, want, units, unit);
    if (i >= 0)
        return fail(r, "%s%s%s %ld differs", what, what[0] ? ": " : "", unit_name, i);
    return 0;
}

/* 0, or -1 when OpenSSL could not hash (out of memory): then out is not
 * set, and comparing it would blame the implementation. */
static int sha256(const void *data, size_t len, uint8_t out[32])
{
    return SHA256(data, len, out) ? 0 : -1;
}

static int expect_sha256(struct run *r, const char *field, const void *data, size_t len)
{
    uint8_t *want = hex_n(r, field, 32), got[32];
    if (!want)
        return -1;
    if (sha256(data, len, got) != 0)
    {
        char what[160];
        snprintf(what, sizeof(what), "cannot check %s: OpenSSL SHA-256 failed (out of memory?)",
                 field);
        return oom(r, "%s", what);
    }
    if (memcmp(got, want, 32) != 0)
        return fail(r, "SHA-256 of the output differs from %s", field);
    return 0;
}

/* ctr(key, 0, n) with OpenSSL: the tables and inputs the LPN vectors name
 * only by key. */
static int openssl_ctr(const uint8_t key[16], uint8_t *out, size_t n)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int ok = c && EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, key, NULL) == 1 &&
             EVP_CIPHER_CTX_set_padding(c, 0) == 1;
    for (size_t i = 0; ok && i < n; i++)
        mpce_spec_ctr_block(i, out + 16 * i);
    /* In place, in chunks that fit the int length argument. */
    for (size_t done = 0; ok && done < n;) {
        size_t chunk = n - done < 65536 ? n - done : 65536;
        int outl = 0;
        ok = EVP_EncryptUpdate(c, out + 16 * done, &outl, out + 16 * done, (int)(16 * chunk)) ==
             1;
        done += chunk;
    }
    EVP_CIPHER_CTX_free(c);
    return ok ? 0 : -1;
}

/* ---- PRG ---------------------------------------------------------------- */

static int prg_record(struct run *r)
{
    uint64_t n, m = 1, c0 = 0;
    const char *op = r->rec->op;
    int is_ecb = strcmp(op, "ecb") == 0, is_mmo = strcmp(op, "mmo") == 0;
    int is_ctr = strcmp(op, "ctr") == 0;
    if (!is_ecb && !is_mmo && !is_ctr)
        return 0;
    if (u64(r, "n", &n) || (is_mmo && u64(r, "m", &m)) || (is_ctr && u64(r, "c0", &c0)))
        return -1;
    if (n == 0 || n > 4096 || m == 0 || m > MPCE_PRG_MAX_KEYS)
        return fail(r, "n or m out of range");
    uint8_t *keys;
    size_t nkeys = (size_t)m;
    if (is_mmo) {
        if (!(keys = hex_n(r, "keys", 16 * m)))
            return -1;
    } else {
        /* The record's key at index 1 behind a decoy, so key_index is tested. */
        uint8_t *k = hex_n(r, "key", 16);
        if (!k || !(keys = zalloc(r, 32)))
            return -1;
        for (int i = 0; i < 16; i++)
            keys[i] = (uint8_t)~k[i];
        memcpy(keys + 16, k, 16);
        nkeys = 2;
    }
    size_t out_blocks = (size_t)(n * m);
    uint8_t *want = hex_n(r, "out", 16 * out_blocks);
    uint8_t *in = (is_ctr || !want) ? NULL : hex_n(r, "in", 16 * n);
    if (!want || (!is_ctr && !in))
        return -1;
    void **sp = &r->state; /* ctx_new takes void **: pass a pointer to it */
    void *nargs[] = {NULL, &keys, &nkeys, &sp};
    r->params.prg_keys = nkeys;
    if (make_state(r, nargs, NARGS(nargs)) != 0)
        return -1;
    /* One byte past an allocation: implementations must take unaligned data. */
    uint8_t *raw = zalloc(r, 16 * out_blocks + 1);
    if (!raw)
        return oom(r, "out of memory");
    uint8_t *out = raw + 1;
    size_t nn = (size_t)n, idx = 1;
    if (is_ecb) {
        void *argv[] = {&r->state, &r->callp, &idx, &in, &out, &nn};
        if (call(r, OP(prg, ecb), argv, NARGS(argv)) || expect_blocks(r, "", out, want, nn, 16, "block"))
            return -1;
        memcpy(out, in, 16 * nn);
        void *argv2[] = {&r->state, &r->callp, &idx, &out, &out, &nn};
        return call(r, OP(prg, ecb), argv2, NARGS(argv2)) ||
               expect_blocks(r, "in place", out, want, nn, 16, "block");
    }
    if (is_mmo) {
        void *argv[] = {&r->state, &r->callp, &in, &out, &nn};
        return call(r, OP(prg, mmo), argv, NARGS(argv)) ||
               expect_blocks(r, "", out, want, out_blocks, 16, "block");
    }
    void *argv[] = {&r->state, &r->callp, &idx, &c0, &out, &nn};
    return call(r, OP(prg, ctr), argv, NARGS(argv)) || expect_blocks(r, "", out, want, nn, 16, "block");
}

/* ---- NTT ---------------------------------------------------------------- */

/* psi from the record, or derived from q (SPEC.md 2) where the record has
 * none (inverse and mul records). */
static int ntt_psi(struct run *r, size_t n, uint64_t q, uint64_t *psi)
{
    if (mpce_kat_get(r->rec, "psi"))
        return u64(r, "psi", psi);
    uint64_t g;
    if (mpce_ntt_params(n, &q, 1, &g, psi) != MPCE_OK)
        return fail(r, "%s", mpce_last_error());
    return 0;
}

/* An implementation that checks NTT inputs itself (plugin.h) must refuse
 * one with *word set to bad rather than transform it: the engine trusts
 * the flag instead of scanning. Async ones are always scanned first. */
static int ntt_refuses(struct run *r, enum mpce_op_id id, void **argv, unsigned argc,
                       uint64_t *word, uint64_t bad, const char *how)
{
    if (!(r->slot->flags & MPCE_IMPL_CHECKS_NTT_INPUT) || (r->slot->flags & MPCE_IMPL_ASYNC))
        return 0;
    const uint64_t kept = *word;
    int ret = 0;
    *word = bad;
    mpce_status st = mpce_op_call(id, r->ops, argv, argc, &ret);
    *word = kept;
    if (st == MPCE_OK && ret == MPCE_OP_NONCANONICAL)
        return 0;
    if (st == MPCE_OK && ret != 0)
        st = mpce_op_status(r->slot, mpce_op_info[id].name, ret);
    if (st == MPCE_ERR_NOMEM)
        return oom(r, "%s", mpce_last_error());
    return fail(r, "%s carries MPCE_IMPL_CHECKS_NTT_%s, but its %s %s an input word of "
                "%llu%s, not below its modulus, instead of returning MPCE_OP_NONCANONICAL%s%s",
                r->slot->impl->name, how[0] ? "IN_PLACE" : "INPUT", mpce_op_info[id].name,
                st == MPCE_OK ? "transformed" : "failed on", (unsigned long long)bad, how,
                st == MPCE_OK ? "" : ": ", st == MPCE_OK ? "" : mpce_last_error());
}

/* The same in place, for MPCE_IMPL_CHECKS_NTT_IN_PLACE: a copy of src with
 * word at set to bad, the op's output on top of it (for mul, of a; b as
 * given). */
static int ntt_refuses_in_place(struct run *r, enum mpce_op_id id, const uint64_t *src,
                                const uint64_t *b, size_t words, size_t batch, size_t at,
                                uint64_t bad)
{
    if (!(r->slot->flags & MPCE_IMPL_CHECKS_NTT_IN_PLACE) || (r->slot->flags & MPCE_IMPL_ASYNC))
        return 0;
    uint64_t *buf = zalloc(r, words * 8), *buf_b = b ? zalloc(r, words * 8) : NULL;
    if (!buf || (b && !buf_b))
        return oom(r, "out of memory");
    memcpy(buf, src, words * 8);
    if (id != OP(ntt, mul)) {
        void *argv[] = {&r->state, &r->callp, &buf, &buf, &batch};
        return ntt_refuses(r, id, argv, NARGS(argv), &buf[at], bad, " in place");
    }
    /* The engine trusts the flag for out == a and out == b alike, and with
     * the bad word in the operand out is not. */
    memcpy(buf_b, b, words * 8);
    void *out_a[] = {&r->state, &r->callp, &buf, &buf_b, &buf, &batch};
    void *out_b[] = {&r->state, &r->callp, &buf, &buf_b, &buf_b, &batch};
    if (ntt_refuses(r, id, out_a, NARGS(out_a), &buf[at], bad, " in place (out = a)"))
        return -1;
    memcpy(buf, src, words * 8); /* each call from reduced inputs but the one word */
    if (ntt_refuses(r, id, out_a, NARGS(out_a), &buf_b[at], bad, " of b in place (out = a)"))
        return -1;
    memcpy(buf, src, words * 8);
    return ntt_refuses(r, id, out_b, NARGS(out_b), &buf_b[at], bad, " in place (out = b)");
}

static int ntt_record(struct run *r)
{
    const char *op = r->rec->op;
    int fwd = strcmp(op, "forward") == 0, inv = strcmp(op, "inverse") == 0;
    int rns = strcmp(op, "rns_forward") == 0, mul = strcmp(op, "mul") == 0;
    int hash = strcmp(op, "forward_hash") == 0;
    if (!fwd && !inv && !rns && !mul && !hash)
        return 0;
    uint64_t n64, l64 = 1, b64 = 1;
    if (u64(r, "N", &n64))
        return -1;
    if (hash && n64 > NTT_MAX_SELFTEST_N)
        return 0;
    if (n64 < MPCE_NTT_MIN_N || n64 > MPCE_NTT_MAX_N)
        return fail(r, "N out of range");
    if (rns && (u64(r, "L", &l64) || u64(r, "B", &b64)))
        return -1;
    if (l64 == 0 || l64 > MPCE_NTT_MAX_MODULI || b64 == 0 || b64 > 16)
        return fail(r, "L or B out of range");
    size_t n = (size_t)n64, l = (size_t)l64, batch = (size_t)b64, words = n * l * batch;
    uint64_t *q, *psi;
    if (rns) {
        if (!(q = u64_list(r, "moduli", l)) || !(psi = u64_list(r, "psi", l)))
            return -1;
    } else {
        if (!(q = zalloc(r, 8)) || !(psi = zalloc(r, 8)) || u64(r, "q", q) ||
            ntt_psi(r, n, *q, psi))
            return -1;
    }
    void **sp = &r->state;
    void *nargs[] = {NULL, &n, &l, &q, &psi, &sp};
    r->params.ntt_n = n;
    r->params.ntt_l = l;
    r->params.ntt_q = q;
    if (make_state(r, nargs, NARGS(nargs)) != 0)
        return -1;
    uint64_t *out = zalloc(r, words * 8), *in = NULL;
    if (!out)
        return oom(r, "out of memory");
    if (mul) {
        uint64_t *a = u64_list(r, "a", n), *b = a ? u64_list(r, "b", n) : NULL;
        uint64_t *want = b ? u64_list(r, "out", n) : NULL;
        void *argv[] = {&r->state, &r->callp, &a, &b, &out, &batch};
        return !want || call(r, OP(ntt, mul), argv, NARGS(argv)) ||
               expect_blocks(r, "", out, want, n, 8, "coefficient") ||
               ntt_refuses(r, OP(ntt, mul), argv, NARGS(argv), &b[n - 1], q[0], "") ||
               ntt_refuses_in_place(r, OP(ntt, mul), a, b, n, batch, n / 2, q[0] + 1);
    }
    if (hash) {
        uint64_t seed;
        if (u64(r, "in_seed", &seed) || !(in = zalloc(r, words * 8)))
            return -1;
        for (size_t i = 0; i < n; i++)
            in[i] = mpce_spec_splitmix64(&seed) % q[0];
    } else if (!(in = u64_list(r, "in", words))) {
        return -1;
    }
    void *argv[] = {&r->state, &r->callp, &in, &out, &batch};
    if (inv) {
        uint64_t *want = u64_list(r, "out", words);
        return !want || call(r, OP(ntt, inverse), argv, NARGS(argv)) ||
               expect_blocks(r, "", out, want, words, 8, "coefficient") ||
               ntt_refuses(r, OP(ntt, inverse), argv, NARGS(argv), &in[0], UINT64_MAX, "") ||
               ntt_refuses_in_place(r, OP(ntt, inverse), in, NULL, words, batch, words - 1,
                                    UINT64_MAX);
    }
    if (call(r, OP(ntt, forward), argv, NARGS(argv)) != 0)
        return -1;
    if (hash) {
        uint8_t *le = zalloc(r, words * 8);
        if (!le)
            return oom(r, "out of memory");
        for (size_t i = 0; i < words; i++)
            for (int b = 0; b < 8; b++)
                le[8 * i + b] = (uint8_t)(out[i] >> (8 * b));
        if (expect_sha256(r, "out_sha256", le, words * 8) != 0)
            return -1;
    } else {
        uint64_t *want = u64_list(r, "out", words);
        if (!want || expect_blocks(r, "forward", out, want, words, 8, "coefficient"))
            return -1;
    }
    /* Every forward record is also an inverse record. */
    uint64_t *back = zalloc(r, words * 8);
    void *argv2[] = {&r->state, &r->callp, &out, &back, &batch};
    if (!back)
        return oom(r, "out of memory");
    /* The last word's row is reduced mod the last modulus. */
    return call(r, OP(ntt, inverse), argv2, NARGS(argv2)) ||
           expect_blocks(r, "inverse(out)", back, in, words, 8, "coefficient") ||
           ntt_refuses(r, OP(ntt, forward), argv, NARGS(argv), &in[words - 1], q[l - 1], "") ||
           ntt_refuses_in_place(r, OP(ntt, forward), in, NULL, words, batch, 0, q[0]);
}

/* ---- LPN ---------------------------------------------------------------- */

static int lpn_record(struct run *r)
{
    const char *op = r->rec->op;
    int hash = strcmp(op, "fold_hash") == 0;
    if (!hash && strcmp(op, "fold") != 0)
        return 0;
    uint64_t logk, c0, n64;
    if (u64(r, "logk", &logk) || u64(r, "c0", &c0) || u64(r, "n", &n64))
        return -1;
    if (hash && n64 > LPN_MAX_SELFTEST_N)
        return 0;
    if (logk < MPCE_LPN_MIN_LOGK || logk > 20 || n64 == 0 || n64 > LPN_MAX_SELFTEST_N)
        return fail(r, "logk or n out of the self-test's range");
    size_t n = (size_t)n64, k = (size_t)1 << logk;
    uint8_t *seed = hex_n(r, "seed", 16), *table;
    if (!seed)
        return -1;
    if (mpce_kat_get(r->rec, "pre")) {
        if (!(table = hex_n(r, "pre", 16 * k)))
            return -1;
    } else {
        uint8_t *key = hex_n(r, "pre_ctr_key", 16);
        if (!key)
            return -1;
        if (!(table = zalloc(r, 16 * k)))
            return oom(r, "out of memory for a table of %zu blocks", k);
        /* The reference failing judges nothing of the implementation:
         * left untested, as when memory runs out (its usual cause). */
        if (openssl_ctr(key, table, k) != 0)
            return oom(r, "OpenSSL AES failed deriving the table (out of memory, or a "
                       "broken libcrypto)");
    }
    uint8_t *out;
    const char *out_in = mpce_kat_get(r->rec, "out_in");
    if (out_in && strcmp(out_in, "zeros") == 0) {
        out = zalloc(r, 16 * n);
    } else if (mpce_kat_get(r->rec, "out_in_ctr_key")) {
        uint8_t *key = hex_n(r, "out_in_ctr_key", 16);
        if (!key)
            return -1;
        if (!(out = zalloc(r, 16 * n)))
            return oom(r, "out of memory for %zu output blocks", n);
        if (openssl_ctr(key, out, n) != 0)
            return oom(r, "OpenSSL AES failed deriving out_in (out of memory, or a broken "
                       "libcrypto)");
    } else {
        out = hex_n(r, "out_in", 16 * n);
    }
    if (!out)
        return -1;
    unsigned lk = (unsigned)logk;
    void **sp = &r->state;
    void *nargs[] = {NULL, &seed, &lk, &sp};
    r->params.lpn_logk = lk;
    if (make_state(r, nargs, NARGS(nargs)) != 0)
        return -1;
    void *argv[] = {&r->state, &r->callp, &c0, &table, &out, &n};
    if (call(r, OP(lpn, fold), argv, NARGS(argv)) != 0)
        return -1;
    if (hash)
        return expect_sha256(r, "out_sha256", out, 16 * n);
    uint8_t *want = hex_n(r, "out", 16 * n);
    return !want || expect_blocks(r, "", out, want, n, 16, "output block");
}

/* ---- DPF ---------------------------------------------------------------- */

/* eval_batch over the same keys as eval_keys, packed level-major after
 * one unused key, so that `first` is 1 and not the start of a row. */
static int dpf_check_batch(struct run *r, const struct mpce_dpf_key_v1 *const keys[2],
                           const uint64_t *x, size_t npts, const uint8_t *want, uint8_t *out)
{
    const size_t nk = npts + 1, bits = keys[0]->bits;
    struct mpce_spec_dpf_batch_rw rw;
    if (!keep(r, mpce_spec_dpf_batch_alloc(nk, (unsigned)bits, &rw)))
        return oom(r, "out of memory");
    for (size_t j = 0; j < nk; j++)
        mpce_spec_dpf_batch_put(&rw, j, (unsigned)bits, keys[(j + 1) % 2]);
    const struct mpce_dpf_batch_v1 b = mpce_spec_dpf_batch_view(&rw);
    const struct mpce_dpf_batch_v1 *bp = &b;
    size_t first = 1;
    void *argv[] = {&r->state, &r->callp, &bp, &first, &x, &npts, &out};
    if (call(r, OP(dpf, eval_batch), argv, NARGS(argv)) ||
        expect_blocks(r, "eval_batch", out, want, npts, mpce_spec_dpf_output_size(keys[0]->group),
                      "key"))
        return -1;
    return 0;
}

static int dpf_record(struct run *r)
{
    if (strcmp(r->rec->op, "dpf") != 0)
        return 0;
    uint64_t bits64, alpha;
    if (u64(r, "n", &bits64) || u64(r, "alpha", &alpha))
        return -1;
    if (bits64 < 1 || bits64 > MPCE_DPF_MAX_BITS)
        return fail(r, "n out of range");
    const char *gname = mpce_kat_get(r->rec, "group");
    unsigned bits = (unsigned)bits64, group;
    if (gname && strcmp(gname, "bytes") == 0)
        group = MPCE_DPF_BYTES;
    else if (gname && strcmp(gname, "u64") == 0)
        group = MPCE_DPF_U64;
    else
        return fail(r, "group is not bytes or u64");
    size_t osz = mpce_spec_dpf_output_size(group);
    uint8_t *kl = hex_n(r, "kL", 16), *kr = kl ? hex_n(r, "kR", 16) : NULL;
    uint8_t *s0 = kr ? hex_n(r, "seed0", 16) : NULL, *s1 = s0 ? hex_n(r, "seed1", 16) : NULL;
    uint8_t *beta = s1 ? zalloc(r, 16) : NULL;
    if (!beta)
        return -1;
    if (group == MPCE_DPF_BYTES) {
        uint8_t *b = hex_n(r, "beta", 16);
        if (!b)
            return -1;
        memcpy(beta, b, 16);
        beta[MPCE_SPEC_DPF_TBIT_BYTE] &= 0xfe;
    } else {
        uint64_t v;
        if (u64(r, "beta_u64", &v))
            return -1;
        for (int i = 0; i < 8; i++)
            beta[i] = (uint8_t)(v >> (8 * i));
    }
    s0[MPCE_SPEC_DPF_TBIT_BYTE] &= 0xfe;
    s1[MPCE_SPEC_DPF_TBIT_BYTE] &= 0xfe;
    void **sp = &r->state;
    void *nargs[] = {NULL, &bits, &group, &kl, &kr, &sp};
    r->params.dpf_bits = bits;
    r->params.dpf_group = group;
    if (make_state(r, nargs, NARGS(nargs)) != 0)
        return -1;
    struct mpce_dpf_key_v1 *k0 = zalloc(r, sizeof(*k0)), *k1 = zalloc(r, sizeof(*k1));
    size_t klen = mpce_spec_dpf_key_size(bits);
    uint8_t *ser = zalloc(r, klen);
    if (!k0 || !k1 || !ser)
        return oom(r, "out of memory");
    void *gargv[] = {&r->state, &r->callp, &alpha, &beta, &s0, &s1, &k0, &k1};
    if (call(r, OP(dpf, gen), gargv, NARGS(gargv)) != 0)
        return -1;
    const struct mpce_dpf_key_v1 *keys[2] = {k0, k1};
    for (int p = 0; p < 2; p++) {
        char field[24];
        snprintf(field, sizeof(field), "key%d", p);
        uint8_t *want = hex_n(r, field, klen);
        if (!want)
            return -1;
        if (keys[p]->bits != bits) /* the writer sizes by the key's own n */
            return fail(r, "gen: %s has n = %u, the context %u", field, keys[p]->bits, bits);
        mpce_dpf_key_v1_write(keys[p], ser);
        if (memcmp(ser, want, klen) != 0) {
            long at = first_diff(ser, want, klen, 1);
            return fail(r, "gen: serialized %s differs at byte %ld", field, at);
        }
    }
    size_t npts;
    uint64_t *x = NULL;
    int got = mpce_kat_u64_list(r->rec, "eval_x", &x, &npts);
    if (got != 0)
        return (got == MPCE_KAT_NO_MEMORY ? oom : fail)(r, "%s", mpce_last_error());
    keep(r, x);
    if (npts == 0)
        return fail(r, "eval_x is empty");
    uint8_t *want[2], *out = zalloc(r, npts * osz + 1);
    if (!out)
        return oom(r, "out of memory for %zu evaluation outputs", npts);
    for (int p = 0; p < 2; p++) {
        char field[24];
        snprintf(field, sizeof(field), "eval%d", p);
        if (!(want[p] = hex_n(r, field, npts * osz)))
            return -1;
        const struct mpce_dpf_key_v1 *k = keys[p];
        void *argv[] = {&r->state, &r->callp, &k, &x, &npts, &out};
        if (call(r, OP(dpf, eval), argv, NARGS(argv)) || expect_blocks(r, field, out, want[p], npts, osz, "point"))
            return -1;
    }
    /* eval_keys with the parties' keys interleaved over the same points. */
    const struct mpce_dpf_key_v1 **kv = zalloc(r, npts * sizeof(*kv));
    uint8_t *mixed = zalloc(r, npts * osz);
    if (!kv || !mixed)
        return oom(r, "out of memory");
    for (size_t i = 0; i < npts; i++) {
        kv[i] = keys[i % 2];
        memcpy(mixed + i * osz, want[i % 2] + i * osz, osz);
    }
    void *kargv[] = {&r->state, &r->callp, &kv, &x, &npts, &out};
    if (call(r, OP(dpf, eval_keys), kargv, NARGS(kargv)) ||
        expect_blocks(r, "eval_keys", out, mixed, npts, osz, "key"))
        return -1;
    if (r->ops->dpf.eval_batch != NULL && dpf_check_batch(r, keys, x, npts, mixed, out) != 0)
        return -1;
    if (bits > DPF_MAX_SELFTEST_EVALALL)
        return 0;
    size_t all = ((size_t)1 << bits) * osz;
    uint8_t *buf = zalloc(r, all);
    if (!buf)
        return oom(r, "out of memory");
    for (int p = 0; p < 2; p++) {
        char field[32];
        snprintf(field, sizeof(field), "evalall%d_sha256", p);
        const struct mpce_dpf_key_v1 *k = keys[p];
        void *argv[] = {&r->state, &r->callp, &k, &buf};
        if (call(r, OP(dpf, evalall), argv, NARGS(argv)) || expect_sha256(r, field, buf, all))
            return -1;
        if (r->ops->dpf.evalall_range == NULL)
            continue; /* a table of ABI 2.0 */
        /* The same outputs as two slices split at an odd point, as the
         * worker pool will ask for them. */
        memset(buf, 0, all);
        uint64_t lo = 0, mid = ((uint64_t)1 << bits) / 3, hi = (uint64_t)1 << bits;
        uint8_t *second = buf + mid * osz;
        void *a1[] = {&r->state, &r->callp, &k, &lo, &mid, &buf};
        void *a2[] = {&r->state, &r->callp, &k, &mid, &hi, &second};
        if (call(r, OP(dpf, evalall_range), a1, NARGS(a1)) || call(r, OP(dpf, evalall_range), a2, NARGS(a2)) ||
            expect_sha256(r, field, buf, all))
            return -1;
    }
    return 0;
}

/* ---- driver --------------------------------------------------------------- */

int mpce_selftest_slot(const struct mpce_slot *slot, char *reason, size_t reason_len)
{
    static const char *const files[MPCE_PRIM_COUNT] = {"prg.txt", "ntt.txt", "lpn.txt",
                                                       "dpf.txt"};
    static int (*const run_record[MPCE_PRIM_COUNT])(struct run *) = {
        prg_record, ntt_record, lpn_record, dpf_record};
    reason[0] = '\0';
    struct mpce_kat_set set;
    if (mpce_kat_load(files[slot->prim], &set) != 0) {
        /* The vectors are built in and checked at build time: only memory
         * can stop them loading. */
        snprintf(reason, reason_len, "cannot load vectors: %s", mpce_last_error());
        return MPCE_SELFTEST_NO_MEMORY;
    }
    int rc = 0, no_memory = 0;
    uint64_t ops_ran = 0;
    for (size_t i = 0; i < set.count && rc == 0; i++) {
        struct run r = {
            .slot = slot,
            .ops = &slot->ops,
            .call = mpce_host_call,
            .reason = reason,
            .reason_len = reason_len,
            .rec = &set.records[i],
            .prim = mpce_primitive_name(slot->prim),
        };
        r.callp = &r.call;
        r.ops_ran = &ops_ran;
        r.params.struct_size = sizeof(r.params);
        r.params.primitive = (uint32_t)slot->prim;
        rc = run_record[slot->prim](&r);
        no_memory = r.no_memory;
        finish(&r);
        /* An implementation that serves only some parameters (IFMA: q < 2^50)
         * refuses the others, in serves() or ctx_new, as it would for a
         * caller; those records are not its to pass, but at least one record
         * must run. */
        if (rc != 0 && r.unserved) {
            rc = 0;
            reason[0] = '\0';
        }
    }
    mpce_kat_free(&set);
    /* A record's own allocation that failed stops it without a reason. */
    if (rc != 0 && !reason[0]) {
        snprintf(reason, reason_len, "could not be completed: out of memory");
        no_memory = 1;
    }
    if (rc != 0 && no_memory)
        return MPCE_SELFTEST_NO_MEMORY;
    /* Passing means every operation it offers was checked here: records it
     * declined, or that only apply to larger sizes, prove nothing. */
    enum mpce_op_id first = mpce_op_first(slot->prim);
    for (unsigned k = 0; rc == 0 && k < mpce_op_count_of(slot->prim); k++) {
        enum mpce_op_id id = (enum mpce_op_id)(first + k);
        /* Required ops are never NULL here: the loader refused those. */
        int offered = mpce_op_is_data(id) && mpce_ops_fn(&slot->ops, id) != NULL;
        if (offered && !(ops_ran & ((uint64_t)1 << id))) {
            snprintf(reason, reason_len, "no known-answer record checked %s: %s declined the "
                     "parameters of every record that has one", mpce_op_info[id].name,
                     slot->impl->name);
            rc = -1;
        }
    }
    return rc;
}
