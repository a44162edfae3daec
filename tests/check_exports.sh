#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# libmpcengine.so exports the public API and nothing else: every dynamic
# symbol it defines is an mpce_* function declared in an installed header,
# none belongs to the benchmark harness (which lives in the command), and
# every MPCE_API function of the headers is exported. Where the build used
# the version script (configure: version_script=yes), every export carries
# MPCE_0, or the later node engine/libmpcengine.map names it in.
set -u
lib="$top_builddir/.libs/libmpcengine.so"
inc="$top_srcdir/include"
map="$top_srcdir/engine/libmpcengine.map"
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
# nm shows versioned names as name@@VERSION: the name is what is declared.
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRBVW]$/ { sub(/@.*/, "", $3); print $3 }' |
    sort -u > "$tmp/exported"
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

# ---- symbol versions ----------------------------------------------------
if [ "${version_script:-yes}" != yes ]; then
    echo "check_exports: configure found no linker --version-script: versions not checked"
    exit "$status"
fi
# "name VERSION" for every defined dynamic mpce_* symbol; VERSION is "-" for
# an unversioned one.
if command -v readelf >/dev/null 2>&1; then
    readelf -W --dyn-syms "$lib" | awk '$7 != "UND" && $8 ~ /^mpce_/ {
        n = $8; v = "-"
        if (i = index(n, "@")) { v = substr(n, i); sub(/^@+/, "", v); n = substr(n, 1, i - 1) }
        print n, v }' | sort -u > "$tmp/versions"
elif command -v objdump >/dev/null 2>&1; then
    # objdump -T: ... SECTION SIZE [VERSION] NAME; "*UND*" for undefined.
    objdump -T "$lib" | awk '$NF ~ /^mpce_/ && $0 !~ /\*UND\*/ {
        v = (NF >= 7) ? $(NF - 1) : "-"; gsub(/[()]/, "", v)
        if (v == "Base") v = "-"
        print $NF, v }' | sort -u > "$tmp/versions"
else
    echo "check_exports: neither readelf nor objdump found (Debian: binutils): versions not checked"
    exit 77
fi
# Names the map gives a later node ("name NODE"), read past its comments.
awk '{
        line = $0; out = ""
        while (line != "") {
            if (incomment) {
                i = index(line, "*/"); if (!i) { line = ""; break }
                line = substr(line, i + 2); incomment = 0
            } else {
                i = index(line, "/*"); if (!i) { out = out line; break }
                out = out substr(line, 1, i - 1); line = substr(line, i + 2); incomment = 1
            }
        }
        print out
    }' "$map" | sed -e 's/[{};]/ & /g' | awk '
    { for (f = 1; f <= NF; f++) {
          t = $f
          # NODE { ... } [INHERITED] ;
          if (t == "{") { depth = 1; section = ""; continue }
          if (t == "}") { depth = 0; node = "}"; continue }
          if (depth == 0) { if (t == ";") node = ""; else if (node == "") node = t; continue }
          if (t == ";") continue
          if (t == "global:" || t == "local:") { section = t; continue }
          if (section == "global:" && node != "MPCE_0" && t !~ /[*?[]/) print t, node
      } }' | sort -u > "$tmp/later"
bad=$(awk 'FILENAME == ARGV[1] { want[$1] = $2; next }
           { w = ($1 in want) ? want[$1] : "MPCE_0"
             if ($2 != w) printf "  %s has version %s, expected %s\n", $1, $2, w }' \
        "$tmp/later" "$tmp/versions")
nv=$(wc -l < "$tmp/versions")
if [ "$nv" -eq 0 ]; then
    echo "FAIL: no defined mpce_* symbol in the dynamic symbol table of $(basename "$lib")"
    status=1
elif [ -n "$bad" ]; then
    echo "FAIL: symbol versions differ from engine/libmpcengine.map (\"-\": none):"
    echo "$bad"
    echo "  the library must be linked with engine/libmpcengine.map (engine/local.am); a shipped"
    echo "  symbol keeps its version, a new one goes in a new node of the map by its exact name"
    status=1
else
    echo "PASS: all $nv exported mpce_* symbols carry their version ($(cut -d' ' -f2 "$tmp/versions" | sort -u | tr '\n' ' ' | sed 's/ $//'))"
fi
exit "$status"
