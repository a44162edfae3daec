/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The probe helper's report on a vet (tools/probe/vet.c writes it, one line
 * per event: "engine V abi M.N" first, then "step S", "plugin NAME", "kat IMPL pass|fail REASON",
 * "skipped REASON", "fail REASON", "warn REASON", "error MESSAGE", "done")
 * and how its lines and the way the helper ended become a verdict. Apart
 * from the spawning (vet.c) so that the fuzz target (fuzz/fuzz_vet_report.c)
 * runs the same code over any bytes a module could make the helper write.
 */
#ifndef MPCE_RUNTIME_VET_REPORT_H
#define MPCE_RUNTIME_VET_REPORT_H

#include <stddef.h>

#include "engine/runtime/vet.h"

/* What the helper said so far. */
struct mpce_vet_report {
    char step[200];          /* the step under way, as words for a reason */
    char fail[400];          /* the helper's own finding (a leak), first one */
    char error[400];         /* the helper could not vet at all */
    char skipped[300];
    int done;
    int oom;
    int late;                /* a step after the entry point began */
    int entered;             /* the entry point's step began: it was loaded */
    int fail_late;           /* ... when the first `fail` was said */
    struct mpce_verdict *v;
    int probed;              /* a step from the probe on began at all */
    char engine[96];         /* the helper's "engine V abi M.N", "" if unsaid */
};

/* This library's "engine V abi M.N" line: a helper of another version
 * loads modules by other rules (a newer ABI minor it refuses, say), so its
 * verdict says nothing of what this engine would run. */
void mpce_vet_engine_line(char *buf, size_t len);

/* One line of the report (an mpce_line_fn): arg is the report. Lines it
 * does not know are ignored; the helper may be newer. */
void mpce_vet_report_line(void *arg, char *line);

/*
 * The verdict, once the helper has ended: status is its wait status (-1
 * when the application reaped it first), timed_out whether it ran past
 * limit_ms. 0 with *r->v filled (pass or fail, cacheable or not), or -1
 * with why when it could not vet at all (*no_memory set when that was for
 * want of memory in this process).
 */
int mpce_vet_report_judge(struct mpce_vet_report *r, int status, int timed_out,
                          unsigned limit_ms, int *no_memory, char *why, size_t len);

#endif
