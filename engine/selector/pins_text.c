/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pins file's shared rules (pins_text.h): the seal's digest, the value
 * checks the writer and the reader both apply, and the message and
 * directory helpers they and the lock use.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "engine/internal.h"
#include "engine/runtime/knobs.h"
#include "engine/selector/pins_text.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* The rule of mpce_registry_valid_name, for people. */
#define NAME_WORDS "a name (1 to " STRINGIFY(MPCE_NAME_MAX) " of A-Z a-z 0-9 - _ . +)"

static const char *const k_statuses[] = {"ok",   "screened", "wrong",   "crashed",
                                         "hung", "failed",   "declined"};
static const char *const k_efforts[] = {"quick", "measure", "patient", "imported"};
static const char *const k_policies[] = {"constant-time", "variable-time"};
/* The size classes of internal.h, spelled here so that the file's form does
 * not hang on the engine's tables; the assertion catches a new class. */
static const char *const k_size_classes[] = {"tiny", "small", "medium", "large"};
_Static_assert(PINS_COUNT(k_size_classes) == MPCE_SIZE_CLASSES,
               "a row key's last part is a size class: update k_size_classes");

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

const char *mpce_pins_check_policy(const char *s)
{
    return mpce_pins_index_of(s, k_policies, PINS_COUNT(k_policies)) >= 0
               ? NULL
               : "constant-time or variable-time";
}

/* Letters, digits and '_' only: what op, variant and class names are made of. */
static int is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

const char *mpce_pins_check_row_key(const char *s)
{
    static const char wanted[] = "a row key (3 or 4 dot-separated names of A-Z a-z 0-9 _, the "
                                 "last tiny, small, medium or large)";
    size_t parts = 0;
    const char *part = s;
    for (;;) {
        size_t len = 0;
        while (is_key_char(part[len]))
            len++;
        if (len == 0 || (part[len] != '.' && part[len] != '\0'))
            return wanted;
        parts++;
        if (part[len] == '\0')
            break;
        part += len + 1;
    }
    return (parts == 3 || parts == 4) &&
                   mpce_pins_index_of(part, k_size_classes, PINS_COUNT(k_size_classes)) >= 0
               ? NULL
               : wanted;
}

int mpce_pins_valid_time(double v)
{
    return isfinite(v) && v >= 0.0 && !signbit(v); /* -0.0 would be written with a sign */
}

int mpce_pins_valid_slice_min(uint64_t v)
{
    return v == MPCE_PINS_NEVER || (v >= 1 && v <= PINS_SLICE_MAX);
}

struct named {
    const char *name;
    size_t index;
};

/* By name, then by position: equal names sit together, earliest first. */
static int cmp_named(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

int mpce_pins_find_dup(const void *items, size_t n, size_t size, size_t offset, size_t *first,
                       size_t *again)
{
    if (n < 2)
        return 0;
    struct named *v = malloc(n * sizeof(*v));
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *name;
        memcpy(&name, (const char *)items + i * size + offset, sizeof(name));
        v[i] = (struct named){name ? name : "", i};
    }
    qsort(v, n, sizeof(*v), cmp_named);
    /* Of the runs of one name, the one whose second item comes first. */
    int found = 0;
    for (size_t i = 1; i < n; i++) {
        if (strcmp(v[i - 1].name, v[i].name) != 0 ||
            (i >= 2 && strcmp(v[i - 2].name, v[i].name) == 0))
            continue;
        if (!found || v[i].index < *again) {
            *first = v[i - 1].index;
            *again = v[i].index;
            found = 1;
        }
    }
    free(v);
    return found;
}

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

/* The index of the candidate of impl, or r->n_cands. */
static size_t cand_of(const struct mpce_pins_row *r, const char *impl)
{
    for (size_t i = 0; i < r->n_cands; i++)
        if (strcmp(str_or_empty(r->cands[i].impl), impl) == 0)
            return i;
    return r->n_cands;
}

/* name, unless "", must be one of r's candidates whose status is ok, or
 * with screened_too also screened. 0, or 1 with key (what) and msg set. */
static int check_pick(const struct mpce_pins_row *r, const char *what, const char *name,
                      int screened_too, char *key, size_t key_len, char *msg, size_t msg_len)
{
    if (!*name)
        return 0;
    size_t c = cand_of(r, name);
    const char *status = c < r->n_cands ? str_or_empty(r->cands[c].status) : "";
    if (c < r->n_cands &&
        (strcmp(status, "ok") == 0 || (screened_too && strcmp(status, "screened") == 0)))
        return 0;
    mpce_pins_why(key, key_len, "%s", what);
    if (c == r->n_cands)
        mpce_pins_why(msg, msg_len, "'%.80s' is none of the row's candidates", name);
    else
        mpce_pins_why(msg, msg_len, "'%.80s' is cand.%zu, whose status is '%.40s': a %s must "
                      "be %s", name, c + 1, status,
                      strcmp(what, "winner") == 0 ? "winner"
                      : strcmp(what, "runner_up") == 0 ? "runner-up" : what,
                      screened_too ? "ok or screened" : "ok");
    return 1;
}

