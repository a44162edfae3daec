/*
 * The module loader: finds *.so files in the plugin directories, refuses
 * unsafe files, checks the descriptor field by field and registers each
 * implementation. A module that fails a check is skipped with a one-line
 * reason (on stderr and in mpce_list); the engine keeps working.
 */
#ifndef MPCE_ENGINE_LOADER_H
#define MPCE_ENGINE_LOADER_H

#include "engine/engine.h"

/* Register a plugin from an entry point linked into the library (soft),
 * through the same checks as a loaded module. */
mpce_status mpce_loader_add_builtin(mpce_engine *e, const char *label,
                                    mpce_plugin_entry_fn entry);

/* Load every module of the configured plugin directories. Fails only on
 * allocation failure; skipped modules are recorded, not returned. */
mpce_status mpce_loader_load_dirs(mpce_engine *e);

/* Lowercase hex SHA-256 of a file; 0, or -1 with the reason in why. */
int mpce_file_sha256(const char *path, char hex[65], char *why, size_t why_len);

/* dlclose a module record's handle and free it. */
void mpce_loader_free_module(struct mpce_module *m);

#endif
