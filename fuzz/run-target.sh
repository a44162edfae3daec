#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One libFuzzer target for `make fuzz` (fuzz/local.am):
#   run-target.sh PROG TIME MIN_MUTATIONS LOG WORK SEEDS [FLAG...]
# runs PROG for TIME seconds over the corpus directories WORK (written) and
# SEEDS (read), with FLAGs, its output in LOG. The inputs it ran beyond the
# seeds (stat::number_of_executed_units less the count at INITED, which is
# the seed corpus) are its mutations: a run with none fails, as one whose
# time all went to startup and seeds did not fuzz. A target slow to start
# (the differential ones self-test every module first) gets further runs of
# -runs mutations until it has made MIN_MUTATIONS, three at most. Exit 0
# when every run passed and enough mutations ran; prints the totals as
# "N mutations (M executions, S seeds)" on success.
set -u
prog=$1 time=$2 min=$3 log=$4 work=$5 seeds=$6
shift 6

# The count before the first mutation, and the executions, of one log.
inited() { sed -n 's/^#\([0-9][0-9]*\)[[:space:]][[:space:]]*INITED.*/\1/p' "$1" | tail -n 1; }
units() { sed -n 's/^stat::number_of_executed_units: *\([0-9][0-9]*\).*/\1/p' "$1" | tail -n 1; }

: >"$log"
mutations=0 executed=0 seedrun=
pass=0
while :; do
    part="$log.$pass"
    if [ "$pass" -eq 0 ]; then
        limit="-max_total_time=$time"
    else
        # What the corpus holds is replayed first, and -runs counts it too:
        # as many runs as the last pass's INITED, and one for each input it
        # added (libFuzzer may run a seed more than once).
        now=$(find "$work" "$seeds" -type f | wc -l)
        limit="-runs=$((i + now - files + min - mutations)) -max_total_time=$((60 + time))"
    fi
    files=$(find "$work" "$seeds" -type f | wc -l) # what this pass's INITED replays
    # shellcheck disable=SC2086 # limit is two flags or one
    "$prog" $limit "$@" "$work" "$seeds" >"$part" 2>&1
    rc=$?
    cat "$part" >>"$log"
    i=$(inited "$part") u=$(units "$part")
    rm -f "$part"
    if [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi
    if [ -z "$i" ] || [ -z "$u" ]; then
        echo "run-target: no INITED line or stat::number_of_executed_units in $log" >>"$log"
        exit 1
    fi
    [ -n "$seedrun" ] || seedrun=$i
    mutations=$((mutations + u - i))
    executed=$((executed + u))
    pass=$((pass + 1))
    if [ "$mutations" -ge "$min" ] || [ "$pass" -ge 4 ]; then
        break
    fi
    echo "run-target: $mutations mutations of at least $min: once more" >>"$log"
done
if [ "$mutations" -le 0 ] || [ "$mutations" -lt "$min" ]; then
    echo "run-target: $mutations mutations ($executed executions, $seedrun seeds), at least" \
        "$min wanted: the time went to startup and seeds" | tee -a "$log"
    exit 1
fi
echo "$mutations mutations ($executed executions, $seedrun seeds)"