int mpce_pins_check_row(const struct mpce_pins_row *r, char *key, size_t key_len, char *msg,
                        size_t msg_len)
{
    size_t first = 0, again = 0;
    int dup = mpce_pins_find_dup(r->cands, r->n_cands, sizeof(*r->cands),
                                 offsetof(struct mpce_pins_cand, impl), &first, &again);
    if (dup < 0)
        return -1;
    if (dup) {
        mpce_pins_why(key, key_len, "cand.%zu", again + 1);
        mpce_pins_why(msg, msg_len, "'%.80s' is also cand.%zu: one result per implementation",
                      str_or_empty(r->cands[again].impl), first + 1);
        return 1;
    }
    /* The selector follows the winner: it must be one that passed and was
     * timed in full. The runner-up may be one screened out. */
    const char *winner = str_or_empty(r->winner), *runner = str_or_empty(r->runner_up);
    if (check_pick(r, "winner", winner, 0, key, key_len, msg, msg_len))
        return 1;
    if (*runner && strcmp(runner, winner) == 0) {
        mpce_pins_why(key, key_len, "runner_up");
        mpce_pins_why(msg, msg_len, "'%.80s' is the winner too", runner);
        return 1;
    }
    if (check_pick(r, "runner_up", runner, 1, key, key_len, msg, msg_len))
        return 1;
    if (r->slice_min && !mpce_pins_valid_slice_min(r->slice_min)) {
        mpce_pins_why(key, key_len, "slice_min");
        mpce_pins_why(msg, msg_len, "%" PRIu64 " is not " PINS_SLICE_WORDS, r->slice_min);
        return 1;
    }
    const char *knobs = str_or_empty(r->knobs);
    if (*knobs && (!mpce_knob_list_valid(knobs) || !*winner)) {
        mpce_pins_why(key, key_len, "knobs");
        mpce_pins_why(msg, msg_len, *winner ? "'%.80s' is not KNOB=VALUE[:KNOB=VALUE...]"
                                            : "'%.80s' without a winner to apply them to",
                      knobs);
        return 1;
    }
    if (*knobs && !*str_or_empty(r->knob_verdict)) {
        mpce_pins_why(key, key_len, "knob_verdict");
        mpce_pins_why(msg, msg_len, "missing: knobs need the knob_verdict that says how they "
                      "were found");
        return 1;
    }
    if (r->slice_min && !*str_or_empty(r->slice_verdict)) {
        mpce_pins_why(key, key_len, "slice_verdict");
        mpce_pins_why(msg, msg_len, "missing: a slice_min needs the slice_verdict that says "
                      "how it was found");
        return 1;
    }
    /* A crossover names the device implementation that wins from there: a
     * candidate of the row that ran correctly (ok, or screened at the row's
     * own shape, where the gate may have picked either side). */
    const char *ximpl = str_or_empty(r->crossover_impl);
    if (r->crossover && !mpce_pins_valid_slice_min(r->crossover)) {
        mpce_pins_why(key, key_len, "crossover");
        mpce_pins_why(msg, msg_len, "%" PRIu64 " is not " PINS_CROSSOVER_WORDS, r->crossover);
        return 1;
    }
    if (r->crossover == MPCE_PINS_NEVER) {
        mpce_pins_why(key, key_len, "crossover");
        mpce_pins_why(msg, msg_len, "never is not " PINS_CROSSOVER_WORDS);
        return 1;
    }
    if (r->crossover && !*ximpl) {
        mpce_pins_why(key, key_len, "crossover_impl");
        mpce_pins_why(msg, msg_len, "missing: a crossover needs the implementation that wins "
                      "from there");
        return 1;
    }
    if (!r->crossover && *ximpl) {
        mpce_pins_why(key, key_len, "crossover_impl");
        mpce_pins_why(msg, msg_len, "'%.80s' without a crossover", ximpl);
        return 1;
    }
    if (check_pick(r, "crossover_impl", ximpl, 1, key, key_len, msg, msg_len))
        return 1;
    if (r->crossover && !*str_or_empty(r->crossover_verdict)) {
        mpce_pins_why(key, key_len, "crossover_verdict");
        mpce_pins_why(msg, msg_len, "missing: a crossover needs the crossover_verdict that "
                      "says how it was found");
        return 1;
    }
    return 0;
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
    /* The state directory is nested (mpcengine/STATE): make the parents,
     * then the directory itself, once. */
    if (errno == ENOENT) {
        char parent[4096];
        snprintf(parent, sizeof(parent), "%s", dir);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = '\0';
            if (mpce_pins_make_dir(parent, path, why, why_len) != 0)
                return -1;
            if (mkdir(dir, 0755) == 0 || errno == EEXIST)
                return 0;
        }
    }
    mpce_pins_why(why, why_len, "%s: cannot create directory %s: %s", path, dir,
                  strerror(errno));
    return -1;
}

/* What to do about a failed write, for the message's end: the old file is
 * always kept. */
const char *mpce_pins_write_hint(int err)
{
    switch (err) {
    case ENOSPC:
    case EDQUOT:
        return ": free space there and tune again; the old pins file is kept";
    case EROFS:
    case EACCES:
    case EPERM:
        return ": make the directory writable or set [tune] dir to one that is; the old "
               "pins file is kept";
    default:
        return "; the old pins file is kept";
    }
}
