/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuda module's descriptor: device 0 as "cuda0" and the GPU
 * implementations (ACCEL class: the engine tries them first only for large
 * calls unless pins say otherwise).
 *
 * Why probe and init split the device check as they do: the engine vets a
 * module in a helper process and fails one that leaves descriptors open
 * after its probe, while from init on a runtime may keep its driver open.
 * cudaGetDeviceCount opens the driver's device files and keeps them, so
 * probe must not reach it where a driver is present: probe only looks for
 * the driver library (and its CUDA version), and where there is none it
 * asks cudaGetDeviceCount, which then fails before opening anything, for
 * the reason it gives. init asks the device itself and refuses with the
 * runtime's error string.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda.h"
#include "plugins/cuda/k_aes.h"

static int probe_plugin(const struct mpce_host *host, char *why, size_t len)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h == NULL) {
        char dl[160];
        const char *err = dlerror();
        snprintf(dl, sizeof(dl), "%s", err != NULL ? err : "not found");
        int n = 0;
        const cudaError_t e = cudaGetDeviceCount(&n);
        snprintf(why, len, "no CUDA device: no NVIDIA driver (%s; cudaGetDeviceCount: %s)",
                 dl, e != cudaSuccess ? cudaGetErrorString(e) : "no error");
        return 1;
    }
    int (*get_version)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
    int v = 0;
    const int got = get_version != NULL && get_version(&v) == 0;
    dlclose(h);
    if (!got) {
        snprintf(why, len, "no CUDA device usable: the NVIDIA driver's libcuda.so.1 has no "
                 "working cuDriverGetVersion; reinstall the NVIDIA driver");
        return 1;
    }
    /* CUDA's minor-version compatibility: a driver of the runtime's major
     * version runs this module's sm_90 code whatever its minor version
     * (only JIT-compiling newer PTX needs a newer driver, and the module
     * ships SASS for the architectures it names); an older major version
     * cannot. */
    if (v / 1000 < CUDART_VERSION / 1000) {
        snprintf(why, len,
                 "no CUDA device usable: the NVIDIA driver supports CUDA %d.%d, and this module "
                 "was built with CUDA %d.%d, which needs a CUDA %d driver; update the NVIDIA "
                 "driver",
                 v / 1000, v % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10,
                 CUDART_VERSION / 1000);
        return 1;
    }
    return 0;
}

static void module_free(struct cuda_module *m)
{
    for (unsigned i = 0; i < m->pool_made; i++)
        cudaFreeHost(m->pool[i]);
    if (m->t0 != NULL)
        cudaFree(m->t0);
    if (m->stream != NULL)
        cudaStreamDestroy(m->stream);
    pthread_mutex_destroy(&m->pool_lock);
    free(m);
}

static int init(const struct mpce_host *host, void **module_state, char *why, size_t len)
{
    struct cuda_module *m = calloc(1, sizeof(*m));
    if (m == NULL) {
        snprintf(why, len, "out of memory for the module state");
        return MPCE_ERR_NOMEM;
    }
    m->host = host;
    pthread_mutex_init(&m->pool_lock, NULL);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        snprintf(why, len, "no CUDA device: cudaGetDeviceCount: %s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        module_free(m);
        return MPCE_ERR_BACKEND;
    }
    /* Device 0 only: one GPU is what the module serves as cuda0. */
    m->device = 0;
    const char *step = "cudaSetDevice(0)";
    e = cudaSetDevice(m->device);
    if (e == cudaSuccess) {
        step = "cudaGetDeviceProperties";
        e = cudaGetDeviceProperties(&m->prop, m->device);
    }
    if (e == cudaSuccess) {
        /* Every staged call and every DPF call allocates stream-ordered
         * (cudaMallocAsync); some vGPU setups have no pools, and would fail
         * each op while the module lists as usable. */
        int pools = 0;
        step = "cudaDeviceGetAttribute(cudaDevAttrMemoryPoolsSupported)";
        e = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, m->device);
        if (e == cudaSuccess && !pools) {
            snprintf(why, len, "GPU 0 (%s) has no stream-ordered memory pools "
                     "(cudaMallocAsync), which this module needs: update the driver, or "
                     "disable the plugin ([plugin.cuda] enabled = no)", m->prop.name);
            module_free(m);
            return MPCE_ERR_BACKEND;
        }
    }
    if (e == cudaSuccess) {
        step = "loading the kernels";
        e = (cudaError_t)cudak_image_check();
        if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) {
            snprintf(why, len,
                     "GPU 0 (%s, sm_%d%d) cannot run this module's code (built for sm_"
                     MPCE_CUDA_ARCHS "): %s; rebuild with --with-cuda-arch=%d%d",
                     m->prop.name, m->prop.major, m->prop.minor, cudaGetErrorString(e),
                     m->prop.major, m->prop.minor);
            module_free(m);
            return MPCE_ERR_BACKEND;
        }
    }
    if (e == cudaSuccess) {
        uint32_t t0[256];
        kd_tt_fill(t0);
        cudaDriverGetVersion(&m->driver_version);
        cudaRuntimeGetVersion(&m->runtime_version);
        step = "the module's stream and T-table";
        e = cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&m->t0, sizeof(t0));
        if (e == cudaSuccess)
            e = cuda_upload(m->t0, t0, sizeof(t0));
    }
    if (e != cudaSuccess) {
        snprintf(why, len, "GPU 0: %s: %s", step, cudaGetErrorString(e));
        module_free(m);
        return e == cudaErrorMemoryAllocation ? MPCE_ERR_NOMEM : MPCE_ERR_BACKEND;
    }
    *module_state = m;
    return 0;
}

