#!/bin/sh
# Every command's --help: exit 0, the help on standard output and nothing on standard error;
# every flag a help lists is one the command's parser accepts (not an unknown option), and an
# unknown flag is refused with exit 2 and named. Run from the repository root:
# tests/cli/help.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/help.sh SIMTRAIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}
for cmd in "" memory collective validate calibrate sweep plan schema frameworks; do
    # shellcheck disable=SC2086 # $cmd is one word or none
    "$bin" $cmd --help >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || fail "'$cmd --help' exits $rc"
    [ -s "$tmp/err" ] && fail "'$cmd --help' writes to stderr: $(cat "$tmp/err")"
    grep -q '^usage: simtrain' "$tmp/out" || fail "'$cmd --help' prints no usage line"
    grep -q -- '-h, --help' "$tmp/out" || fail "'$cmd --help' does not list --help"
    # the options block of the help: lines that start with a flag
    for flag in $(sed -n 's/^  \(-., \)\{0,1\} *\(--[a-z-]*\).*/\2/p' "$tmp/out"); do
        # shellcheck disable=SC2086
        "$bin" $cmd "$flag" </dev/null >/dev/null 2>"$tmp/err"
        grep -q "unknown option" "$tmp/err" && fail "'$cmd' lists $flag but refuses it"
    done
    # shellcheck disable=SC2086
    "$bin" $cmd --no-such-flag >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "error: unknown option '--no-such-flag'" "$tmp/err" ||
        fail "'$cmd --no-such-flag': exit $rc: $(cat "$tmp/err")"
done
# the top-level help lists every command
"$bin" --help >"$tmp/out"
for cmd in memory collective validate calibrate sweep plan schema frameworks import serve; do
    grep -q "^  $cmd " "$tmp/out" || fail "--help does not list '$cmd'"
done
echo "help: $failures failures"
[ "$failures" -eq 0 ]
