/* The op descriptor table and the libffi call harness. */
#include "config.h"

#include <ffi.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/opdesc.h"

#if SIZE_MAX == UINT64_MAX
#define FFI_SIZE (&ffi_type_uint64)
#else
#define FFI_SIZE (&ffi_type_uint32)
#endif
#define FFI_PTR (&ffi_type_pointer)
#define FFI_U64 (&ffi_type_uint64)
#define FFI_UINT (&ffi_type_uint)

#define MAX_ARGS 8

struct op_row {
    struct mpce_opdesc d;
    ffi_type *args[MAX_ARGS];
};

#define OP(nm, pr, vt, field, rv, n, ...)                                          \
    {{nm, pr, offsetof(struct vt, field), rv, n, 0}, {__VA_ARGS__}}

static struct op_row rows[] = {
    OP("prg.ctx_new", MPCE_PRIM_PRG, mpce_prg_vtable, ctx_new, 0, 3, FFI_PTR, FFI_SIZE, FFI_PTR),
    OP("prg.ctx_free", MPCE_PRIM_PRG, mpce_prg_vtable, ctx_free, 1, 1, FFI_PTR),
    OP("prg.ecb", MPCE_PRIM_PRG, mpce_prg_vtable, ecb, 0, 5, FFI_PTR, FFI_SIZE, FFI_PTR, FFI_PTR,
       FFI_SIZE),
    OP("prg.mmo", MPCE_PRIM_PRG, mpce_prg_vtable, mmo, 0, 4, FFI_PTR, FFI_PTR, FFI_PTR, FFI_SIZE),
    OP("prg.ctr", MPCE_PRIM_PRG, mpce_prg_vtable, ctr, 0, 5, FFI_PTR, FFI_SIZE, FFI_U64, FFI_PTR,
       FFI_SIZE),
    OP("ntt.ctx_new", MPCE_PRIM_NTT, mpce_ntt_vtable, ctx_new, 0, 5, FFI_SIZE, FFI_SIZE, FFI_PTR,
       FFI_PTR, FFI_PTR),
    OP("ntt.ctx_free", MPCE_PRIM_NTT, mpce_ntt_vtable, ctx_free, 1, 1, FFI_PTR),
    OP("ntt.forward", MPCE_PRIM_NTT, mpce_ntt_vtable, forward, 0, 4, FFI_PTR, FFI_PTR, FFI_PTR,
       FFI_SIZE),
    OP("ntt.inverse", MPCE_PRIM_NTT, mpce_ntt_vtable, inverse, 0, 4, FFI_PTR, FFI_PTR, FFI_PTR,
       FFI_SIZE),
    OP("ntt.mul", MPCE_PRIM_NTT, mpce_ntt_vtable, mul, 0, 5, FFI_PTR, FFI_PTR, FFI_PTR, FFI_PTR,
       FFI_SIZE),
    OP("lpn.ctx_new", MPCE_PRIM_LPN, mpce_lpn_vtable, ctx_new, 0, 3, FFI_PTR, FFI_UINT, FFI_PTR),
    OP("lpn.ctx_free", MPCE_PRIM_LPN, mpce_lpn_vtable, ctx_free, 1, 1, FFI_PTR),
    OP("lpn.fold", MPCE_PRIM_LPN, mpce_lpn_vtable, fold, 0, 5, FFI_PTR, FFI_U64, FFI_PTR, FFI_PTR,
       FFI_SIZE),
    OP("dpf.ctx_new", MPCE_PRIM_DPF, mpce_dpf_vtable, ctx_new, 0, 5, FFI_UINT, FFI_UINT, FFI_PTR,
       FFI_PTR, FFI_PTR),
    OP("dpf.ctx_free", MPCE_PRIM_DPF, mpce_dpf_vtable, ctx_free, 1, 1, FFI_PTR),
    OP("dpf.gen", MPCE_PRIM_DPF, mpce_dpf_vtable, gen, 0, 7, FFI_PTR, FFI_U64, FFI_PTR, FFI_PTR,
       FFI_PTR, FFI_PTR, FFI_PTR),
    OP("dpf.eval", MPCE_PRIM_DPF, mpce_dpf_vtable, eval, 0, 5, FFI_PTR, FFI_PTR, FFI_PTR, FFI_SIZE,
       FFI_PTR),
    OP("dpf.eval_keys", MPCE_PRIM_DPF, mpce_dpf_vtable, eval_keys, 0, 5, FFI_PTR, FFI_PTR,
       FFI_PTR, FFI_SIZE, FFI_PTR),
    OP("dpf.evalall", MPCE_PRIM_DPF, mpce_dpf_vtable, evalall, 0, 3, FFI_PTR, FFI_PTR, FFI_PTR),
    OP("dpf.evalall_range", MPCE_PRIM_DPF, mpce_dpf_vtable, evalall_range, 0, 5, FFI_PTR,
       FFI_PTR, FFI_U64, FFI_U64, FFI_PTR),
};

#define N_OPS (sizeof(rows) / sizeof(rows[0]))

static ffi_cif cifs[N_OPS];
static int cif_ok[N_OPS];
static pthread_once_t cif_once = PTHREAD_ONCE_INIT;

/* All cifs at once: a few microseconds, and one once-flag keeps it simple. */
static void prepare_all(void)
{
    for (size_t i = 0; i < N_OPS; i++) {
        rows[i].d.index = i;
        ffi_type *rt = rows[i].d.returns_void ? &ffi_type_void : &ffi_type_sint;
        cif_ok[i] = ffi_prep_cif(&cifs[i], FFI_DEFAULT_ABI, rows[i].d.nargs, rt, rows[i].args) ==
                    FFI_OK;
    }
}

const struct mpce_opdesc *mpce_op_find(const char *name)
{
    pthread_once(&cif_once, prepare_all);
    for (size_t i = 0; i < N_OPS; i++)
        if (strcmp(rows[i].d.name, name) == 0)
            return &rows[i].d;
    return NULL;
}

size_t mpce_op_count(void)
{
    return N_OPS;
}

const struct mpce_opdesc *mpce_op_at(size_t i)
{
    pthread_once(&cif_once, prepare_all);
    return i < N_OPS ? &rows[i].d : NULL;
}

mpce_status mpce_op_call(const struct mpce_opdesc *d, const void *vtable, void **argv, int *ret)
{
    pthread_once(&cif_once, prepare_all);
    size_t vsize;
    void (*fn)(void);
    if (!d || !vtable)
        return mpce_error(MPCE_ERR_ARG, "mpce_op_call: no descriptor or vtable");
    memcpy(&vsize, vtable, sizeof(vsize));
    if (vsize < d->offset + sizeof(fn))
        return mpce_error(MPCE_ERR_PLUGIN,
                          "op %s: the vtable (struct_size %zu) is too small to hold it: "
                          "rebuild the plugin against this mpcengine/plugin.h",
                          d->name, vsize);
    memcpy(&fn, (const char *)vtable + d->offset, sizeof(fn));
    if (!fn)
        return mpce_error(MPCE_ERR_PLUGIN, "op %s is not implemented (NULL in the vtable)",
                          d->name);
    if (!cif_ok[d->index])
        return mpce_error(MPCE_ERR_BACKEND, "op %s: libffi could not prepare the call",
                          d->name);
    ffi_arg rv = 0;
    ffi_call(&cifs[d->index], fn, &rv, argv);
    if (ret)
        *ret = d->returns_void ? 0 : (int)rv;
    return MPCE_OK;
}
