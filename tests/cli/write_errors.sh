#!/bin/sh
# A report that cannot be written is an error: simtrain writing to a full device (/dev/full)
# exits non-zero and says so, for the plain run and for a subcommand. Run from the repository
# root: tests/cli/write_errors.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/write_errors.sh SIMTRAIN}
[ -w /dev/full ] || { echo "write_errors: skipped (no /dev/full)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() { # name, then the command
    name=$1
    shift
    "$@" >/dev/full 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 0 ] || ! grep -q "cannot write to standard output" "$tmp/err"; then
        printf 'FAIL %s: exit %d: %s\n' "$name" $rc "$(cat "$tmp/err")"
        failures=$((failures + 1))
    fi
}
check version "$bin" --version
check run "$bin" scenarios/gpt2_1gpu.yaml
check collective "$bin" collective --hardware dgx-h100 --op all_reduce --gpus 8 --sizes 1M:4M
[ $failures -eq 0 ] || exit 1
echo "write errors: ok"
