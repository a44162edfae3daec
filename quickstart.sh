#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Build libmpcengine and show it working, or run its tests.
#
#   ./quickstart.sh          build, install into ./_install, run a short demonstration
#   ./quickstart.sh check    build and run the test suites (make check)
#
# Missing Debian packages are installed with apt-get when run as root;
# otherwise the script names them and stops. The build is out of tree in
# ./_build. With CI=true warnings are errors (--enable-werror).
set -eu

PACKAGES="autoconf automake libtool pkg-config make gcc g++ libffi-dev libssl-dev libiniparser-dev libcunit1-dev autoconf-archive"

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"

say() {
    printf '\n== %s\n' "$*"
}

ensure_packages() {
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "quickstart: not a Debian system (no dpkg-query); make sure the equivalents of these are installed: $PACKAGES" >&2
        return 0
    fi
    missing=
    for pkg in $PACKAGES; do
        case $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true) in
        *" ok installed") ;;
        *) missing="$missing $pkg" ;;
        esac
    done
    [ -n "$missing" ] || return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "quickstart: missing Debian packages:$missing" >&2
        echo "quickstart: run 'sudo apt-get install$missing', or run this script as root" >&2
        exit 1
    fi
    echo "quickstart: installing$missing"
    apt-get update
    # shellcheck disable=SC2086 # one word per package
    DEBIAN_FRONTEND=noninteractive apt-get install -y $missing
}

# Whether file $1 was modified after file $2 (test -nt is not POSIX).
newer() {
    [ -n "$(find "$1" -prune -newer "$2" 2>/dev/null)" ]
}

build() {
    ensure_packages
    # git keeps no empty directories, and aclocal needs m4/ to exist.
    mkdir -p m4 build-aux
    if [ ! -f configure ] || newer configure.ac configure; then
        echo "quickstart: autoreconf -fi"
        autoreconf -fi
    fi
    mkdir -p _build
    cd _build
    if [ ! -f Makefile ] || newer ../configure config.status; then
        if [ "${CI:-}" = true ]; then
            ../configure --prefix="$top/_install" --enable-werror
        else
            ../configure --prefix="$top/_install"
        fi
    fi
    make -j"$(nproc)"
}

# The bytes of a file as hex, one line.
hex() {
    od -An -tx1 -v "$1" | tr -d ' \n'
    echo
}

# The bytes of a file as decimals, one per line.
bytes() {
    od -An -tu1 -v "$1" | tr -s ' ' '\n' | sed '/^$/d'
}

demo() {
    make install >/dev/null
    bin=$top/_install/bin/mpcengine
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT INT TERM
    key=000102030405060708090a0b0c0d0e0f
    # Secrets go in files only their owner reads, not on the command line
    # (where ps and the shell history show them).
    (umask 077 && echo "$key" >"$tmp/key.txt")

    say "mpcengine list"
    "$bin" list

    say "mpcengine selftest"
    "$bin" selftest

    say "PRG: four AES-128 counter-mode blocks"
    echo "\$ mpcengine prg ctr --key-file key.txt --counter 0 --blocks 4 --out ctr.bin   # key.txt: $key"
    "$bin" prg ctr --key-file "$tmp/key.txt" --counter 0 --blocks 4 --out "$tmp/ctr.bin"
    od -An -tx1 -v "$tmp/ctr.bin"

    say "NTT: forward and inverse of 1 + 2X + ... + 8X^7 mod (X^8 + 1, q = 2^61 - 2^21 + 1)"
    : >"$tmp/poly.bin"
    i=1
    while [ "$i" -le 8 ]; do
        # one little-endian uint64 word
        # shellcheck disable=SC2059 # the format is built to hold octal escapes
        printf "\\$(printf %03o "$i")\\000\\000\\000\\000\\000\\000\\000" >>"$tmp/poly.bin"
        i=$((i + 1))
    done
    ntt="--n 8 --moduli 0x1fffffffffe00001 --batch 1"
    echo "\$ mpcengine ntt forward $ntt --in poly.bin --out ntt.bin"
    # shellcheck disable=SC2086 # $ntt is a list of options
    "$bin" ntt forward $ntt --in "$tmp/poly.bin" --out "$tmp/ntt.bin"
    od -An -tu8 -v "$tmp/ntt.bin"
    echo "\$ mpcengine ntt inverse $ntt --in ntt.bin --out back.bin"
    # shellcheck disable=SC2086
    "$bin" ntt inverse $ntt --in "$tmp/ntt.bin" --out "$tmp/back.bin"
    od -An -tu8 -v "$tmp/back.bin"
    if cmp -s "$tmp/poly.bin" "$tmp/back.bin"; then
        echo "round trip: the inverse gives back the input"
    else
        echo "round trip FAILED" >&2
        exit 1
    fi

    say "LPN: fold 4 zero blocks against a 16-block table (logk 4)"
    "$bin" prg ctr --key-file "$tmp/key.txt" --counter 1000 --blocks 16 --out "$tmp/table.bin"
    dd if=/dev/zero of="$tmp/in.bin" bs=16 count=4 2>/dev/null
    echo "\$ mpcengine lpn --seed-file key.txt --logk 4 --counter 0 --table table.bin --in in.bin --out lpn.bin"
    consumed=$("$bin" lpn --seed-file "$tmp/key.txt" --logk 4 --counter 0 --table "$tmp/table.bin" \
        --in "$tmp/in.bin" --out "$tmp/lpn.bin")
    od -An -tx1 -v "$tmp/lpn.bin"
    echo "index-stream blocks consumed: $consumed (continue with --counter $consumed)"

    say "DPF: keys for x -> beta at x = 42 on 8 bits, shares at x = 42 and 43"
    beta=48656c6c6f2c20445046210000000000 # "Hello, DPF!"
    echo "\$ mpcengine dpf gen --bits 8 --alpha 42 --beta $beta --group bytes --out0 key0 --out1 key1"
    "$bin" dpf gen --bits 8 --alpha 42 --beta "$beta" --group bytes \
        --out0 "$tmp/key0" --out1 "$tmp/key1"
    echo "key size: $(wc -c <"$tmp/key0") bytes each"
    "$bin" dpf eval --key "$tmp/key0" --points 42,43 --out "$tmp/e0"
    "$bin" dpf eval --key "$tmp/key1" --points 42,43 --out "$tmp/e1"
    echo "party 0 shares: $(hex "$tmp/e0")"
    echo "party 1 shares: $(hex "$tmp/e1")"
    bytes "$tmp/e0" >"$tmp/b0"
    bytes "$tmp/e1" >"$tmp/b1"
    xor=$(paste "$tmp/b0" "$tmp/b1" | while read -r a b; do printf '%02x' $((a ^ b)); done)
    at42=$(printf '%s' "$xor" | cut -c1-32)
    at43=$(printf '%s' "$xor" | cut -c33-64)
    echo "share0 ^ share1 at 42: $at42"
    echo "share0 ^ share1 at 43: $at43"
    if [ "$at42" = "$beta" ] && [ "$at43" = 00000000000000000000000000000000 ]; then
        echo "the shares reconstruct beta at 42 and 0 elsewhere"
    else
        echo "DPF reconstruction FAILED" >&2
        exit 1
    fi
    printf '\nDone. The command is %s; see README.md for the rest.\n' "$bin"
}

