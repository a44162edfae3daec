/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libffi call descriptors of every op, generated from plugin.h's op lists
 * with argument types the compiler derives from the declared C types: the
 * self-test (and the probe helper) call any op of any implementation from its
 * descriptor, so a new op needs a list entry, not glue. Never in a timed
 * loop.
 */
#ifndef MPCE_VERIFY_OPDESC_H
#define MPCE_VERIFY_OPDESC_H

#include "engine/internal.h"

/*
 * Call op `id` of a normalized op table with argv[i] pointing at argument i,
 * self (argv[0]) included. MPCE_OK with the op's return value in *ret (0 for
 * ctx_free); MPCE_ERR_ARG when argc is not the op's argument count,
 * MPCE_ERR_NOIMPL when the table lacks the op (an optional op of a later
 * minor), MPCE_ERR_BACKEND when libffi cannot prepare the call.
 */
mpce_status mpce_op_call(enum mpce_op_id id, const union mpce_ops *ops, void **argv,
                         unsigned argc, int *ret);

/* The byte size of argument i (self is 0) of op id as its libffi descriptor
 * passes it, 0 past the last: test_abi checks it against the C types. */
size_t mpce_op_arg_size(enum mpce_op_id id, unsigned i);

#endif
