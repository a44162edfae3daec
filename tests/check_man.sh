#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Render every man page with groff and fail on any warning or error.
# Usage: srcdir=DIR tests/check_man.sh   (srcdir defaults to .)
# Exit 77 (automake's skip code) when groff is not installed.
set -eu

srcdir=${srcdir:-.}
pages="docs/man/mpcengine.1 docs/man/engine.conf.5 docs/man/libmpcengine.3"

if ! command -v groff >/dev/null 2>&1; then
    echo "skipped: groff not installed"
    exit 77
fi

err=$(mktemp "${TMPDIR:-/tmp}/check_man.XXXXXX")
trap 'rm -f "$err"' EXIT
trap 'exit 1' HUP INT TERM

failed=0
for page in $pages; do
    path=$srcdir/$page
    if [ ! -r "$path" ]; then
        echo "FAIL: $page: not found in $srcdir"
        failed=1
        continue
    fi
    status=0
    groff -ww -man -Tutf8 "$path" >/dev/null 2>"$err" || status=$?
    if [ "$status" -ne 0 ] || [ -s "$err" ]; then
        echo "FAIL: $page (groff exit status $status):"
        cat "$err"
        failed=1
    fi
done

if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "PASS: man pages render without warnings"
