#!/bin/sh
# Every command that reads a file refuses what is not a regular file (a device that never ends,
# a directory) with the file named and exit 1, at once, instead of reading until memory runs
# out. Run from the repository root: tests/cli/input_files.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/input_files.sh SIMTRAIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() { # expected first stderr line, then the arguments
    want=$1
    shift
    timeout 10 "$bin" "$@" >/dev/null 2>"$tmp/err" </dev/null
    rc=$?
    first=$(head -n 1 "$tmp/err")
    if [ $rc -ne 1 ] || [ "$first" != "$want" ]; then
        printf 'FAIL simtrain %s: exit %d (want 1)\n  want: %s\n  got:  %s\n' "$*" $rc "$want" "$first"
        failures=$((failures + 1))
    fi
}
for f in /dev/zero "$tmp"; do
    nrf="cannot read '$f': not a regular file"
    check "error: $nrf" "$f"
    check "error: $nrf" memory "$f"
    check "error: $nrf" sweep "$f" --vary training.micro_batch=1
    check "error: $nrf" plan "$f"
    check "$f: error: $nrf" validate "$f"
    check "$f: error: $nrf" calibrate "$f" --hardware dgx-h100
    check "$f: error: $nrf" collective --validate "$f"
    check "error: cannot read hardware file '$f': not a regular file" collective --hardware "$f"
    check "simtrain sweep: error: $nrf" sweep --merge "$f"
    check "simtrain plan: error: $nrf" plan --merge "$f"
done
check "<command line>:1:16: error: cannot read workload file '/dev/zero': not a regular file" \
    scenarios/ddp_8gpu.yaml --set workload=/dev/zero
# a --vary value naming a file that is not there is bad input, not a point's verdict
check "simtrain sweep: error: --vary hardware: value 'no-such-box': hardware 'no-such-box' not found" \
    sweep scenarios/ddp_8gpu.yaml --vary hardware=dgx-h100,no-such-box
check "simtrain sweep: error: --vary workload: value '/dev/zero': cannot read workload file '/dev/zero': not a regular file" \
    sweep scenarios/ddp_8gpu.yaml --vary workload=/dev/zero
# calibrate --for names the hardware the file is written for: it must exist
check "error: hardware 'no-such-box' not found" calibrate \
    hardware/calibration/measurements/dgx-h100.csv --hardware dgx-h100 --for no-such-box
echo "input_files: $failures failures"
[ "$failures" -eq 0 ]
