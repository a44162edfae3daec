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
# A cross build's programs (aarch64 under qemu-user, .ci/arm64) are not
# this valgrind's platform: it cannot start on them, and qemu cannot run
# valgrind's own tool. Say so instead of reporting every implementation.
probe=$("$top_builddir/libtool" --mode=execute valgrind -q --tool=none "$prog" 2>&1)
case $probe in
*"failed to start tool"* | *"wrong ELF"* | *"cannot execute"*)
    echo "skipped: valgrind ($(uname -m)) cannot run this build's programs (built for" \
        "${host_cpu:-another CPU}); run this check natively on that architecture"
    exit 77
    ;;
esac
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
passed=0 failed=0 ran=0
run() { # run IMPL: valgrind's status (1: a secret-dependent branch or address)
    "$top_builddir/libtool" --mode=execute valgrind -q --error-exitcode=1 \
        --track-origins=yes --exit-on-first-error=no "$prog" "$1" >"$log" 2>&1
}
# required IMPL: the default AES-NI paths, where the CPU has AES-NI and the
# build has the module (valgrind emulates AES-NI, not VAES).
required() {
    case $1 in
        prg-aesni|dpf-aesni)
            grep -qw aes /proc/cpuinfo 2>/dev/null &&
                [ -e "$top_builddir/plugins/aesni/.libs/mpce-aesni.so" ] ;;
        *) return 1 ;;
    esac
}
# check IMPL clean|leaky: a clean one must pass silently; a leaky one must be
# reported, or the check proves nothing.
check() {
    run "$1"
    rc=$?
    if [ $rc -eq 77 ]; then
        case $1 in
            *vaes*)
                # valgrind has no VAES: the body of both widths is checked on
                # a model of AES-NI blocks instead (below).
                echo "not run under valgrind: $1 (valgrind has no VAES): its kernels' body is" \
                     "checked on AES-NI blocks below" ;;
            *) grep '^skipped:' "$log" ;;
        esac
        # Without the leaky case the check proves nothing: not a skip. On a
        # CPU with AES-NI and the module built, its default paths must run.
        if [ "$2" = leaky ] || { [ "$2" = clean ] && required "$1"; }; then
            echo "FAIL: $1 did not run: $([ "$2" = leaky ] &&
                echo "nothing shows the check can see a leak" ||
                echo "this CPU has AES-NI and the aesni module is built")"
            failed=$((failed + 1))
        fi
        return
    fi
    ran=$((ran + 1))
    if [ "$2" = clean ] && [ $rc -eq 0 ]; then
        case $1 in
            dpf-*) echo "PASS: $1: no branch or address depends on the PRG keys, seeds, beta or alpha" ;;
            *) echo "PASS: $1: no branch or address depends on the key or the blocks" ;;
        esac
    elif [ "$2" = leaky ] && [ $rc -eq 1 ] && grep -q "uninitialised" "$log"; then
        echo "PASS: $1: its key-dependent table lookups are reported"
    else
        if [ "$2" = clean ]; then
            echo "FAIL: $1: secret-dependent behaviour (valgrind, exit $rc):"
        else
            echo "FAIL: $1 was not reported (exit $rc): the check cannot see a leak"
        fi
        sed -n '1,40p' "$log"
        failed=$((failed + 1))
        return
    fi
    passed=$((passed + 1))
}
for impl in prg-soft-bitslice prg-aesni prg-aesni-vaes256 prg-aesni-vaes512 prg-neon \
            dpf-soft dpf-aesni dpf-neon; do
    check "$impl" clean
done
check prg-soft-ttable leaky

# The VAES kernels' shared body, compiled on a model register of 2 and of 4
# AES-NI blocks (tests/ct_vaes): required where the aesni module is built and
# the CPU has AES-NI, as the VAES paths are then the default on a VAES CPU.
vaes=$top_builddir/tests/ct_vaes/ct_vaes
if [ -x "$vaes" ] && grep -qw aes /proc/cpuinfo 2>/dev/null; then
    "$top_builddir/libtool" --mode=execute valgrind -q --error-exitcode=1 --track-origins=yes \
        "$vaes" leak >"$log" 2>&1
    rc=$?
    if [ $rc -eq 77 ]; then
        grep '^skipped:' "$log" # no memcheck.h: the leaky case above fails for it
    elif [ $rc -eq 1 ] && grep -q "uninitialised" "$log"; then
        "$top_builddir/libtool" --mode=execute valgrind -q --error-exitcode=1 \
            --track-origins=yes --exit-on-first-error=no "$vaes" >"$log" 2>&1
        rc=$?
        ran=$((ran + 1))
        if [ $rc -eq 0 ]; then
            echo "PASS: the VAES body (2 and 4 blocks a register, on AES-NI): no branch or" \
                 "address depends on the key, blocks, seeds, DPF nodes or correction words"
            passed=$((passed + 1))
        else
            echo "FAIL: the VAES body (exit $rc: 1 secret-dependent, 2 the model is wrong):"
            sed -n '1,40p' "$log"
            failed=$((failed + 1))
        fi
    else
        echo "FAIL: ct_vaes leak was not reported (exit $rc): its marking does nothing"
        sed -n '1,20p' "$log"
        failed=$((failed + 1))
    fi
elif [ "${build_aesni:-no}" != no ] && grep -qw aes /proc/cpuinfo 2>/dev/null; then
    echo "FAIL: $vaes is missing: run 'make check', which builds it"
    failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ $ran -gt 0 ] && [ $failed -eq 0 ]
