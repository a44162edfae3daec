/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libmpcengine: the umbrella header. Include this and link with
 * `pkg-config --cflags --libs mpcengine`.
 *
 *   mpce_init();                         // or pass NULL engines: on demand
 *   mpce_prg *prg; mpce_prg_new(NULL, key, 1, &prg);
 *   mpce_prg_ctr(prg, "auto", 0, 0, out, n);
 *   mpce_prg_free(prg);
 *
 * Which objects threads may share is said above each type's declaration:
 * the engine in common.h, contexts in prg.h, ntt.h, lpn.h and dpf.h (with
 * DPF keys and key batches), buffers and queues in buffer.h.
 */
#ifndef MPCENGINE_H
#define MPCENGINE_H

#include "mpcengine/common.h"
#include "mpcengine/buffer.h"
#include "mpcengine/prg.h"
#include "mpcengine/ntt.h"
#include "mpcengine/lpn.h"
#include "mpcengine/dpf.h"

#endif
