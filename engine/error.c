/* Thread-local error detail, status and primitive names. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/internal.h"

static _Thread_local char last_error[1024];

mpce_status mpce_error(mpce_status status, const char *fmt, ...)
{
    /* Format into a scratch buffer first: callers may pass the current
     * detail as an argument to wrap it. */
    char tmp[sizeof(last_error)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    memcpy(last_error, tmp, sizeof(tmp));
    return status;
}

void mpce_error_clear(void)
{
    last_error[0] = '\0';
}

const char *mpce_last_error(void)
{
    return last_error;
}

const char *mpce_status_name(mpce_status status)
{
    static const char *const names[] = {
        "MPCE_OK",          "MPCE_ERR_ARG",      "MPCE_ERR_NOMEM",   "MPCE_ERR_NOIMPL",
        "MPCE_ERR_CONFIG",  "MPCE_ERR_PLUGIN",   "MPCE_ERR_SELFTEST", "MPCE_ERR_FORMAT",
        "MPCE_ERR_RANDOM",  "MPCE_ERR_IO",       "MPCE_ERR_BACKEND", "MPCE_ERR_STATE",
    };
    if ((unsigned)status < sizeof(names) / sizeof(names[0]))
        return names[status];
    return "MPCE_ERR_UNKNOWN";
}

const char *mpce_primitive_name(mpce_primitive prim)
{
    static const char *const names[MPCE_PRIM_COUNT] = {"prg", "ntt", "lpn", "dpf"};
    if ((unsigned)prim < MPCE_PRIM_COUNT)
        return names[prim];
    return NULL;
}
