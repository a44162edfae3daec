/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda module's staging arithmetic (plugins/cuda/pipe_plan.h) without a
 * GPU: how a host-memory call is cut into chunks, which slot each chunk
 * takes and where its bytes lie in a staging buffer, for the unit shapes
 * of every op the module stages, at 0, 1, 3, around the staging threshold
 * and the chunk size, odd multiples and past what a size_t can count. A
 * mistake here would corrupt results only on a GPU, and only at sizes the
 * GPU tests may not reach. Built and run by `make check` everywhere.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "plugins/cuda/pipe_plan.h"
#include "testutil.h"

/* The module's sizes, small ones too: the arithmetic must not depend on
 * them being powers of two. */
#define STAGE ((size_t)16 << 20)
#define MIN ((size_t)1 << 20)

struct shape {
    const char *name;
    struct cuda_pipe_units u;
};

static const struct shape shapes[] = {
    {"prg.ecb", {.in = {16, 0}, .out = 16, .align = 4}},
    {"prg.ctr", {.out = 16, .align = 4}},
    {"prg.mmo m=3", {.in = {16, 0}, .out = 48, .align = 4}},
    {"lpn.fold", {.in = {16, 0}, .out = 16, .align = 4, .in0_is_out = 1}},
    {"ntt.forward N=4096 L=2", {.in = {65536, 0}, .out = 65536, .align = 1}},
    {"ntt.mul N=4096 L=3", {.in = {98304, 98304}, .out = 98304, .align = 1}},
    /* A unit larger than a staging buffer: always direct. */
    {"ntt.forward N=2^17 L=20", {.in = {20971520, 0}, .out = 20971520, .align = 1}},
};

static int fail(const char *shape, size_t n, const char *what)
{
    fprintf(stderr, "%s, n = %zu: %s\n", shape, n, what);
    return 0;
}

/* Chunk c's place checked against the previous chunk's end, and its bytes'
 * layout in a staging buffer. */
static int check_chunk(const struct shape *sh, const struct cuda_pipe_plan *p, size_t c,
                       size_t *end)
{
    const struct cuda_pipe_units *u = &sh->u;
    size_t first, len, in_off[2], out_off;
    unsigned slot;
    cuda_pipe_plan_chunk(p, c, &first, &len, &slot);
    if (end != NULL && first != *end)
        return fail(sh->name, p->n, "a chunk does not start where the previous one ended");
    if (len == 0 || len > p->chunk || first + len > p->n)
        return fail(sh->name, p->n, "a chunk is empty, too long, or runs past the call");
    if (c + 1 < p->chunks && (len != p->chunk || len % u->align != 0))
        return fail(sh->name, p->n, "a chunk before the last is short or not aligned");
    if (c + 1 == p->chunks && first + len != p->n)
        return fail(sh->name, p->n, "the last chunk does not end the call");
    if (slot != c % p->slots)
        return fail(sh->name, p->n, "chunks do not alternate between the slots");
    if (p->staged) {
        const size_t used = cuda_pipe_stage_layout(u, len, in_off, &out_off);
        if (used > STAGE)
            return fail(sh->name, p->n, "a chunk overflows its staging buffer");
        const size_t in0_end = in_off[0] + len * u->in[0];
        const size_t in1_end = in_off[1] + len * u->in[1];
        if (in_off[0] != 0 || in_off[1] != in0_end)
            return fail(sh->name, p->n, "the inputs are not packed from the start");
        if (u->in0_is_out ? out_off != 0 : out_off != in1_end)
            return fail(sh->name, p->n, "the output is not after the inputs (over in0 in place)");
        if (out_off + len * u->out > used || in1_end > used)
            return fail(sh->name, p->n, "a region lies past the bytes the layout reports");
    }
    if (end != NULL)
        *end = first + len;
    return 1;
}

static int check_plan(const struct shape *sh, size_t n)
{
    const struct cuda_pipe_units *u = &sh->u;
    const size_t ub = cuda_pipe_unit_bytes(u);
    struct cuda_pipe_plan p;
    if (cuda_pipe_plan_make(&p, u, n, STAGE, MIN) != 0)
        return n > SIZE_MAX / ub ? 1 : fail(sh->name, n, "refused a call that fits");
    if (n > SIZE_MAX / ub)
        return fail(sh->name, n, "accepted a call whose bytes overflow a size_t");
    if (p.n != n)
        return fail(sh->name, n, "the plan is for another length");
    if (n == 0)
        return p.chunks == 0 ? 1 : fail(sh->name, n, "an empty call has chunks");
    const int should_stage = n * ub >= MIN && STAGE / ub >= u->align;
    if (p.staged != should_stage)
        return fail(sh->name, n, should_stage ? "not staged" : "staged below the threshold");
    if (p.staged) {
        if (p.chunk % u->align != 0 && p.chunk != n)
            return fail(sh->name, n, "the chunk is not a multiple of the alignment");
        if (p.chunk * ub > STAGE)
            return fail(sh->name, n, "a chunk does not fit a staging buffer");
        if (p.chunks != n / p.chunk + (n % p.chunk != 0))
            return fail(sh->name, n, "wrong chunk count");
        if (p.slots != (p.chunks > 1 ? 2u : 1u))
            return fail(sh->name, n, "two slots are for calls of more than one chunk");
    } else if (p.chunks != 1 || p.chunk != n || p.slots != 1) {
        return fail(sh->name, n, "a direct call is not one chunk on one slot");
    }
    if (p.chunks <= 4096) {
        size_t end = 0;
        for (size_t c = 0; c < p.chunks; c++)
            if (!check_chunk(sh, &p, c, &end))
                return 0;
        return 1;
    }
    /* Too many to walk: the first two and the last two. */
    size_t end = 0;
    if (!check_chunk(sh, &p, 0, &end) || !check_chunk(sh, &p, 1, &end))
        return 0;
    end = (p.chunks - 2) * p.chunk;
    return check_chunk(sh, &p, p.chunks - 2, &end) && check_chunk(sh, &p, p.chunks - 1, &end);
}