static void fini(void *module_state)
{
    /* Every context, buffer and queue is gone by now (the ABI's order);
     * the process's CUDA context stays, as others in it may use it. */
    module_free(module_state);
}

static void describe(void *module_state, char *buf, size_t len)
{
    const struct cuda_module *m = module_state;
    snprintf(buf, len, "GPU 0 as cuda0: %s, sm_%d%d, %zu MiB, %d SMs, driver CUDA %d.%d",
             m->prop.name, m->prop.major, m->prop.minor, m->prop.totalGlobalMem >> 20,
             m->prop.multiProcessorCount, m->driver_version / 1000,
             m->driver_version % 1000 / 10);
}

#define IMPL(var, prim, nm, prio, fl, table)                                               \
    static const struct mpce_impl var = {                                                  \
        .struct_size = sizeof(struct mpce_impl),                                           \
        .primitive = prim,                                                                 \
        .name = nm,                                                                        \
        .impl_class = MPCE_CLASS_ACCEL,                                                    \
        .priority = prio,                                                                  \
        .flags = (fl) | MPCE_IMPL_ASYNC,                                                   \
        .memory = MPCE_MEM_HOST | MPCE_MEM_DEVICE,                                         \
        .device = &cuda_device0,                                                           \
        .ops = table,                                                                      \
    }

IMPL(prg_cuda, MPCE_PRIM_PRG, "prg-cuda", 450, MPCE_IMPL_CONSTANT_TIME, &cuda_prg_bs_ops);
/* Shared-memory T-tables: lookups indexed by key and data bytes, so
 * variable time, and used only where the configuration allows that. */
IMPL(prg_cuda_tt, MPCE_PRIM_PRG, "prg-cuda-ttable", 440, MPCE_IMPL_VARIABLE_TIME,
     &cuda_prg_tt_ops);
IMPL(ntt_cuda, MPCE_PRIM_NTT, "ntt-cuda", 450, MPCE_IMPL_CONSTANT_TIME, &cuda_ntt_ops);
IMPL(lpn_cuda, MPCE_PRIM_LPN, "lpn-cuda", 450, MPCE_IMPL_CONSTANT_TIME, &cuda_lpn_ops);
IMPL(dpf_cuda, MPCE_PRIM_DPF, "dpf-cuda", 450, MPCE_IMPL_CONSTANT_TIME, &cuda_dpf_ops);

static const struct mpce_impl *const impls[] = {&prg_cuda, &prg_cuda_tt, &ntt_cuda, &lpn_cuda,
                                                &dpf_cuda};
static const struct mpce_device *const devices[] = {&cuda_device0};

static const struct mpce_plugin plugin = {
    .struct_size = sizeof(struct mpce_plugin),
    .abi_major = MPCE_PLUGIN_ABI_MAJOR,
    .abi_minor = MPCE_PLUGIN_ABI_MINOR,
    .name = "cuda",
    .version = PACKAGE_VERSION,
    .probe = probe_plugin,
    .init = init,
    .fini = fini,
    .describe = describe,
    .n_devices = 1,
    .devices = devices,
    .n_impls = sizeof(impls) / sizeof(impls[0]),
    .impls = impls,
};

MPCE_API const struct mpce_plugin *mpce_plugin_entry_v2(void);

const struct mpce_plugin *mpce_plugin_entry_v2(void)
{
    return &plugin;
}
