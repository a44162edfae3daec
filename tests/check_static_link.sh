#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# An application links libmpcengine.a with nothing but what
# `pkg-config --static --libs mpcengine` says (the build tree's .pc, its
# -lmpcengine replaced by the archive not yet installed), runs the built-in
# portable PRG on FIPS-197's C.1 block, and needs no libmpcengine.so.
set -u
a="$top_builddir/.libs/libmpcengine.a"
if [ ! -f "$a" ]; then
    echo "skipped: $a not built (configure --disable-static)"
    exit 77
fi
pc=${PKG_CONFIG:-pkg-config}
if ! command -v "$pc" >/dev/null 2>&1; then
    echo "skipped: pkg-config not found (Debian: pkg-config)"
    exit 77
fi
if [ "${cross_compiling:-no}" = yes ]; then
    echo "skipped: cross-compiling (the application cannot run here)"
    exit 77
fi
PKG_CONFIG_PATH="$top_builddir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH
own_libdir=$("$pc" --variable=libdir mpcengine)
if ! flags=$("$pc" --static --libs mpcengine); then
    echo "FAIL: pkg-config --static --libs mpcengine failed (above)"
    exit 1
fi
echo "pkg-config --static --libs mpcengine: $flags"
libs=
for f in $flags; do
    case $f in
    "-L$own_libdir") ;;     # the install prefix, not populated in a build tree
    -lmpcengine) libs="$libs $a" ;;
    *) libs="$libs $f" ;;
    esac
done
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/app.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <mpcengine.h>
int main(int argc, char **argv)
{
    static const uint8_t key[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    static const uint8_t pt[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                   0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    static const uint8_t want[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                     0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
    uint8_t ct[16];
    mpce_options o;
    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.config_path = argv[1];
    o.flags = MPCE_OPT_NO_TUNE | MPCE_OPT_NO_USER_CONFIG | MPCE_OPT_NO_ENV;
    mpce_engine *e;
    mpce_prg *prg;
    if (argc < 2 || mpce_engine_new(&o, &e) != MPCE_OK || mpce_prg_new(e, key, 1, &prg) != MPCE_OK ||
        mpce_prg_ecb(prg, "prg-soft-bitslice", 0, pt, ct, 1) != MPCE_OK) {
        fprintf(stderr, "app: %s\n", mpce_last_error());
        return 1;
    }
    mpce_prg_free(prg);
    mpce_engine_free(e);
    if (memcmp(ct, want, 16) != 0) {
        fprintf(stderr, "app: wrong ciphertext\n");
        return 1;
    }
    puts("app: FIPS-197 C.1 through the static library");
    return 0;
}
C
mkdir "$tmp/noplugins"
printf '[engine]\nplugin_path = %s\n' "$tmp/noplugins" > "$tmp/engine.conf"
# An archive built with sanitizers (configure --enable-sanitizers) needs
# them in the application too.
# shellcheck disable=SC2086
if ! ${CC:-cc} -std=c11 ${APP_CFLAGS:-} ${SAN_CFLAGS:-} -I"$top_srcdir/include" "$tmp/app.c" \
    ${APP_LDFLAGS:-} $libs -o "$tmp/app"; then
    echo "FAIL: the static link with pkg-config's flags failed (above)"
    exit 1
fi
if command -v ldd >/dev/null 2>&1 && ldd "$tmp/app" | grep -q libmpcengine; then
    echo "FAIL: the application still needs libmpcengine.so"
    exit 1
fi
"$tmp/app" "$tmp/engine.conf" || { echo "FAIL: the statically linked application failed"; exit 1; }
echo "PASS: pkg-config --static links libmpcengine.a"
