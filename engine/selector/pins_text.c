/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pins file's shared rules (pins_text.h): the seal's digest, the value
 * checks the writer and the reader both apply, and the message and
 * directory helpers they and the lock use.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "engine/internal.h"
#include "engine/selector/pins_text.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* The rule of mpce_registry_valid_name, for people. */
#define NAME_WORDS "a name (1 to " STRINGIFY(MPCE_NAME_MAX) " of A-Z a-z 0-9 - _ . +)"

static const char *const k_statuses[] = {"ok", "wrong", "crashed", "hung", "failed", "declined"};
static const char *const k_efforts[] = {"quick", "measure", "patient", "imported"};

int mpce_pins_seal_hex(const void *data, size_t len, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
        return -1;
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
    return 0;
}

int mpce_pins_is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int mpce_pins_index_of(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return (int)i;
    return -1;
}

/* "YYYY-MM-DDTHH:MM:SSZ" in shape (digits where digits go). */
static int is_iso_date(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    for (size_t i = 0; i < sizeof(shape) - 1; i++) {
        if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
            return 0;
    }
    return s[sizeof(shape) - 1] == '\0';
}

const char *mpce_pins_check_date(const char *s)
{
    return is_iso_date(s) ? NULL : "a UTC time as YYYY-MM-DDTHH:MM:SSZ";
}

const char *mpce_pins_check_effort(const char *s)
{
    return mpce_pins_index_of(s, k_efforts, PINS_COUNT(k_efforts)) >= 0
               ? NULL
               : "quick, measure, patient or imported";
}

/* "" stands for the built-in module, which has no file to hash. */
const char *mpce_pins_check_sha256(const char *s)
{
    size_t len = strlen(s);
    return len == 0 || (len == 64 && mpce_pins_is_hex(s, len))
               ? NULL
               : "64 lowercase hex digits (or \"\")";
}

const char *mpce_pins_check_name(const char *s)
{
    return mpce_registry_valid_name(s) ? NULL : NAME_WORDS;
}

/* "" where a row had no winner or no runner-up. */
const char *mpce_pins_check_optional_name(const char *s)
{
    return !*s || mpce_registry_valid_name(s) ? NULL : NAME_WORDS " or \"\"";
}

const char *mpce_pins_check_status(const char *s)
{
    return mpce_pins_index_of(s, k_statuses, PINS_COUNT(k_statuses)) >= 0
               ? NULL
               : "a status (" PINS_STATUS_WORDS ")";
}

int mpce_pins_valid_time(double v)
{
    return isfinite(v) && v >= 0.0 && !signbit(v); /* -0.0 would be written with a sign */
}

locale_t mpce_pins_c_locale(void)
{
    return newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

void mpce_pins_why(char *why, size_t why_len, const char *fmt, ...)
{
    if (!why || why_len == 0)
        return;
    int err = errno;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
    errno = err;
}

int mpce_pins_make_dir(const char *dir, const char *path, char *why, size_t why_len)
{
    if (mkdir(dir, 0755) == 0 || errno == EEXIST)
        return 0;
    mpce_pins_why(why, why_len, "%s: cannot create directory %s: %s", path, dir,
                  strerror(errno));
    return -1;
}
