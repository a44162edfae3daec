/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/selector/selector.h"
#include "tools/build_tree.h"

int mpce_tools_build_tree(const char *built_dir, const char *tools_dir)
{
#if defined(__linux__)
    static char state[PATH_MAX + 16];
    char self[PATH_MAX];
    if (mpce_selector_secure())
        return 0;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return 0;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL)
        return 0;
    *slash = '\0';
    char *tree = realpath(built_dir, NULL);
    const int here = tree != NULL && strcmp(tree, self) == 0;
    free(tree);
    if (!here || (size_t)snprintf(state, sizeof(state), "%s/state", tools_dir) >= sizeof(state))
        return 0;
    mpce_selector_system_dir_override = state;
    return 1;
#else
    (void)built_dir;
    (void)tools_dir;
    return 0;
#endif
}
