#!/bin/sh
# The table of validation residuals that every prediction's interval comes from
# (hardware/calibration/error-bands.csv, src/report/band.h) is what the current model gives:
# regenerated from the shipped runs files it must equal the shipped table byte for byte. After
# a change that moves predictions, regenerate it with the one command
#   build/simtrain validate tests/validation/runs.csv tests/validation/runs-vtrain.csv -q \
#       --bands hardware/calibration/error-bands.csv
# (or UPDATE_BANDS=1 tests/cli/bands.sh build/simtrain) and commit it with the change. Then the
# flagship's --json must carry an interval around its step time with a basis of at least 5 runs.
# Run from the repository root.
set -u
bin=${1:?usage: tests/cli/bands.sh SIMTRAIN}
shipped=hardware/calibration/error-bands.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }
"$bin" validate tests/validation/runs.csv tests/validation/runs-vtrain.csv -q --bands "$tmp/bands.csv" ||
    fail "simtrain validate --bands exited with status $?"
if [ "${UPDATE_BANDS:-0}" = 1 ]; then
    cp "$tmp/bands.csv" "$shipped"
elif ! cmp -s "$tmp/bands.csv" "$shipped"; then
    echo "FAIL $shipped is stale: the current model gives other residuals (regenerate it, see above):"
    diff "$shipped" "$tmp/bands.csv" | head -10
    exit 1
fi
[ "$(wc -l <"$shipped")" -gt 900 ] || fail "$shipped has too few rows"

# The flagship: an interval around its step time, from at least 5 runs.
"$bin" scenarios/70b_256gpu.yaml --quiet --json "$tmp/run.json" || fail "flagship run: status $?"
tr -d ' \n\t' <"$tmp/run.json" >"$tmp/flat.json"
step=$(sed -n 's/.*"result":{"step_time_s":\([0-9.e+-]*\),.*/\1/p' "$tmp/flat.json")
lo=$(sed -n 's/.*"step_time_interval_s":\[\([0-9.e+-]*\),\([0-9.e+-]*\)\].*/\1/p' "$tmp/flat.json")
hi=$(sed -n 's/.*"step_time_interval_s":\[\([0-9.e+-]*\),\([0-9.e+-]*\)\].*/\2/p' "$tmp/flat.json")
n=$(sed -n 's/.*"interval_basis":{[^}]*}[^}]*"n":\([0-9]*\).*/\1/p' "$tmp/flat.json")
[ -n "$step" ] && [ -n "$lo" ] && [ -n "$hi" ] && [ -n "$n" ] || fail "flagship --json: no interval ($step, $lo, $hi, $n)"
awk -v s="$step" -v lo="$lo" -v hi="$hi" -v n="$n" 'BEGIN { exit !(lo <= s && s <= hi && lo < hi && n >= 5) }' ||
    fail "flagship: step $step s, interval [$lo, $hi], n $n"

# A user's own table (SIMTRAIN_DATA) replaces the shipped one; a regime no run is near says so.
mkdir -p "$tmp/data/hardware/calibration"
grep -e '^set,' -e ',hopper,' "$shipped" >"$tmp/data/hardware/calibration/error-bands.csv"
SIMTRAIN_DATA="$tmp/data" "$bin" scenarios/70b_256gpu.yaml --quiet --json "$tmp/user.json" ||
    fail "run with a user's table: status $?"
grep -q '"step_time_interval_s":[[:space:]]*null' "$tmp/user.json" ||
    fail "a table without a run near the flagship still gave it an interval"
grep -q 'no measured run near it\|fewer than 5 validation runs' "$tmp/user.json" ||
    fail "the flagship without an interval does not say why"
echo "bands: $(($(wc -l <"$shipped") - 1)) residuals, flagship step $step s in [$lo, $hi] (n $n)"
