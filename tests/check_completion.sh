#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The bash completion (completion/mpcengine) against the build tree's
# command: the script is sourced into a plain bash (no bash-completion
# package needed), its function is called with COMP_WORDS/COMP_CWORD set as
# bash sets them, and COMPREPLY is compared with what the command offers.
# Exit 77 (automake's skip) without bash or without the built command.
set -u
if ! command -v bash >/dev/null 2>&1; then
    echo "skipped: bash not found"
    exit 77
fi
exe="$top_builddir/tools/mpcengine"
if [ ! -x "$exe" ]; then
    echo "skipped: $exe not built"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpce-completion.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# A configuration of our own: no installed modules, no tune, no user file
# (root ignores MPCENGINE_CONF, so cases that list exact names pass it with
# --config: a `make install` may have put modules in the default directory).
mkdir "$tmp/noplugins" "$tmp/files" "$tmp/xdg" "$tmp/cache"
printf '[engine]\nplugin_path = %s\n[tune]\nmode = off\n' "$tmp/noplugins" > "$tmp/engine.conf"
: > "$tmp/files/keys.bin"
: > "$tmp/files/kat.txt"
aesni_dir=
# A tune due on every start ([tune] mode = auto, the build's probe helper):
# completing --impl must not start it (seconds per Tab, and a pins file
# written as a side effect).
mkdir "$tmp/pins"
printf '[engine]\nuser_config = no\n[tune]\nmode = auto\ndir = %s\nhelper = %s\n' \
    "$tmp/pins" "$top_builddir/tools/probe/mpcengine-probe" > "$tmp/auto.conf"
if [ "${build_aesni:-no}" = yes ]; then
    aesni_dir="$top_builddir/plugins/aesni/.libs"
    printf '[engine]\nplugin_path = %s\n[tune]\nmode = off\n' "$aesni_dir" > "$tmp/aesni.conf"
fi

cat > "$tmp/run.bash" <<'BASH'
set -u
source "$top_srcdir/completion/mpcengine" || { echo "FAIL: sourcing completion/mpcengine"; exit 1; }
[[ $(complete -p mpcengine 2>/dev/null) == *"-F _mpcengine"* ]] ||
    { echo "FAIL: complete -F _mpcengine mpcengine is not registered"; exit 1; }
fails=0
n=0

# complete WORD... : COMPREPLY for the words, the last being the one under
# the cursor, sorted, one per line in $got.
complete_words() {
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _mpcengine mpcengine "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    got=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort)
}

report() {
    n=$((n + 1))
    if [[ $1 == ok ]]; then
        echo "ok $n: $2"
    else
        echo "FAIL $n: $2"
        echo "    words: $3"
        echo "    got:   $(tr '\n' ' ' <<<"$got")"
        fails=$((fails + 1))
    fi
}

# expect_exactly "WORDS" WANTED...: the offers are exactly these.
expect_exactly() {
    local words=$1
    shift
    eval "complete_words $words"
    local want
    want=$(printf '%s\n' "$@" | sort)
    if [[ $got == "$want" ]]; then report ok "'$words' -> $*"; else report fail "'$words' -> exactly: $*" "$words"; fi
}

# expect_has "WORDS" WANTED... [! UNWANTED...]: these among the offers, and
# none of those after "!".
expect_has() {
    local words=$1 w neg='' bad=''
    shift
    eval "complete_words $words"
    for w in "$@"; do
        if [[ $w == "!" ]]; then neg=1; continue; fi
        if [[ -z $neg ]]; then
            grep -qxF -- "$w" <<<"$got" || bad="$bad missing:$w"
        else
            ! grep -qxF -- "$w" <<<"$got" || bad="$bad unwanted:$w"
        fi
    done
    if [[ -z $bad ]]; then report ok "'$words' -> $*"; else report fail "'$words' ->$bad" "$words"; fi
}

# The first word: the commands; options only after a dash.
expect_exactly "mpcengine ''" bench config dpf list lpn ntt pins prg selftest tune
expect_exactly "mpcengine p" pins prg
expect_exactly "mpcengine --" --help --verbose --version
# After --verbose, only the commands that take it, and not it again.
expect_exactly "mpcengine --verbose ''" dpf lpn ntt prg
expect_exactly "mpcengine --verbose l" lpn
expect_exactly "mpcengine --verbose --" --help
expect_has "mpcengine --verbose prg ctr --" --key --out ! --verbose
# Subcommands.
expect_exactly "mpcengine prg ''" ecb mmo ctr
expect_exactly "mpcengine ntt ''" forward inverse mul
expect_exactly "mpcengine dpf ev" eval evalall
expect_exactly "mpcengine --verbose prg c" ctr
# Each command's options, from its help; none given twice.
expect_has "mpcengine prg ctr ''" --key --key-file --counter --blocks --out --impl --config \
    --plugin-path --verbose --help ! --in --keys --seed
