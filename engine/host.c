/* The services the engine offers plugins (struct mpce_host). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

/*
 * Hosts live for the whole process: a module keeps the pointer in static
 * storage and dlopen shares one copy of the module between engines, so no
 * engine may free the host it handed out. One host per label, never freed
 * (reachable from `hosts`, so leak checkers stay quiet).
 */
struct host_entry {
    struct mpce_host host;
    struct host_entry *next;
    char label[];
};

static pthread_mutex_t hosts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct host_entry *hosts;

static const char *host_label(const struct mpce_host *host)
{
    const char *label = host ? (const char *)host->host_data : NULL;
    return label ? label : "?";
}

static void host_log(const struct mpce_host *host, int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "mpcengine: plugin %s: %s%s\n", host_label(host),
            level > 0 ? "warning: " : "", msg);
}

static void host_set_error(const struct mpce_host *host, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    mpce_error(MPCE_ERR_BACKEND, "plugin %s: %s", host_label(host), msg);
}

const struct mpce_host *mpce_host_get(const char *label)
{
    pthread_mutex_lock(&hosts_lock);
    struct host_entry *h;
    for (h = hosts; h; h = h->next)
        if (strcmp(h->label, label) == 0)
            break;
    if (!h) {
        size_t len = strlen(label);
        h = calloc(1, sizeof(*h) + len + 1);
        if (h) {
            memcpy(h->label, label, len + 1);
            h->host.struct_size = sizeof(struct mpce_host);
            h->host.abi_major = MPCE_PLUGIN_ABI_MAJOR;
            h->host.abi_minor = MPCE_PLUGIN_ABI_MINOR;
            h->host.log = host_log;
            h->host.set_error = host_set_error;
            h->host.host_data = h->label;
            h->next = hosts;
            hosts = h;
        }
    }
    pthread_mutex_unlock(&hosts_lock);
    return h ? &h->host : NULL;
}
