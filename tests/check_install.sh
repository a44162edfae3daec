#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make install` into a scratch DESTDIR lays out what packages split: no
# libtool archives, no empty state directory, modules in the directory
# named after the plugin ABI (the one the engine and the .pc file name), the
# probe helper where the library spawns it, an engine.conf that sets
# nothing, the bash completion under the command's name (unless configured
# out); and `make uninstall` leaves no file behind.
set -u
MAKE=${MAKE:-make}
dest=$(mktemp -d "${TMPDIR:-/tmp}/mpce-install.XXXXXX") || exit 1
trap 'rm -rf "$dest"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

if ! $MAKE -s -C "$top_builddir" install DESTDIR="$dest" >"$dest.log" 2>&1; then
    cat "$dest.log"; rm -f "$dest.log"
    bad "make install DESTDIR=$dest failed (above)"
    exit 1
fi
rm -f "$dest.log"

echo "installed under $dest:"
(cd "$dest" && find . -type f -o -type l -o -type d -empty) | sort | sed 's/^/  /'

la=$(find "$dest" -name '*.la')
[ -z "$la" ] || bad "libtool archives installed: $la"
[ ! -e "$dest$pinsdir" ] || bad "$pinsdir installed (the first tune makes it)"
case "$plugindir" in
*/plugins-"$plugin_abi") ;;
*) bad "plugin directory $plugindir is not named after plugin ABI $plugin_abi" ;;
esac
if [ "$build_aesni" = yes ]; then
    [ -f "$dest$plugindir/mpce-aesni.so" ] || bad "mpce-aesni.so not in $plugindir"
    grep -q '^\[plugin.aesni\]' "$dest$snippetdir/aesni.conf" 2>/dev/null ||
        bad "the aesni snippet is not in $snippetdir/aesni.conf"
fi
if [ "${build_neon:-no}" = yes ]; then
    [ -f "$dest$plugindir/mpce-neon.so" ] || bad "mpce-neon.so not in $plugindir"
    grep -q '^\[plugin.neon\]' "$dest$snippetdir/neon.conf" 2>/dev/null ||
        bad "the neon snippet is not in $snippetdir/neon.conf"
fi
[ -x "$dest$probe_helper" ] || bad "probe helper not installed at $probe_helper"
conf="$dest$mpceconfdir/engine.conf"
if [ -f "$conf" ]; then
    set_keys=$(grep -n '^[A-Za-z_.]* *=' "$conf")
    [ -z "$set_keys" ] || bad "the installed engine.conf sets keys: $set_keys"
    # One file serves every architecture (Debian: Architecture: all), so no
    # documented default may be an architecture's library directory.
    arch_keys=$(grep -n "^#[a-z_.]* *= *$libdir" "$conf")
    [ -z "$arch_keys" ] || bad "the installed engine.conf documents architecture paths: $arch_keys"
else
    bad "engine.conf not installed in $mpceconfdir"
fi
if [ -n "${bashcompletiondir:-}" ]; then
    [ -f "$dest$bashcompletiondir/mpcengine" ] ||
        bad "the bash completion is not installed as $bashcompletiondir/mpcengine"
fi
pc_file="$dest$libdir/pkgconfig/mpcengine.pc"
pc=${PKG_CONFIG:-pkg-config}
if [ -f "$pc_file" ] && command -v "$pc" >/dev/null 2>&1; then
    pc_dir=$("$pc" --variable=plugindir "$pc_file")
    [ "$pc_dir" = "$plugindir" ] || bad "mpcengine.pc says plugindir=$pc_dir, the engine searches $plugindir"
    pc_snip=$("$pc" --variable=snippetdir "$pc_file")
    [ "$pc_snip" = "$snippetdir" ] || bad "mpcengine.pc says snippetdir=$pc_snip, the engine reads $snippetdir"
else
    [ -f "$pc_file" ] || bad "mpcengine.pc not installed"
fi

if ! $MAKE -s -C "$top_builddir" uninstall DESTDIR="$dest" >/dev/null 2>&1; then
    bad "make uninstall DESTDIR=$dest failed"
fi
left=$(find "$dest" -type f -o -type l)
[ -z "$left" ] || bad "make uninstall left: $left"
[ $fail = 0 ] && echo "PASS: install layout and uninstall"
exit $fail
