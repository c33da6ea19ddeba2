#!/bin/sh
# A report or an output file that cannot be written is an error: simtrain writing to a full
# device (/dev/full) exits 1 and says so, for standard output and for every output option of
# every command. Skipped (exit 77) where there is no /dev/full. Run from the repository root:
# tests/cli/write_errors.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/write_errors.sh SIMTRAIN}
[ -w /dev/full ] || { echo "write_errors: skipped (no /dev/full)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() { # name, then the command: its standard output goes to /dev/full
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

# an output file on /dev/full: exit 1 and exactly this message on stderr
check_file() { # name, expected stderr line, then the command
    name=$1 want=$2
    shift 2
    "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 1 ] || ! grep -qxF "$want" "$tmp/err"; then
        printf 'FAIL %s: exit %d (want 1)\n  want: %s\n  got:  %s\n' "$name" $rc "$want" \
            "$(cat "$tmp/err")"
        failures=$((failures + 1))
    fi
}
full="cannot write '/dev/full': No space left on device"
check_file "run --trace" "simtrain: error: $full" "$bin" scenarios/gpt2_1gpu.yaml -q --trace /dev/full
check_file "run --json" "simtrain: error: $full" "$bin" scenarios/gpt2_1gpu.yaml -q --json /dev/full
check_file "flagship --trace" "simtrain: error: $full" \
    "$bin" scenarios/ddp_8gpu.yaml -q --trace /dev/full
vary="--vary training.micro_batch=16,32"
check_file "sweep --csv" "simtrain sweep: error: $full" \
    "$bin" sweep scenarios/gpt2_1gpu.yaml $vary -q --csv /dev/full
check_file "sweep --json" "simtrain sweep: error: $full" \
    "$bin" sweep scenarios/gpt2_1gpu.yaml $vary -q --json /dev/full
check_file "plan --csv" "simtrain plan: error: $full" \
    "$bin" plan scenarios/gpt2_1gpu.yaml --top 1 -q --csv /dev/full
check_file "plan --json" "simtrain plan: error: $full" \
    "$bin" plan scenarios/gpt2_1gpu.yaml --top 1 -q --json /dev/full
check_file "validate --json" "simtrain validate: error: $full" \
    "$bin" validate tests/validation/memory.csv -q --json /dev/full
check_file "calibrate --output" "simtrain calibrate: error: $full" \
    "$bin" calibrate hardware/calibration/measurements/dgx-h100.csv --hardware dgx-h100 \
    --no-collectives --output /dev/full
[ $failures -eq 0 ] || exit 1
echo "write errors: ok"
