/* SPDX-License-Identifier: Apache-2.0 */
/* Thread-local error detail, and the names of statuses, primitives, log
 * levels and size classes. */
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

const char *mpce_last_error(void)
{
    return last_error;
}

/* What a plugin said with host->set_error, and whose host said it. */
static _Thread_local char plugin_detail[900];
static _Thread_local const struct mpce_host *plugin_detail_host;

void mpce_plugin_detail_set(const struct mpce_host *host, const char *msg)
{
    snprintf(plugin_detail, sizeof(plugin_detail), "%s", msg);
    plugin_detail_host = host;
}

const char *mpce_plugin_detail_take(const struct mpce_host *host, char *buf, size_t len)
{
    /* Another module's leftover explains nothing about this failure. */
    if (plugin_detail_host != NULL && plugin_detail_host == host)
        snprintf(buf, len, "%s", plugin_detail);
    else if (len)
        buf[0] = '\0';
    plugin_detail_host = NULL;
    plugin_detail[0] = '\0';
    return buf;
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

const char *mpce_log_level_name(mpce_log_level level)
{
    static const char *const names[] = {"debug", "info", "warning", "error"};
    if ((unsigned)level < sizeof(names) / sizeof(names[0]))
        return names[level];
    return "unknown";
}

const char *mpce_impl_class_name(unsigned impl_class)
{
    static const char *const names[] = {"portable", "simd", "accel"};
    return impl_class < sizeof(names) / sizeof(names[0]) ? names[impl_class] : "";
}

const char *mpce_size_class_name(unsigned size_class)
{
    static const char *const names[MPCE_SIZE_CLASSES] = {"tiny", "small", "medium", "large"};
    return size_class < MPCE_SIZE_CLASSES ? names[size_class] : NULL;
}