# Sum the CUnit "tests" rows (Total Ran Passed Failed Inactive) of every
# test log that automake wrote (each has a .trs beside it: tests/, the
# fault scripts in tests/faults/, the fuzz replays in fuzz/). A test without
# CUnit (a script, a replay) counts as one test by its automake result; a
# CUnit program's log without a summary is a program that died, counted as
# one failure. A program automake counted as SKIP (exit 77: it compared
# nothing here) adds nothing, whatever its CUnit rows say. Only this build
# tree's own test directories are read: a distcheck leaves a whole build
# (mpcengine-*/_build/...) with stale .trs files inside the tree.
totals() {
    passed=0
    failed=0
    for trs in $(find tests fuzz -name '*.trs' 2>/dev/null | sort); do
        log=${trs%.trs}.log
        [ -f "$log" ] || { failed=$((failed + 1)); echo "quickstart: $trs has no log" >&2; continue; }
        [ "$(sed -n 's/^:test-result: //p' "$trs" 2>/dev/null)" = SKIP ] && continue
        row=$(awk '/Run Summary/ { s = 1 } s && $1 == "tests" { print $4, $5; exit }' "$log")
        if [ -z "$row" ] && ! grep -q 'CUnit - A unit testing framework' "$log"; then
            case $(sed -n 's/^:test-result: //p' "${log%.log}.trs" 2>/dev/null) in
            PASS) passed=$((passed + 1)) ;;
            SKIP) ;;
            *) failed=$((failed + 1)) ;;
            esac
            continue
        fi
        if [ -z "$row" ]; then
            echo "quickstart: $log has no CUnit summary: the test program did not finish" >&2
            failed=$((failed + 1))
            continue
        fi
        passed=$((passed + ${row% *}))
        failed=$((failed + ${row#* }))
    done
}

check() {
    status=0
    make -j"$(nproc)" check || status=$?
    if [ "$status" -ne 0 ] && [ -f test-suite.log ]; then
        echo "quickstart: make check failed; test-suite.log follows" >&2
        cat test-suite.log >&2
    fi
    totals
    if [ $((passed + failed)) -eq 0 ]; then
        echo "quickstart: no test ran" >&2
        status=1
    fi
    [ "$failed" -eq 0 ] || status=1
    echo "$passed passed, $failed failed"
    return "$status"
}

case ${1:-} in
"")
    build
    demo
    ;;
check)
    build
    check
    ;;
-h | --help)
    sed -n '2,9s/^# \{0,1\}//p' "$0"
    ;;
*)
    echo "usage: $0 [check]" >&2
    exit 2
    ;;
esac