static void test_every_shape_and_size(void)
{
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        const struct shape *sh = &shapes[s];
        const size_t ub = cuda_pipe_unit_bytes(&sh->u);
        const size_t at_min = (MIN + ub - 1) / ub, per_stage = STAGE / ub;
        const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 1000003, at_min - 1, at_min, at_min + 1,
                                per_stage - 1, per_stage, per_stage + 1, per_stage + 3,
                                2 * per_stage + 3, 7 * per_stage + 5, (size_t)1 << 31,
                                SIZE_MAX / ub - 1, SIZE_MAX / ub, SIZE_MAX / ub + 1,
                                SIZE_MAX};
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
            CU_ASSERT(check_plan(sh, sizes[i]));
    }
}

/* Figures worked out by hand, so that the checks above cannot all agree
 * with a plan that is consistently wrong. */
static void test_known_plans(void)
{
    struct cuda_pipe_plan p;
    size_t first, len;
    unsigned slot;

    /* ecb: 32 bytes a block staged (in and out), 2^19 blocks a chunk. */
    CU_ASSERT_EQUAL(cuda_pipe_plan_make(&p, &shapes[0].u, 1000003, STAGE, MIN), 0);
    CU_ASSERT(p.staged && p.chunk == 524288 && p.chunks == 2 && p.slots == 2);
    cuda_pipe_plan_chunk(&p, 1, &first, &len, &slot);
    CU_ASSERT(first == 524288 && len == 475715 && slot == 1);
    /* One byte under the threshold goes direct, at it one staged chunk. */
    CU_ASSERT_EQUAL(cuda_pipe_plan_make(&p, &shapes[0].u, 32767, STAGE, MIN), 0);
    CU_ASSERT(!p.staged && p.chunks == 1 && p.chunk == 32767);
    CU_ASSERT_EQUAL(cuda_pipe_plan_make(&p, &shapes[0].u, 32768, STAGE, MIN), 0);
    CU_ASSERT(p.staged && p.chunks == 1 && p.slots == 1 && p.chunk == 32768);
    /* ctr stages only its output: 2^20 blocks a chunk. */
    CU_ASSERT_EQUAL(cuda_pipe_plan_make(&p, &shapes[1].u, 3145731, STAGE, MIN), 0);
    CU_ASSERT(p.staged && p.chunk == 1048576 && p.chunks == 4);
    cuda_pipe_plan_chunk(&p, 3, &first, &len, &slot);
    CU_ASSERT(first == 3145728 && len == 3 && slot == 1);
    /* mmo m = 3: 16 in + 48 out a seed, the output after a chunk of inputs. */
    size_t in_off[2], out_off;
    CU_ASSERT_EQUAL(cuda_pipe_stage_layout(&shapes[2].u, 262144, in_off, &out_off), STAGE);
    CU_ASSERT(in_off[0] == 0 && out_off == 262144 * 16);
    /* The fold updates out in place: the output over the input. */
    CU_ASSERT_EQUAL(cuda_pipe_stage_layout(&shapes[3].u, 5, in_off, &out_off), 80);
    CU_ASSERT_EQUAL(out_off, 0);
    /* mul: both inputs, then the output. */
    CU_ASSERT_EQUAL(cuda_pipe_stage_layout(&shapes[5].u, 3, in_off, &out_off), 9 * 98304);
    CU_ASSERT(in_off[1] == 3 * 98304 && out_off == 6 * 98304);
    /* 20 MiB units: direct whatever the call's size. */
    CU_ASSERT_EQUAL(cuda_pipe_plan_make(&p, &shapes[6].u, 64, STAGE, MIN), 0);
    CU_ASSERT(!p.staged && p.chunks == 1 && p.chunk == 64);
    /* Past a size_t: refused. */
    CU_ASSERT_EQUAL(cuda_pipe_plan_make(&p, &shapes[0].u, SIZE_MAX / 16, STAGE, MIN), -1);
}

/* With no staging buffer to be had the plan falls back to one direct
 * chunk of the whole call. */
static void test_direct_fallback(void)
{
    struct cuda_pipe_plan p;
    size_t first, len;
    unsigned slot;
    CU_ASSERT_EQUAL(cuda_pipe_plan_make(&p, &shapes[0].u, 5000001, STAGE, MIN), 0);
    CU_ASSERT(p.staged && p.chunks == 10);
    cuda_pipe_plan_direct(&p);
    CU_ASSERT(!p.staged && p.chunks == 1 && p.slots == 1 && p.chunk == 5000001);
    cuda_pipe_plan_chunk(&p, 0, &first, &len, &slot);
    CU_ASSERT(first == 0 && len == 5000001 && slot == 0);
    CU_ASSERT(check_plan(&shapes[0], 5000001));
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"every staged shape at odd, edge and huge sizes", test_every_shape_and_size},
        {"plans worked out by hand", test_known_plans},
        {"no staging buffer: one direct chunk", test_direct_fallback},
        {NULL, NULL},
    };
    return tu_main("cuda staging arithmetic", tests);
}
