#!/bin/sh
# Outputs are safe: no command writes over a file its run read (scenario, hardware, workload,
# calibration, CSV inputs), by whatever path it is named; refused with exit 1 and the file left
# unchanged. --plot creates its directory but never a missing parent. calibrate writes where
# --output says and to standard output without it. Runs on a copy of the shipped data in a
# scratch directory, so that a failure cannot damage the source tree. Run from the repository
# root: tests/cli/outputs.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/outputs.sh SIMTRAIN}
case $bin in /*) ;; *) bin="$(pwd)/$bin" ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset SIMTRAIN_DATA
cp -R hardware workloads scenarios "$tmp/"
cp tests/validation/memory.csv "$tmp/runs.csv"
cd "$tmp" || exit 1
mkdir sums
failures=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}
# refused: name, the file that must stay unchanged, expected stderr line, then the command
refused() {
    name=$1 keep=$2 want=$3
    shift 3
    cp "$keep" sums/before
    "$@" >/dev/null 2>err
    rc=$?
    [ $rc -eq 1 ] && grep -qxF "$want" err ||
        fail "$name: exit $rc (want 1)
  want: $want
  got:  $(cat err)"
    cmp -s sums/before "$keep" || fail "$name: $keep was changed"
}
s=scenarios/ddp_8gpu.yaml
is_input="an input of this run"
refused "run --json onto the scenario" $s \
    "simtrain: error: refusing to write '$s': it is $is_input" "$bin" $s --json $s
refused "run --trace onto the scenario by another path" $s \
    "simtrain: error: refusing to write './scenarios/../$s': it is '$s', $is_input" \
    "$bin" $s --trace ./scenarios/../$s
ln -s "$tmp/$s" link.yaml
refused "run --json onto a symbolic link to the scenario" $s \
    "simtrain: error: refusing to write 'link.yaml': it is '$s', $is_input" "$bin" $s --json link.yaml
refused "run --json onto the workload" workloads/gpt2-1.5b.yaml \
    "simtrain: error: refusing to write 'workloads/gpt2-1.5b.yaml': it is $is_input" \
    "$bin" $s -q --json workloads/gpt2-1.5b.yaml
refused "run --json onto the hardware's calibration" hardware/calibration/dgx-h100.yaml \
    "simtrain: error: refusing to write 'hardware/calibration/dgx-h100.yaml': it is $is_input" \
    "$bin" $s -q --json hardware/calibration/dgx-h100.yaml
refused "standard output appended to the scenario" $s \
    "simtrain: error: refusing to write to standard output: it is '$s', $is_input" \
    sh -c "\"$bin\" $s >>$s"
refused "sweep --csv onto the scenario" $s \
    "simtrain sweep: error: refusing to write '$s': it is $is_input" \
    "$bin" sweep $s --vary training.micro_batch=8 --csv $s
refused "plan --json onto the scenario" $s \
    "simtrain plan: error: refusing to write '$s': it is $is_input" "$bin" plan $s --json $s
refused "validate --json onto its runs file" runs.csv \
    "simtrain validate: error: refusing to write 'runs.csv': it is $is_input" \
    "$bin" validate runs.csv --json runs.csv
m=hardware/calibration/measurements/dgx-h100.csv
refused "calibrate --output onto the shipped calibration" hardware/calibration/dgx-h100.yaml \
    "simtrain calibrate: error: refusing to write 'hardware/calibration/dgx-h100.yaml': it is $is_input" \
    "$bin" calibrate $m --hardware hardware/dgx-h100.yaml --no-collectives \
    --output hardware/calibration/dgx-h100.yaml
refused "calibrate --output onto its measurements" $m \
    "simtrain calibrate: error: refusing to write '$m': it is $is_input" \
    "$bin" calibrate $m --hardware hardware/dgx-h100.yaml --output $m
"$bin" $s -q --json out.json --trace out.json 2>err
rc=$?
[ $rc -eq 1 ] && grep -qxF "simtrain: error: 'out.json' is named for two outputs" err ||
    fail "--json and --trace to one file: exit $rc: $(cat err)"

# calibrate without --output: the file on standard output, the summary on standard error, and
# no file written anywhere
cp hardware/calibration/dgx-h100.yaml sums/cal
"$bin" calibrate $m --hardware hardware/dgx-h100.yaml --no-collectives >cal.yaml 2>err ||
    fail "calibrate to standard output: exit $?: $(cat err)"
head -n 1 cal.yaml | grep -q '^# Calibration of dgx-h100, written by `simtrain calibrate`' ||
    fail "calibrate standard output: $(head -n 1 cal.yaml)"
grep -q 'fitted parameters' err || fail "calibrate printed no summary on stderr"
cmp -s sums/cal hardware/calibration/dgx-h100.yaml || fail "calibrate changed the shipped file"
"$bin" calibrate $m --hardware hardware/dgx-h100.yaml --no-collectives --output new.yaml \
    >out 2>err || fail "calibrate --output new.yaml: exit $?"
grep -qxF "wrote new.yaml" out || fail "calibrate --output: $(cat out)"
cmp -s new.yaml cal.yaml || fail "calibrate --output and standard output differ"

# --plot: the directory itself is created, never a missing parent
for cmd in "$s -q" "sweep $s --vary training.micro_batch=8 -q" "validate runs.csv -q" \
    "collective --hardware dgx-h100 --sizes 1M:1M" "plan $s --top 1 -q"; do
    prog=simtrain
    case $cmd in sweep* | validate* | collective* | plan*) prog="simtrain ${cmd%% *}" ;; esac
    # shellcheck disable=SC2086
    "$bin" $cmd --plot missing/deeper/dir >/dev/null 2>err
    rc=$?
    [ $rc -eq 1 ] && grep -qxF "$prog: error: cannot create directory 'missing/deeper/dir': its parent 'missing/deeper' does not exist" err ||
        fail "$cmd --plot missing/deeper/dir: exit $rc: $(cat err)"
    [ -e missing ] && fail "$cmd --plot created 'missing'"
done
"$bin" $s -q --plot plotdir >/dev/null 2>&1 || fail "--plot plotdir: exit $?"
[ -f plotdir/breakdown.dat ] || fail "--plot plotdir: no breakdown.dat"

echo "outputs: $failures failures"
[ "$failures" -eq 0 ]
