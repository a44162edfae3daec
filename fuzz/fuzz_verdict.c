/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vet verdict file's body (engine/selector/verdicts.c), which a cache
 * directory holds and any user who can write there may have edited: parsed
 * as the reader does, then, where it reads, written and read back. The
 * first text a verdict is written as must be a fixed point: written again
 * from what was read, it is the same bytes (what one writes the other
 * reads, nothing gained or lost on the way).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/runtime/vet.h"
#include "fuzz/fuzz.h"

/* A verdict file begins with its fingerprint; the body follows it. */
static const char want[] = "fingerprint 2 fuzz\n";

static void check_fields(const struct mpce_verdict *v)
{
    FUZZ_CHECK(memchr(v->reason, '\0', sizeof(v->reason)) != NULL, "reason unterminated");
    FUZZ_CHECK(memchr(v->warning, '\0', sizeof(v->warning)) != NULL, "warning unterminated");
    FUZZ_CHECK(memchr(v->plugin, '\0', sizeof(v->plugin)) != NULL, "plugin unterminated");
    FUZZ_CHECK(v->n_impls == 0 || v->impls != NULL, "impls counted but not kept");
    for (size_t i = 0; i < v->n_impls; i++) {
        FUZZ_CHECK(v->impls[i].name[0] != '\0', "impl %zu has no name", i);
        FUZZ_CHECK(strchr(v->impls[i].name, ' ') == NULL, "impl %zu name has a space", i);
    }
}

/* Parse text + strlen(want) into a fresh verdict: 0 when it reads. */
static int parse_text(const char *text, struct mpce_verdict *v)
{
    char *body = strdup(text + strlen(want));
    FUZZ_CHECK(body != NULL, "out of memory");
    memset(v, 0, sizeof(*v));
    int rc = mpce_verdict_parse(body, v);
    free(body);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = fuzz_strndup(data, size);
    struct mpce_verdict v;
    memset(&v, 0, sizeof(v));
    int rc = mpce_verdict_parse(body, &v);
    free(body);
    if (rc != 0) {
        mpce_verdict_free(&v); /* whatever it kept before it refused */
        return 0;
    }
    check_fields(&v);
    size_t len1, len2;
    char *first = mpce_verdict_text(want, &v, &len1);
    FUZZ_CHECK(first != NULL && len1 == strlen(first), "a verdict that read is not written");
    struct mpce_verdict w;
    FUZZ_CHECK(parse_text(first, &w) == 0, "the writer's text does not read back:\n%s", first);
    check_fields(&w);
    FUZZ_CHECK(w.pass == v.pass && w.n_impls == v.n_impls, "pass or impls changed");
    char *second = mpce_verdict_text(want, &w, &len2);
    FUZZ_CHECK(second != NULL && len1 == len2 && memcmp(first, second, len1) == 0,
               "a written verdict changes when read and written again");
    free(first);
    free(second);
    mpce_verdict_free(&w);
    mpce_verdict_free(&v);
    return 0;
}
