#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# libmpcengine.so exports the public API and nothing else: every dynamic
# symbol it defines is an mpce_* function declared in an installed header,
# none belongs to the benchmark harness (which lives in the command), and
# every MPCE_API function of the headers is exported.
set -u
lib="$top_builddir/.libs/libmpcengine.so"
inc="$top_srcdir/include"
if [ ! -f "$lib" ]; then
    echo "check_exports: $lib not built (a static-only build?); nothing to check"
    exit 77
fi
if ! command -v nm >/dev/null 2>&1; then
    echo "check_exports: nm not found (Debian: binutils)"
    exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRBVW]$/ { print $3 }' | sort -u > "$tmp/exported"
# Declarations: "MPCE_API <type> name(" possibly across lines; take every
# mpce_ identifier followed by "(" in lines from MPCE_API to ";".
sed -n '/MPCE_API/,/;/p' "$inc/mpcengine.h" "$inc"/mpcengine/*.h |
    grep -o 'mpce_[a-z0-9_]*(' | tr -d '(' | sort -u > "$tmp/declared"
status=0
n=$(wc -l < "$tmp/exported")
echo "check_exports: $n symbols exported by $(basename "$lib")"
if grep -i bench "$tmp/exported"; then
    echo "FAIL: benchmark symbols exported (above): the harness belongs to the command"
    status=1
fi
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
if [ -n "$extra" ]; then
    echo "FAIL: exported but not declared MPCE_API in include/:"
    echo "$extra"
    status=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -n "$missing" ]; then
    echo "FAIL: declared MPCE_API but not exported:"
    echo "$missing"
    status=1
fi
[ "$status" -eq 0 ] && echo "PASS: exports are exactly the $n public functions, none of them a benchmark"
exit "$status"
