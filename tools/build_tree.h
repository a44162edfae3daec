/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The command and the probe helper run from the build tree that made them.
 * There, the selector's state (pins, vet verdicts, census) is kept in that
 * tree, in TOOLS/state, not at the configured prefix: that state is the
 * installed engine's, and a build tree's pins would name its modules by
 * their build paths (and `make check` or `make distcheck` as root would
 * leave files there). Each program decides from where it runs, so the
 * command and the helpers it spawns agree without being told.
 */
#ifndef MPCE_TOOLS_BUILD_TREE_H
#define MPCE_TOOLS_BUILD_TREE_H

/* If this process's executable lies in built_dir (the directory the build
 * put it in; compared after resolving links) and it is not setuid or
 * setgid: the state directory becomes tools_dir/state and 1 is returned.
 * Otherwise nothing changes and 0 is returned. Call before any engine. */
int mpce_tools_build_tree(const char *built_dir, const char *tools_dir);

#endif
