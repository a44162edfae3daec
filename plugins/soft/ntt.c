/*
 * Portable negacyclic NTT (SPEC.md section 2) with Harvey's lazy butterflies:
 * Shoup precomputed twiddles keep values in [0, 4q) (forward) or [0, 2q)
 * (inverse) between stages, which q < 2^61 allows, and only the last pass
 * reduces to canonical [0, q). Cooley-Tukey with the psi powers merged into
 * the twiddles (in bit-reversed order) maps natural order to the
 * bit-reversed output order of the spec; Gentleman-Sande undoes it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plugins/soft/soft.h"

/* Twiddle tables of one distinct modulus. */
struct ntt_tables {
    uint64_t q;
    uint64_t psi;
    uint64_t *w;        /* w[k] = psi^brv(k), k in [0, n) */
    uint64_t *w_shoup;  /* floor(w[k] * 2^64 / q) */
    uint64_t *iw;       /* iw[k] = psi^-brv(k) */
    uint64_t *iw_shoup;
    uint64_t ninv, ninv_shoup;       /* n^-1 mod q */
    uint64_t last_w, last_w_shoup;   /* iw[1] * n^-1: the last inverse stage */
    unsigned bar_shift;              /* Barrett for mul: bit length of q */
    uint64_t bar_mu;                 /* floor(2^(2*bits) / q) */
};

struct ntt_state {
    size_t n;
    size_t l;
    size_t ntables;
    const struct ntt_tables **row;   /* table of modulus i */
    struct ntt_tables *tables;
    uint64_t *words;                 /* one allocation for every table */
};

