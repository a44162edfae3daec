/* SPDX-License-Identifier: Apache-2.0 */
/* The library's version string. */
#include "config.h"

#include "mpcengine/common.h"

MPCE_API const char *mpce_version(void);

const char *mpce_version(void)
{
    return PACKAGE_VERSION;
}