expect_exactly "mpcengine prg ctr --co" --config --counter
expect_has "mpcengine prg ctr --counter 5 --key-file k --" --blocks --out ! --counter --key-file
expect_has "mpcengine list --" --json --impl --config --help ! --key --out
expect_has "mpcengine lpn --" --seed --seed-file --logk --table --in --out
expect_has "mpcengine dpf gen --" --bits --alpha --beta --group --out0 --out1
expect_exactly "mpcengine tune --f" --force
# Values an option's usage lists.
expect_exactly "mpcengine tune --effort ''" quick measure patient
expect_exactly "mpcengine dpf gen --bits 8 --group ''" bytes u64
expect_exactly "mpcengine tune --primitive n" ntt
expect_has "mpcengine bench --op prg." prg.ecb prg.mmo prg.ctr ! ntt.forward
expect_exactly "mpcengine prg ctr --counter ''"
# Implementation names from `mpcengine list`: the command's primitive only,
# and "auto" where the command takes it.
expect_has "mpcengine prg ctr --impl ''" auto prg-soft-bitslice prg-soft-ttable ! ntt-soft dpf-soft
expect_exactly "mpcengine ntt forward --config $tmp/engine.conf --impl n" ntt-soft
expect_has "mpcengine list --impl ''" prg-soft-bitslice ntt-soft lpn-soft dpf-soft ! auto
# ... without a tune where one is due.
if [[ -x $top_builddir/tools/probe/mpcengine-probe ]]; then
    expect_has "mpcengine prg ctr --config $tmp/auto.conf --impl ''" auto prg-soft-bitslice ! ntt-soft
    expect_has "mpcengine list --config $tmp/auto.conf --impl ''" ntt-soft dpf-soft
    if [[ -e $tmp/pins/pins.ini ]]; then
        report fail "completing --impl started a tune: $tmp/pins/pins.ini was written" "--impl"
    else
        report ok "completing --impl starts no tune"
    fi
else
    echo "note: no probe helper built: completing --impl not checked against a due tune"
fi
# --opt=VALUE and DIR:DIR, split into words "=" and ":" by COMP_WORDBREAKS
# (readline then replaces what follows the last one) or not.
expect_exactly "mpcengine prg ctr --impl = prg-soft-b" prg-soft-bitslice
expect_has "mpcengine prg ctr --impl =" auto prg-soft-bitslice ! ntt-soft
expect_exactly "mpcengine prg ctr --impl=prg-soft-t" --impl=prg-soft-ttable
expect_exactly "mpcengine lpn --config $tmp/engine.conf --impl=lpn" --impl=lpn-soft
# The command as typed, not only from PATH.
expect_has "$top_builddir/tools/mpcengine dpf gen --impl ''" dpf-soft ! prg-soft-bitslice
# Files and directories.
expect_exactly "mpcengine prg ecb --in $tmp/files/ke" "$tmp/files/keys.bin"
expect_has "mpcengine prg ecb --in $tmp/files/" "$tmp/files/keys.bin" "$tmp/files/kat.txt"
expect_exactly "mpcengine dpf eval --key $tmp/files/ka" "$tmp/files/kat.txt"
expect_exactly "mpcengine list --plugin-path $tmp/files:$tmp/no" "$tmp/files:$tmp/noplugins"
expect_exactly "mpcengine list --plugin-path $tmp/files : $tmp/no" "$tmp/noplugins"
expect_exactly "mpcengine list --plugin-path = $tmp/files : $tmp/no" "$tmp/noplugins"
expect_exactly "mpcengine list --plugin-path=$tmp/files:$tmp/no" "--plugin-path=$tmp/files:$tmp/noplugins"
expect_has "mpcengine list --plugin-path $tmp/files : $tmp/noplugins --" --json --impl ! --plugin-path
# --plugin-path and --config on the line choose the modules listed.
if [[ -n ${aesni_dir:-} ]]; then
    want=$(mpcengine list --plugin-path "$aesni_dir" 2>/dev/null | awk '$2 == "prg" { print $3 }' | grep aesni | head -n 1)
    if [[ -n $want ]]; then
        expect_has "mpcengine prg ctr --plugin-path $aesni_dir --impl ''" "$want" prg-soft-bitslice
        expect_has "mpcengine prg ctr --config $tmp/aesni.conf --impl ''" "$want"
        expect_has "mpcengine prg ctr --plugin-path $tmp/noplugins : $aesni_dir --impl ''" "$want"
        expect_has "mpcengine prg ctr --plugin-path=$tmp/noplugins:$aesni_dir --impl ''" "$want"
    else
        echo "note: the aesni module loads no PRG implementation on this CPU: --plugin-path not checked"
    fi
fi

if ((fails)); then
    echo "FAIL: $fails of $n completion cases"
    exit 1
fi
echo "PASS: all $n completion cases"
BASH

PATH="$top_builddir/tools:$PATH"
MPCENGINE_CONF="$tmp/engine.conf"
XDG_CONFIG_HOME="$tmp/xdg"
XDG_CACHE_HOME="$tmp/cache"
export PATH MPCENGINE_CONF XDG_CONFIG_HOME XDG_CACHE_HOME tmp aesni_dir top_srcdir top_builddir
bash "$tmp/run.bash" </dev/null