static inline uint64_t mulhi64(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

static inline uint64_t mulmod(uint64_t a, uint64_t b, uint64_t q)
{
    return (uint64_t)(((unsigned __int128)a * b) % q);
}

static inline uint64_t shoup(uint64_t w, uint64_t q)
{
    return (uint64_t)(((unsigned __int128)w << 64) / q);
}

/* w * y mod q in [0, 2q) for any 64-bit y (Shoup). */
static inline uint64_t mul_shoup_lazy(uint64_t y, uint64_t w, uint64_t ws, uint64_t q)
{
    return w * y - mulhi64(ws, y) * q;
}

/* x - m if x >= m, without a branch on the (secret) value. */
static inline uint64_t csub(uint64_t x, uint64_t m)
{
    uint64_t d = x - m;
    return d + (m & (uint64_t)-(int64_t)(d >> 63));
}

static size_t brv(size_t k, unsigned bits)
{
    size_t r = 0;
    for (unsigned i = 0; i < bits; i++) {
        r = (r << 1) | (k & 1);
        k >>= 1;
    }
    return r;
}

static void tables_fill(struct ntt_tables *t, size_t n, unsigned logn)
{
    const uint64_t q = t->q;
    /* psi^(2n) = 1, so psi^(2n - 1) is its inverse. */
    uint64_t inv = 1, base = t->psi, e = 2 * (uint64_t)n - 1;
    while (e) {
        if (e & 1)
            inv = mulmod(inv, base, q);
        base = mulmod(base, base, q);
        e >>= 1;
    }
    uint64_t p = 1, ip = 1;
    for (size_t k = 0; k < n; k++) {
        size_t r = brv(k, logn);
        t->w[r] = p;
        t->iw[r] = ip;
        p = mulmod(p, t->psi, q);
        ip = mulmod(ip, inv, q);
    }
    for (size_t k = 0; k < n; k++) {
        t->w_shoup[k] = shoup(t->w[k], q);
        t->iw_shoup[k] = shoup(t->iw[k], q);
    }
    /* n divides q - 1, so n * ((q - 1) / n) = -1 mod q. */
    t->ninv = q - (q - 1) / n;
    t->ninv_shoup = shoup(t->ninv, q);
    t->last_w = mulmod(t->iw[1], t->ninv, q);
    t->last_w_shoup = shoup(t->last_w, q);
    unsigned bits = 0;
    while (bits < 64 && (q >> bits) != 0)
        bits++;
    t->bar_shift = bits;
    t->bar_mu = (uint64_t)(((unsigned __int128)1 << (2 * bits)) / q);
}

static void soft_ntt_free(void *state)
{
    struct ntt_state *s = state;
    if (s == NULL)
        return;
    free(s->words);
    free(s->tables);
    free(s->row);
    free(s);
}

static int soft_ntt_new(size_t n, size_t l, const uint64_t *q, const uint64_t *psi,
                        void **state)
{
    if (n < 2 || (n & (n - 1)) != 0 || l == 0)
        return MPCE_ERR_ARG;
    unsigned logn = 0;
    while (((size_t)1 << logn) < n)
        logn++;

    struct ntt_state *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return MPCE_ERR_NOMEM;
    s->n = n;
    s->l = l;
    s->row = calloc(l, sizeof(*s->row));
    s->tables = calloc(l, sizeof(*s->tables));
    if (s->row == NULL || s->tables == NULL) {
        soft_ntt_free(s);
        return MPCE_ERR_NOMEM;
    }
    /* Equal moduli share one set of tables (RNS bases may repeat a prime). */
    for (size_t i = 0; i < l; i++) {
        size_t j;
        for (j = 0; j < s->ntables; j++) {
            if (s->tables[j].q == q[i] && s->tables[j].psi == psi[i])
                break;
        }
        if (j == s->ntables) {
            s->tables[j].q = q[i];
            s->tables[j].psi = psi[i];
            s->ntables++;
        }
        s->row[i] = &s->tables[j];
    }
    s->words = malloc(s->ntables * 4 * n * sizeof(uint64_t));
    if (s->words == NULL) {
        soft_ntt_free(s);
        return MPCE_ERR_NOMEM;
    }
    for (size_t j = 0; j < s->ntables; j++) {
        struct ntt_tables *t = &s->tables[j];
        uint64_t *base = s->words + j * 4 * n;
        t->w = base;
        t->w_shoup = base + n;
        t->iw = base + 2 * n;
        t->iw_shoup = base + 3 * n;
        tables_fill(t, n, logn);
    }
    *state = s;
    return 0;
}

static void forward_row(const struct ntt_tables *t, size_t n, uint64_t *a)
{
    const uint64_t q = t->q, q2 = 2 * q;
    size_t gap = n;
    for (size_t m = 1; m < n; m <<= 1) {
        gap >>= 1;
        for (size_t i = 0; i < m; i++) {
            const uint64_t w = t->w[m + i], ws = t->w_shoup[m + i];
            uint64_t *x = a + 2 * i * gap, *y = x + gap;
            for (size_t j = 0; j < gap; j++) {
                /* x, y in [0, 4q) on entry; both stay there. */
                uint64_t u = csub(x[j], q2);
                uint64_t v = mul_shoup_lazy(y[j], w, ws, q);
                x[j] = u + v;
                y[j] = u - v + q2;
            }
        }
    }
    for (size_t j = 0; j < n; j++)
        a[j] = csub(csub(a[j], q2), q);
}

static void inverse_row(const struct ntt_tables *t, size_t n, uint64_t *a)
{
    const uint64_t q = t->q, q2 = 2 * q;
    size_t gap = 1;
    for (size_t m = n; m > 2; m >>= 1) {
        const size_t h = m >> 1;
        for (size_t i = 0; i < h; i++) {
            const uint64_t w = t->iw[h + i], ws = t->iw_shoup[h + i];
            uint64_t *x = a + 2 * i * gap, *y = x + gap;
            for (size_t j = 0; j < gap; j++) {
                /* x, y in [0, 2q) on entry and exit. */
                uint64_t u = x[j], v = y[j];
                x[j] = csub(u + v, q2);
                y[j] = mul_shoup_lazy(u - v + q2, w, ws, q);
            }
        }
        gap <<= 1;
    }
    /* Last stage with n^-1 folded into both outputs. */
    uint64_t *x = a, *y = a + gap;
    for (size_t j = 0; j < gap; j++) {
        uint64_t u = x[j], v = y[j];
        x[j] = csub(mul_shoup_lazy(u + v, t->ninv, t->ninv_shoup, q), q);
        y[j] = csub(mul_shoup_lazy(u - v + q2, t->last_w, t->last_w_shoup, q), q);
    }
}

typedef void (*row_fn)(const struct ntt_tables *t, size_t n, uint64_t *a);

static int run_rows(const struct ntt_state *s, row_fn fn, const uint64_t *in, uint64_t *out,
                    size_t batch)
{
    const size_t n = s->n;
    for (size_t b = 0; b < batch; b++) {
        for (size_t i = 0; i < s->l; i++) {
            const size_t off = (b * s->l + i) * n;
            if (out + off != in + off)
                memmove(out + off, in + off, n * sizeof(uint64_t));
            fn(s->row[i], n, out + off);
        }
    }
    return 0;
}

static int soft_ntt_forward(void *state, const uint64_t *in, uint64_t *out, size_t batch)
{
    return run_rows(state, forward_row, in, out, batch);
}

static int soft_ntt_inverse(void *state, const uint64_t *in, uint64_t *out, size_t batch)
{
    return run_rows(state, inverse_row, in, out, batch);
}

/* a * b mod q by Barrett reduction (HAC 14.42 with base 2): both operands
 * vary, so Shoup's precomputation does not apply, and a 128-bit division
 * per word would be several times slower. */
static inline uint64_t mul_barrett(uint64_t a, uint64_t b, const struct ntt_tables *t)
{
    const unsigned k = t->bar_shift;
    const unsigned __int128 x = (unsigned __int128)a * b;
    const uint64_t q1 = (uint64_t)(x >> (k - 1));
    const uint64_t q3 = (uint64_t)(((unsigned __int128)q1 * t->bar_mu) >> (k + 1));
    uint64_t r = (uint64_t)x - q3 * t->q;   /* < 3q, exact modulo 2^64 */
    return csub(csub(r, t->q), t->q);
}

static int soft_ntt_mul(void *state, const uint64_t *a, const uint64_t *b, uint64_t *out,
                        size_t batch)
{
    const struct ntt_state *s = state;
    const size_t n = s->n;
    for (size_t bi = 0; bi < batch; bi++) {
        for (size_t i = 0; i < s->l; i++) {
            const size_t off = (bi * s->l + i) * n;
            const struct ntt_tables *t = s->row[i];
            for (size_t j = 0; j < n; j++)
                out[off + j] = mul_barrett(a[off + j], b[off + j], t);
        }
    }
    return 0;
}

const struct mpce_ntt_vtable mpce_soft_ntt_vtable = {
    .struct_size = sizeof(struct mpce_ntt_vtable),
    .ctx_new = soft_ntt_new,
    .ctx_free = soft_ntt_free,
    .forward = soft_ntt_forward,
    .inverse = soft_ntt_inverse,
    .mul = soft_ntt_mul,
};
