#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Constant time, checked: tests/ct_check runs each implementation with its
# secrets marked undefined under valgrind memcheck, which reports any branch
# or memory address that depends on them. The default AES and DPF paths must
# be clean; the T-table AES must be reported (or the check sees nothing).
set -u
if ! command -v valgrind >/dev/null 2>&1; then
    echo "skipped: valgrind not found (Debian: valgrind)"
    exit 77
fi
if [ -n "${SAN_CFLAGS:-}" ]; then
    echo "skipped: built with sanitizers ($SAN_CFLAGS), which valgrind cannot run"
    exit 77
fi
prog="$top_builddir/tests/ct_check"
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
passed=0 failed=0 ran=0
run() { # run IMPL: valgrind's status (1: a secret-dependent branch or address)
    "$top_builddir/libtool" --mode=execute valgrind -q --error-exitcode=1 \
        --track-origins=yes --exit-on-first-error=no "$prog" "$1" >"$log" 2>&1
}
for impl in prg-soft-bitslice prg-aesni prg-aesni-vaes256 prg-aesni-vaes512 \
            dpf-soft dpf-aesni; do
    run "$impl"
    rc=$?
    if [ $rc -eq 77 ]; then
        grep '^skipped:' "$log"
        continue
    fi
    ran=$((ran + 1))
    if [ $rc -eq 0 ]; then
        echo "PASS: $impl: no branch or address depends on the key, seeds or beta"
        passed=$((passed + 1))
    else
        echo "FAIL: $impl: secret-dependent behaviour (valgrind, exit $rc):"
        sed -n '1,40p' "$log"
        failed=$((failed + 1))
    fi
done
run prg-soft-ttable
rc=$?
if [ $rc -eq 1 ] && grep -q "uninitialised" "$log"; then
    echo "PASS: prg-soft-ttable: its key-dependent table lookups are reported"
    passed=$((passed + 1))
else
    echo "FAIL: prg-soft-ttable was not reported (exit $rc): the check cannot see a leak"
    sed -n '1,20p' "$log"
    failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ $ran -gt 0 ] && [ $failed -eq 0 ]
