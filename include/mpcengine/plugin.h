/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The plugin ABI, version 2, installed for third-party backends.
 *
 * A module exports one symbol, MPCE_PLUGIN_ENTRY_SYMBOL, whose name carries
 * the ABI major. After dlopen(RTLD_NOW | RTLD_LOCAL) the engine calls it once
 * and reads the returned descriptor. Then, per engine that loads the module:
 * probe(host) (may the module run here?), init(host, &module_state) (its
 * long-lived state: a device context, queues, tables), each
 * implementation's probe(module_state); at the end fini(module_state), after
 * every context, buffer and queue that used the module is gone.
 *
 * Loading. The engine opens a module file once, checks it (owner, mode, the
 * directories above it), hashes it and dlopens that descriptor as
 * /proc/self/fd/N, so the bytes checked are the bytes that run. For the
 * module this means: $ORIGIN in its RUNPATH names /proc/self/fd, not its
 * directory, so the libraries it needs must be where the dynamic linker
 * looks; those libraries are not hashed; dladdr() names it /proc/self/fd/N.
 *
 * Vetting. Unless [tune] vet = no, a module the engine has no cached
 * verdict for (by its SHA-256) first runs in the probe helper, a separate
 * process (mpcengine-probe): its constructors, the entry point, probe,
 * init, each implementation's probe and self-test, then fini. A module that
 * crashes, aborts, calls exit(), hangs past [tune] vet_timeout, or leaves
 * descriptors open after its constructors, entry point or probe (nothing is
 * started yet that could own them), or on each of two runs of a self-test,
 * fails there and is never loaded into the application; one that keeps
 * descriptors from init on, or opens some on a self-test's first run only,
 * is warned about (a device runtime may hold its driver open for the
 * process's life). So constructors, the entry point, probe, init, the
 * implementations' probes and fini run at least twice, in two processes:
 * keep them free of effects outside the process.
 *
 * Versioning (SQLite's VFS rule). Every struct begins with its own size and
 * only grows at the end; a minor version adds fields or ops, a major changes
 * them. The engine knows the size of each struct at every minor of its major:
 * it accepts a module of any minor up to its own, refuses a newer one, checks
 * that every required op is present (non-NULL and covered by struct_size) and
 * calls an optional op only where the table covers it and it is non-NULL.
 *
 * Validation at load. A module or implementation is refused, with a one-line
 * reason naming the field, when a required op is NULL, when flags carry
 * anything but exactly one of MPCE_IMPL_CONSTANT_TIME / MPCE_IMPL_VARIABLE_TIME
 * (plus MPCE_IMPL_ASYNC, MPCE_IMPL_CHECKS_NTT_INPUT on an NTT implementation
 * of a 2.4 or later module, and MPCE_IMPL_CHECKS_NTT_IN_PLACE with it from
 * 2.5), when impl_class is unknown, or when the memory kinds
 * do not include host memory. A priority outside its class's range is clamped
 * to the range, and the listing says so.
 *
 * Calling contract. The engine validates every argument (sizes, ranges,
 * canonical NTT inputs on host memory, parsed DPF keys) before it calls an op,
 * and never calls a data op with a count of 0. The one exception is
 * MPCE_IMPL_CHECKS_NTT_INPUT: an implementation that carries it checks the
 * NTT inputs itself, as it reads them (see MPCE_OP_NONCANONICAL). An op returns 0, or an
 * mpce_status after explaining it with host->set_error(). An op may run on one
 * state from several threads at once (the engine splits large host calls into
 * slices, each a valid call); ctx_new and ctx_free are never concurrent with
 * ops on that state, and ctx_free comes only after every queued op on the
 * state has completed.
 *
 * Asynchronous ops (MPCE_OP_PENDING). Only the data of the op's buffer
 * arguments (in, out, points: what a *_buf call names, host or device
 * addresses) stays valid and untouched by the engine until completion. The
 * struct mpce_call, keys and key arrays (DPF), moduli and every other
 * argument passed by pointer live only until the op returns: copy what the
 * queued work needs. host->complete is called exactly once for each
 * MPCE_OP_PENDING return and never otherwise; it may come before the op has
 * even returned. Ops receive buffer addresses exactly as the device's alloc
 * returned them (copies may add offsets).
 */
#ifndef MPCENGINE_PLUGIN_H
#define MPCENGINE_PLUGIN_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPCE_PLUGIN_ABI_MAJOR 2u
/* 2.0: the ops below without a "since 1" mark; 2.1: dpf.evalall_range;
 * 2.2: knobs (struct mpce_knob, mpce_impl.knobs, mpce_call.knobs);
 * 2.3: dpf.eval_batch over struct mpce_dpf_batch_v1;
 * 2.4: MPCE_IMPL_CHECKS_NTT_INPUT and MPCE_OP_NONCANONICAL;
 * 2.5: MPCE_IMPL_CHECKS_NTT_IN_PLACE. */
#define MPCE_PLUGIN_ABI_MINOR 5u
#define MPCE_PLUGIN_ENTRY_SYMBOL "mpce_plugin_entry_v2"

/* ---- how an op is called ------------------------------------------------- */

/* Memory kinds (struct mpce_impl.memory, struct mpce_call.memory). Every
 * implementation serves host memory: the self-test and the plain API calls
 * run there. A device implementation may also serve its device's memory. */
#define MPCE_MEM_HOST 0x1u
#define MPCE_MEM_DEVICE 0x2u

/* Returned by an op of an MPCE_IMPL_ASYNC implementation whose call carries a
 * completion: the work is queued, and host->complete(host, call->done, ...)
 * will be called exactly once, from any thread, when it is finished. */
#define MPCE_OP_PENDING 0x10000

/*
 * Since 2.4. An NTT implementation flagged MPCE_IMPL_CHECKS_NTT_INPUT is
 * called with unchecked inputs on synchronous host-memory calls whose
 * output does not overlap an input: a separate pass over the inputs would
 * cost 5-40 % of a fast kernel, a check folded into its first pass next to
 * nothing. Its forward, inverse and mul ops then return MPCE_OP_NONCANONICAL
 * (without set_error) when a coefficient of an input row is not below that
 * row's modulus; they may have written any part of out by then, and must
 * still read and write only within the call's arrays. The engine zeroes out
 * and reports the first such coefficient itself. Calls in place, on
 * buffers and on devices are still checked by the engine first, so an op
 * never has to undo its writes, except as MPCE_IMPL_CHECKS_NTT_IN_PLACE
 * says. The self-test refuses the flag to an implementation that
 * transforms a non-canonical input.
 *
 * Since 2.5. MPCE_IMPL_CHECKS_NTT_IN_PLACE, carried with
 * MPCE_IMPL_CHECKS_NTT_INPUT: the same holds for calls in place (out equal
 * to an input) on a context whose application chose MPCE_NTT_REFUSAL_ZERO
 * (ntt.h). Such an op must check each input word as it reads it, before
 * anything overwrites it, and may leave out in any state when it returns
 * MPCE_OP_NONCANONICAL (the engine zeroes it). Its own bit, so that a
 * plugin rebuilt against a newer header keeps the meaning it was written
 * for. The self-test refuses it to an implementation that transforms a
 * non-canonical input in place.
 */
#define MPCE_IMPL_CHECKS_NTT_INPUT 0x200u
#define MPCE_IMPL_CHECKS_NTT_IN_PLACE 0x400u
#define MPCE_OP_NONCANONICAL 0x10001

/* Engine-owned; only ever passed back to host->complete. */
struct mpce_completion;

/* The second argument of every data op. */
struct mpce_call {
    size_t struct_size;
    /* MPCE_MEM_HOST: the op's buffers are host pointers. MPCE_MEM_DEVICE:
     * they are addresses returned by the implementation's device alloc, plus
     * offsets; keys and key arrays (DPF) are always host memory. */
    uint32_t memory;
    /* The device queue the work goes on (mpce_device.queue_new), or NULL:
     * the module's choice (a host-memory call, which the engine waits for). */
    void *queue;
    /* Non-NULL: the op may return MPCE_OP_PENDING (ASYNC implementations
     * only). NULL: the op must finish before it returns. */
    struct mpce_completion *done;
    /* Since 2.2. NULL (n_knobs 0): every knob at its default. Else
     * n_knobs values, one per knob the implementation declares
     * (mpce_impl.knobs, in that order), each one of that knob's values: what
     * the selector measured best for this call's size class, or what a
     * caller named ("lpn-soft:chunk=64"). Read them with mpce_call_knob(). */
    const uint32_t *knobs;
    size_t n_knobs;
};

/* A host-memory call that finishes before it returns: what the engine passes
 * for plain host calls, and what a plugin passes to its own ops. */
#define MPCE_CALL_HOST_INIT                                                                \
    {.struct_size = sizeof(struct mpce_call), .memory = MPCE_MEM_HOST, .queue = NULL,       \
     .done = NULL, .knobs = NULL, .n_knobs = 0}

/* Knob i's value for this call: the one it carries, else dflt (the knob's
 * default). A call from an engine before 2.2 carries none, and none carries
 * a value past the implementation's own knobs. */
static inline uint32_t mpce_call_knob(const struct mpce_call *call, unsigned i, uint32_t dflt)
{
    if (call == NULL || call->struct_size < sizeof(struct mpce_call) || call->knobs == NULL ||
        i >= call->n_knobs)
        return dflt;
    return call->knobs[i];
}

/* ---- services the engine offers a module --------------------------------- */

/* One host per module per engine, valid from probe until fini returns. */
struct mpce_host {
    size_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;
    /* A message for the embedding application's log callback, tagged with
     * the plugin's name; never printed by the library itself. */
    void (*log)(const struct mpce_host *host, mpce_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
    /* Detail for the op that is about to return an error (thread-local). */
    void (*set_error)(const struct mpce_host *host, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
    /* An environment variable under the engine's rules: NULL in root and
     * setuid/setgid processes and in engines made with MPCE_OPT_NO_ENV. */
    const char *(*getenv)(const struct mpce_host *host, const char *name);
    /* Finish an op that returned MPCE_OP_PENDING, once: status 0 or an
     * mpce_status, message NULL or one line saying what went wrong (copied).
     * An op that returns anything else has finished and must not call it:
     * the engine tolerates a complete() that has returned before the op
     * returns (counted once; if the op returns 0, a failure status it gave
     * is the call's), but one still running, or made later, may find the
     * completion gone. */
    void (*complete)(const struct mpce_host *host, struct mpce_completion *done, int status,
                     const char *message);
    void *host_data; /* engine private */
};

/* ---- the ops, written once -----------------------------------------------
 *
 * Each primitive's ops are listed once below, in table order:
 *   OP(prim, name, since_minor, required, return_type, ARGS)
 * where ARGS is a sequence (type, name)(type, name)... of the parameters after
 * the first, `void *self`: the module state for ctx_new, the op state (what
 * ctx_new made) for every other op. These lists generate the op-table structs
 * here, and in the engine the per-minor table sizes, the required-op checks,
 * the libffi call descriptors and the typed call wrappers, so the compiler
 * checks every one of them against this single definition. Ops are only ever
 * appended, with the minor that added them.
 */

/* PRG state: m (1..8) AES-128 keys, expanded once in ctx_new. */
#define MPCE_PRG_OPS(OP)                                                                   \
    OP(prg, ctx_new, 0, 1, int, (const uint8_t *, keys)(size_t, m)(void **, state))        \
    OP(prg, ctx_free, 0, 1, void, )                                                        \
    /* out[i] = AES_{keys[key_index]}(in[i]); in == out allowed */                         \
    OP(prg, ecb, 0, 1, int,                                                                \
       (const struct mpce_call *, call)(size_t, key_index)(const uint8_t *, in)            \
       (uint8_t *, out)(size_t, n))                                                        \
    /* out[i*m + j] = AES_{keys[j]}(seeds[i]) ^ seeds[i]; out never overlaps seeds */      \
    OP(prg, mmo, 0, 1, int,                                                                \
       (const struct mpce_call *, call)(const uint8_t *, seeds)(uint8_t *, out)(size_t, n)) \
    /* out[i] = AES_{keys[key_index]}(LE64(c0 + i mod 2^64) || 0^64) */                    \
    OP(prg, ctr, 0, 1, int,                                                                \
       (const struct mpce_call *, call)(size_t, key_index)(uint64_t, c0)(uint8_t *, out)   \
       (size_t, n))

/* NTT state for degree n and l moduli; the engine has checked every q and
 * found psi[i], the primitive 2n-th root of unity of SPEC.md for q[i]. */
#define MPCE_NTT_OPS(OP)                                                                   \
    OP(ntt, ctx_new, 0, 1, int,                                                            \
       (size_t, n)(size_t, l)(const uint64_t *, q)(const uint64_t *, psi)(void **, state))  \
    OP(ntt, ctx_free, 0, 1, void, )                                                        \
    OP(ntt, forward, 0, 1, int,                                                            \
       (const struct mpce_call *, call)(const uint64_t *, in)(uint64_t *, out)             \
       (size_t, batch))                                                                    \
    OP(ntt, inverse, 0, 1, int,                                                            \
       (const struct mpce_call *, call)(const uint64_t *, in)(uint64_t *, out)             \
       (size_t, batch))                                                                    \
    OP(ntt, mul, 0, 1, int,                                                                \
       (const struct mpce_call *, call)(const uint64_t *, a)(const uint64_t *, b)          \
       (uint64_t *, out)(size_t, batch))

/* LPN state for a seed and logk; the table holds 2^logk blocks. */
#define MPCE_LPN_OPS(OP)                                                                   \
    OP(lpn, ctx_new, 0, 1, int, (const uint8_t *, seed)(unsigned, logk)(void **, state))   \
    OP(lpn, ctx_free, 0, 1, void, )                                                        \
    OP(lpn, fold, 0, 1, int,                                                               \
       (const struct mpce_call *, call)(uint64_t, c0)(const uint8_t *, table)              \
       (uint8_t *, out)(size_t, n))

/* DPF state for domain bits, group and PRG keys (those of every key given).
 * gen: s0, s1 have their t-bits clear; beta is as in mpce_dpf_gen (t-bit
 * clear for bytes); fills both keys completely. evalall: 2^bits outputs,
 * bits <= 32. evalall_range (since 2.1, optional): the outputs for x in
 * [x_begin, x_end) only, x_begin's first, so the engine can split one
 * full-domain evaluation over its worker threads. eval_batch (since 2.3,
 * optional): keys first .. first + n - 1 of a level-major batch, key
 * first + j at points[j], out[j] its output; what eval_keys computes, from
 * a layout in which a walk over consecutive keys reads consecutive memory.
 * Without it the engine unpacks the batch and calls eval_keys. */
#define MPCE_DPF_OPS(OP)                                                                   \
    OP(dpf, ctx_new, 0, 1, int,                                                            \
       (unsigned, bits)(unsigned, group)(const uint8_t *, kl)(const uint8_t *, kr)         \
       (void **, state))                                                                   \
    OP(dpf, ctx_free, 0, 1, void, )                                                        \
    OP(dpf, gen, 0, 1, int,                                                                \
       (const struct mpce_call *, call)(uint64_t, alpha)(const uint8_t *, beta)            \
       (const uint8_t *, s0)(const uint8_t *, s1)(struct mpce_dpf_key_v1 *, key0)          \
       (struct mpce_dpf_key_v1 *, key1))                                                   \
    OP(dpf, eval, 0, 1, int,                                                               \
       (const struct mpce_call *, call)(const struct mpce_dpf_key_v1 *, key)               \
       (const uint64_t *, points)(size_t, npoints)(uint8_t *, out))                        \
    OP(dpf, eval_keys, 0, 1, int,                                                          \
       (const struct mpce_call *, call)(const struct mpce_dpf_key_v1 *const *, keys)       \
       (const uint64_t *, points)(size_t, nkeys)(uint8_t *, out))                          \
    OP(dpf, evalall, 0, 1, int,                                                            \
       (const struct mpce_call *, call)(const struct mpce_dpf_key_v1 *, key)               \
       (uint8_t *, out))                                                                   \
    OP(dpf, evalall_range, 1, 0, int,                                                      \
       (const struct mpce_call *, call)(const struct mpce_dpf_key_v1 *, key)               \
       (uint64_t, x_begin)(uint64_t, x_end)(uint8_t *, out))                               \
    OP(dpf, eval_batch, 3, 0, int,                                                         \
       (const struct mpce_call *, call)(const struct mpce_dpf_batch_v1 *, batch)           \
       (size_t, first)(const uint64_t *, points)(size_t, n)(uint8_t *, out))

/* Every primitive, in mpce_primitive order. */
#define MPCE_ALL_OPS(OP) MPCE_PRG_OPS(OP) MPCE_NTT_OPS(OP) MPCE_LPN_OPS(OP) MPCE_DPF_OPS(OP)

/* Sequence helpers: MPCE_PARAMS((t, a)(u, b)) is `, t a , u b`;
 * MPCE_ARG_NAMES((t, a)(u, b)) is `, a , b`. Each step expands to its text
 * and the name of the next step; the last step's name is pasted with _END,
 * which expands to nothing. */
#define MPCE__END(...) MPCE__END_I(__VA_ARGS__)
#define MPCE__END_I(...) __VA_ARGS__##_END
#define MPCE_PARAMS(seq) MPCE__END(MPCE__PA seq)
#define MPCE__PA(t, n) , t n MPCE__PB
#define MPCE__PB(t, n) , t n MPCE__PA
#define MPCE__PA_END
#define MPCE__PB_END
#define MPCE_ARG_NAMES(seq) MPCE__END(MPCE__NA seq)
#define MPCE__NA(t, n) , n MPCE__NB
#define MPCE__NB(t, n) , n MPCE__NA
#define MPCE__NA_END
#define MPCE__NB_END

/* A parsed, validated DPF key (format v1 fields, fixed size). */
struct mpce_dpf_key_v1 {
    uint8_t bits;          /* 1..64 */
    uint8_t group;         /* 0 bytes, 1 u64 */
    uint8_t party;         /* 0 or 1 */
    uint8_t reserved;      /* 0 */
    uint8_t kl[16];
    uint8_t kr[16];
    uint8_t seed[16];      /* t-bit clear */
    uint8_t cw_s[64][16];  /* cw_s[i]: seed correction, tLCW in its t-bit */
    uint8_t cw_tr[8];      /* tRCW bit i: bit i%8 of byte i/8 */
    uint8_t cw_out[16];    /* u64: 8-byte LE value then 8 zero bytes */
};

/*
 * Keys of one context (domain bits, group, PRG keys), parsed and checked
 * once, laid out level-major (since 2.3): cw_s holds `bits` rows of nkeys
 * blocks, row i being every key's level-i correction word, so that a walk
 * of keys j .. j + 31 reads 512 consecutive bytes per level instead of one
 * line from each of 32 keys 1 KiB apart. Every array starts on a 64-byte
 * boundary. Key j's fields are those of struct mpce_dpf_key_v1: seed[j],
 * party[j], cw_s row i [j], cw_tr[j] (its 8 cw_tr bytes read little-endian:
 * bit i is level i's tRCW) and cw_out[j]. (Rows start on 64 bytes only when
 * nkeys is a multiple of 4.) The struct has no struct_size: a layout that
 * needs more fields comes as a _v2 with an op of its own.
 */
struct mpce_dpf_batch_v1 {
    size_t nkeys;
    const uint8_t (*seed)[16];
    const uint8_t *party;
    const uint64_t *cw_tr;
    const uint8_t (*cw_out)[16];
    const uint8_t (*cw_s)[16];   /* row i at cw_s + i * nkeys */
};

/* The op tables: struct mpce_prg_ops, mpce_ntt_ops, mpce_lpn_ops, mpce_dpf_ops. */
#define MPCE__OP_MEMBER(prim, name, since, required, ret, args) ret (*name)(void *self MPCE_PARAMS(args));
struct mpce_prg_ops {
    size_t struct_size;
    MPCE_PRG_OPS(MPCE__OP_MEMBER)
};
struct mpce_ntt_ops {
    size_t struct_size;
    MPCE_NTT_OPS(MPCE__OP_MEMBER)
};
struct mpce_lpn_ops {
    size_t struct_size;
    MPCE_LPN_OPS(MPCE__OP_MEMBER)
};
struct mpce_dpf_ops {
    size_t struct_size;
    MPCE_DPF_OPS(MPCE__OP_MEMBER)
};
#undef MPCE__OP_MEMBER

/* ---- devices ------------------------------------------------------------- */

/*
 * A device whose memory a module's implementations can work in. Its name is
 * the memory kind applications ask for (mpce_buffer_new(e, "NAME", ...)).
 * Work on a device goes on queues: in-order streams of copies and ops, each
 * finished through host->complete when it returned MPCE_OP_PENDING. Device
 * addresses are opaque to the engine, which only adds offsets to them.
 */
struct mpce_device {
    size_t struct_size;
    const char *name;      /* unique in the engine, e.g. "cuda0" */
    int (*alloc)(void *module_state, size_t bytes, void **addr);
    /* addr exactly as alloc returned it, only after every queued use of it
     * has completed. */
    void (*free)(void *module_state, void *addr);
    int (*queue_new)(void *module_state, void **queue);
    /* Only after every op and copy queued on it has completed. */
    void (*queue_free)(void *module_state, void *queue);
    /* len bytes from host src to device dst, device src to host dst, and
     * device to device; the host memory stays valid until completion. The
     * ranges of a device-to-device copy may overlap (one buffer's bytes
     * moved within it): the result must be memmove's. */
    int (*upload)(void *module_state, const struct mpce_call *call, void *dst, const void *src,
                  size_t len);
    int (*download)(void *module_state, const struct mpce_call *call, void *dst,
                    const void *src, size_t len);
    int (*copy)(void *module_state, const struct mpce_call *call, void *dst, const void *src,
                size_t len);
};

/* ---- implementations ----------------------------------------------------- */

/* Classes and their priority ranges: a priority outside its class's range is
 * clamped into it, so a module cannot outrank a whole class by number. */
#define MPCE_CLASS_PORTABLE 0u /* plain C: priorities 1..199 */
#define MPCE_CLASS_SIMD 1u     /* CPU vector/crypto instructions: 200..399 */
#define MPCE_CLASS_ACCEL 2u    /* GPUs and other devices: 400..599 */

/* The parameters a context was made with, for serves(). */
struct mpce_params {
    size_t struct_size;
    uint32_t primitive;    /* mpce_primitive */
    size_t prg_keys;       /* prg: m */
    size_t ntt_n;          /* ntt: degree */
    size_t ntt_l;          /* ntt: moduli */
    const uint64_t *ntt_q; /* ntt: the l moduli */
    unsigned lpn_logk;     /* lpn */
    unsigned dpf_bits;     /* dpf */
    unsigned dpf_group;    /* dpf: 0 bytes, 1 u64 */
};

/* The shape of a call, for serves(). */
struct mpce_shape {
    size_t struct_size;
    const char *op;        /* "prg.ecb", "ntt.forward", "dpf.evalall", ... */
    uint32_t memory;       /* MPCE_MEM_HOST or MPCE_MEM_DEVICE */
    uint64_t units;        /* blocks, polynomials, outputs, points, keys or leaves */
};

/*
 * A knob (since 2.2): a batch or tile size of an implementation that changes
 * only its speed. Every value gives byte-identical outputs (the tests check
 * each knob's extreme values on every op it names), so the selector may tune
 * it: it measures the values on the production shape of each row the
 * implementation wins, jointly with the implementation's other knobs of that
 * op (knobs that share a cache are only meaningful together), and pins the
 * best. Only LOCAL parameters may be knobs: nothing that changes an output,
 * a key format or what is computed on secrets.
 *
 * Validated at load (the implementation is refused, with the reason, if
 * not): name a plain lower-case word [a-z0-9_] of at most 15 characters,
 * unique in the implementation; ops one or more of the primitive's data ops,
 * space-separated; 1..MPCE_KNOB_MAX_VALUES values in strictly ascending
 * order, the default among them; at most MPCE_KNOB_MAX knobs.
 */
#define MPCE_KNOB_MAX 4u
#define MPCE_KNOB_MAX_VALUES 8u
/* Swept and reported by a tune, never pinned: the knob's best value depends
 * on something one process cannot see (what shares the cache, where the
 * application's data lives), so the default stays and a person decides. */
#define MPCE_KNOB_INFORMATIONAL 0x1u

struct mpce_knob {
    size_t struct_size;
    const char *name;         /* "chunk" */
    const char *ops;          /* the ops it changes: "lpn.fold", "dpf.eval dpf.eval_keys" */
    const char *about;        /* one line for listings: what it sizes */
    uint32_t flags;           /* MPCE_KNOB_INFORMATIONAL */
    uint32_t default_value;
    size_t n_values;
    const uint32_t *values;   /* ascending */
};

/* One implementation of one primitive. */
struct mpce_impl {
    size_t struct_size;
    uint32_t primitive;      /* mpce_primitive */
    const char *name;        /* unique, e.g. "prg-aesni-vaes512" */
    uint32_t impl_class;     /* MPCE_CLASS_* */
    int priority;            /* within the class's range; higher wins */
    uint32_t flags;          /* one of MPCE_IMPL_CONSTANT_TIME/VARIABLE_TIME, [ASYNC],
                              * [CHECKS_NTT_INPUT [| CHECKS_NTT_IN_PLACE]] */
    uint32_t memory;         /* MPCE_MEM_HOST [| MPCE_MEM_DEVICE] */
    const struct mpce_device *device; /* MPCE_MEM_DEVICE: one of the module's devices */
    const void *ops;         /* struct mpce_<primitive>_ops */
    /* Optional. 0 if this CPU/device can run it, else non-zero with the
     * reason in why (e.g. "no AVX-512F"). */
    int (*probe)(void *module_state, char *why, size_t why_len);
    /* Optional. 0 if it serves calls of this shape on a context of these
     * parameters (shape NULL: any call on it), else non-zero with the reason.
     * Asked before any state is built; answer alike for shapes of one size
     * class. Refusing a context is also possible from ctx_new with
     * MPCE_ERR_NOIMPL. The self-test skips the known-answer records an
     * implementation refuses, but passes it only if every op it offers ran
     * at least one record, so refuse no more than you must. The contexts
     * the self-test makes (q61 = 2^61 - 2^21 + 1, q50 = 1125899903827969):
     *   PRG  ecb and ctr with 2 keys; mmo with 1, 2 and 4 keys
     *   NTT  forward and inverse: N = 8, 16, 32 with q61 and with q50,
     *        N = 1024, 2048, 4096 with q61; L = 2 at N = 8 and 16;
     *        mul: N = 16 with q61 and with q50
     *   LPN  fold: logk 3, 4, 5, 6, 8, 10 and 19
     *   DPF  gen, eval and eval_keys: bits 8, 12, 16, 20, both groups;
     *        evalall and evalall_range: bits 8, 12, 16
     * (tests/vectors/ in the source tree holds the records.) */
    int (*serves)(void *module_state, const struct mpce_params *params,
                  const struct mpce_shape *shape, char *why, size_t why_len);
    /* Since 2.2: the implementation's knobs, in the order of mpce_call.knobs
     * (0 and NULL: none). A module built for 2.0 or 2.1 sets struct_size to
     * offsetof(struct mpce_impl, n_knobs). */
    size_t n_knobs;
    const struct mpce_knob *const *knobs;
};

/* What the entry symbol returns; storage owned by the module. */
struct mpce_plugin {
    size_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;
    const char *name;        /* unique plugin name, e.g. "aesni" */
    const char *version;
    /* Optional: 0 if the module can run here, else non-zero with why. */
    int (*probe)(const struct mpce_host *host, char *why, size_t why_len);
    /* Optional: build the module's state for one engine (0, or non-zero with
     * why: the module is skipped); fini tears it down. */
    int (*init)(const struct mpce_host *host, void **module_state, char *why, size_t why_len);
    void (*fini)(void *module_state);
    /* Optional: one line on what the module found here ("CPU: AES-NI VAES",
     * a device and driver), shown after the version in listings. */
    void (*describe)(void *module_state, char *buf, size_t len);
    size_t n_devices;
    const struct mpce_device *const *devices;
    size_t n_impls;
    const struct mpce_impl *const *impls;
};

typedef const struct mpce_plugin *(*mpce_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
