/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The probe helper's report on a vet (engine/runtime/vet_report.c): the
 * lines come from a process running a module's code, which may write
 * anything to the pipe it inherits. The input's first byte says how the
 * helper ended (exit status or signal, a timeout); the rest is what it
 * wrote, cut into lines by the engine's own line reader (through a pipe,
 * so that long lines arrive in pieces as they would); a first line that is
 * just "engine" stands for this library's own "engine V abi M.N" line, so
 * that seeds stay valid across versions. Whatever the bytes,
 * the judgement is either "no verdict" with a reason, or a verdict whose
 * fields are terminated, a fail with a reason, a pass without one.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/runtime/vet_report.h"
#include "engine/selector/selector.h"
#include "fuzz/fuzz.h"

/* Wait statuses as waitpid reports them (glibc's encoding). */
static int ended(uint8_t how)
{
    static const int sigs[] = {SIGSEGV, SIGABRT, SIGKILL, SIGBUS, SIGTERM, 64};
    switch (how & 3) {
    case 0: return (how >> 2 & 0x3f) << 8;        /* exited with status */
    case 1: return sigs[(how >> 2) % 6];          /* killed by a signal */
    case 2: return -1;                            /* reaped by the application */
    default: return 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 1 << 15) /* the pipe must take it all at once */
        return 0;
    const uint8_t how = data[0];
    data++, size--;
    char *text = NULL;
    if (size >= 7 && memcmp(data, "engine\n", 7) == 0) {
        char line[96];
        mpce_vet_engine_line(line, sizeof(line));
        const size_t ll = strlen(line);
        text = malloc(ll + size);
        FUZZ_CHECK(text != NULL, "out of memory");
        memcpy(text, line, ll);
        memcpy(text + ll, data + 6, size - 6);
        data = (const uint8_t *)text;
        size = ll + size - 6;
    }
    struct mpce_verdict v;
    memset(&v, 0, sizeof(v));
    struct mpce_vet_report r = {.v = &v};
    int fds[2];
    FUZZ_CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
    for (size_t done = 0; done < size;) {
        ssize_t w = write(fds[1], data + done, size - done);
        FUZZ_CHECK(w > 0, "write: %s", strerror(errno));
        done += (size_t)w;
    }
    close(fds[1]);
    free(text);
    struct mpce_lines lines = {.have = 0};
    ssize_t got;
    while ((got = mpce_lines_read(&lines, fds[0], mpce_vet_report_line, &r)) > 0 ||
           (got < 0 && errno == EINTR))
        ;
    close(fds[0]);
    char why[400] = "";
    int no_memory = 0;
    const int timed_out = (how & 3) == 3 && (how & 4);
    int rc = mpce_vet_report_judge(&r, ended(how), timed_out, 500, &no_memory, why,
                                   sizeof(why));
    FUZZ_CHECK(!no_memory, "out of memory without a fault");
    if (rc != 0) {
        FUZZ_CHECK(rc == -1 && why[0] != '\0', "no verdict and no reason (rc %d)", rc);
    } else {
        FUZZ_CHECK(memchr(v.reason, '\0', sizeof(v.reason)) != NULL, "reason unterminated");
        FUZZ_CHECK(memchr(v.warning, '\0', sizeof(v.warning)) != NULL, "warning unterminated");
        FUZZ_CHECK(v.pass ? v.reason[0] == '\0' : v.reason[0] != '\0',
                   "pass %d with reason '%s'", v.pass, v.reason);
        /* A timeout or a kill is no property of the file: never cached. */
        if (timed_out || ended(how) == SIGKILL)
            FUZZ_CHECK(!v.cache, "a timeout or SIGKILL verdict would be cached");
        for (size_t i = 0; i < v.n_impls; i++)
            FUZZ_CHECK(v.impls[i].name[0] != '\0', "impl %zu without a name", i);
    }
    mpce_verdict_free(&v);
    return 0;
}
