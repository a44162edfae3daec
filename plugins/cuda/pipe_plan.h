/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The arithmetic of the staged pipeline (cuda.h, cuda_pipe_run): how a
 * host-memory call of n units is cut into chunks, which of the two slots
 * (stream and staging buffer) each chunk takes, and where a chunk's inputs
 * and output lie in its staging buffer. Pure C with no CUDA in it, so that
 * tests/test_cuda_plan.c checks it on machines without a GPU: a wrong
 * offset or tail here would corrupt results only on a GPU, and only at
 * sizes the GPU tests may not reach.
 */
#ifndef MPCE_CUDA_PIPE_PLAN_H
#define MPCE_CUDA_PIPE_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* What one unit of a call moves (struct cuda_pipe_op's sizes). */
struct cuda_pipe_units {
    size_t in[2];      /* bytes per unit of in0, in1 (0: no such input) */
    size_t out;        /* bytes per unit of out */
    size_t align;      /* chunks other than the last are multiples of this many units */
    int in0_is_out;    /* out is in0 updated in place: it takes no room of its own */
};

struct cuda_pipe_plan {
    size_t n;          /* units of the call */
    size_t chunk;      /* units per chunk; the last chunk holds the rest */
    size_t chunks;     /* chunks of the call, 0 when n is 0 */
    unsigned slots;    /* 1 or 2: chunk c runs on slot c % slots */
    int staged;        /* through pinned staging buffers (else direct) */
};

/* Bytes per unit that pass through a staging buffer. */
static inline size_t cuda_pipe_unit_bytes(const struct cuda_pipe_units *u)
{
    return u->in[0] + u->in[1] + (u->in0_is_out ? 0 : u->out);
}

/*
 * The plan for n units with staging buffers of stage_bytes, staged when the
 * call moves at least min_bytes and a staging buffer holds `align` units;
 * direct (one chunk, no staging) otherwise. 0, or -1 when the call's bytes
 * do not fit a size_t (the caller refuses it, saying so).
 */
static inline int cuda_pipe_plan_make(struct cuda_pipe_plan *p, const struct cuda_pipe_units *u,
                                      size_t n, size_t stage_bytes, size_t min_bytes)
{
    const size_t ub = cuda_pipe_unit_bytes(u);
    const size_t align = u->align != 0 ? u->align : 1;
    size_t biggest = u->out > u->in[0] ? u->out : u->in[0];
    if (u->in[1] > biggest)
        biggest = u->in[1];
    *p = (struct cuda_pipe_plan){.n = n, .chunk = n, .chunks = n != 0, .slots = 1};
    /* Device scratch is allocated per input and for the output, up to
     * n units each (direct path): every such size must be representable. */
    if ((ub != 0 && n > SIZE_MAX / ub) || (biggest != 0 && n > SIZE_MAX / biggest))
        return -1;
    if (n == 0 || ub == 0)
        return 0;
    if (n * ub >= min_bytes && stage_bytes / ub >= align) {
        const size_t chunk = stage_bytes / ub / align * align;
        p->staged = 1;
        p->chunk = chunk < n ? chunk : n;
        p->chunks = n / p->chunk + (n % p->chunk != 0);
        p->slots = p->chunks > 1 ? 2 : 1;
    }
    return 0;
}

/* The plan when no staging buffer could be had: one direct chunk. */
static inline void cuda_pipe_plan_direct(struct cuda_pipe_plan *p)
{
    p->staged = 0;
    p->chunk = p->n;
    p->chunks = p->n != 0;
    p->slots = 1;
}

/* Chunk c of the plan (c < chunks): its first unit, its length and slot. */
static inline void cuda_pipe_plan_chunk(const struct cuda_pipe_plan *p, size_t c, size_t *first,
                                        size_t *len, unsigned *slot)
{
    *first = c * p->chunk;
    *len = p->n - *first < p->chunk ? p->n - *first : p->chunk;
    *slot = (unsigned)(c % p->slots);
}

/* Where a chunk of len units lies in its staging buffer: inputs in order
 * from 0, the output after them (or over in0 when in0_is_out); returns the
 * bytes of the buffer the chunk uses. */
static inline size_t cuda_pipe_stage_layout(const struct cuda_pipe_units *u, size_t len,
                                            size_t in_off[2], size_t *out_off)
{
    in_off[0] = 0;
    in_off[1] = len * u->in[0];
    const size_t inputs = len * (u->in[0] + u->in[1]);
    const size_t outputs = len * u->out;
    *out_off = u->in0_is_out ? 0 : inputs;
    if (u->in0_is_out)
        return inputs > outputs ? inputs : outputs;
    return inputs + outputs;
}

#endif
