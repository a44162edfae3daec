/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The module loader: finds *.so files in the plugin directories, loads each
 * one from the descriptor it checked and hashed (module_file.h), validates
 * the descriptor field by field against the ABI minor it was built for, and
 * registers each implementation and device. A module or implementation that
 * fails a check is skipped with a one-line reason (logged, and in
 * mpce_list); the engine keeps working.
 */
#ifndef MPCE_RUNTIME_LOADER_H
#define MPCE_RUNTIME_LOADER_H

#include "engine/internal.h"

/* Register a plugin from an entry point linked into the library (soft),
 * through the same checks as a loaded module. */
mpce_status mpce_loader_add_builtin(mpce_engine *e, const char *label,
                                    mpce_plugin_entry_fn entry);

/* Load every module of the configured plugin directories. Fails only on
 * allocation failure; skipped modules are recorded, not returned. */
mpce_status mpce_loader_load_dirs(mpce_engine *e);

/* Load the one module open on fd (already checked; path names it in
 * messages), in process: the vetting helper's way in. fd passes to the
 * module record. */
mpce_status mpce_loader_load_fd(mpce_engine *e, int fd, const char *path);

/* fini (if init ran), dlclose and free a module record. */
void mpce_loader_free_module(struct mpce_module *m);

#endif
