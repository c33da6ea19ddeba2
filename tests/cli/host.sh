#!/bin/sh
# Host costs end to end (docs/host.md): `simtrain calibrate --host` on synthetic runs made from
# known host costs recovers them; `validate --profile-overlay` applies what calibrate writes;
# calibrate refuses a runs file whose set column fixes a fitted cost; a bad overlay is reported
# at its place. Rows: 12 single-node Megatron-DeepSpeed configurations of
# tests/validation/runs-vtrain.csv (the first of each layer count and micro-batch).
# Run from the repository root: tests/cli/host.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/host.sh SIMTRAIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL $*"
    exit 1
}
src=tests/validation/runs-vtrain.csv
# the header, then 12 single-node rows, their quoted source and notes emptied (no commas inside)
head -1 "$src" >"$tmp/rows.csv"
grep '^vtrain-single-00[0-9][0-9],' "$src" | head -12 | sed 's/"[^"]*"//g' >>"$tmp/rows.csv"
[ "$(wc -l <"$tmp/rows.csv")" -eq 13 ] || fail "fixture rows"
cat >"$tmp/known.yaml" <<'YAML'
host:
  python_op: 50 us
  step: 8 ms
YAML
"$bin" validate "$tmp/rows.csv" --profile-overlay "$tmp/known.yaml" >"$tmp/known.txt" ||
    fail "validate --profile-overlay"
# synthetic measurements: each row's value (column 31) replaced by its prediction under the
# known costs
col=$(head -1 "$tmp/rows.csv" | tr ',' '\n' | grep -n '^value$' | cut -d: -f1)
awk -F, -v OFS=, -v col="$col" '
     NR == FNR { if ($0 ~ /^vtrain-/) { split($0, w, " +"); if (w[2] == "step_time_s") p[w[1]] = w[4] } next }
     FNR == 1 { print; next }
     { if (!($1 in p)) exit 1; $col = p[$1]; print }' "$tmp/known.txt" "$tmp/rows.csv" \
    >"$tmp/synthetic.csv" || fail "synthetic rows"
"$bin" calibrate "$tmp/synthetic.csv" --host python_op,step --output "$tmp/fit.yaml" \
    >"$tmp/fit.txt" 2>&1 || { cat "$tmp/fit.txt"; fail "calibrate --host"; }
awk '/^  python_op:/ { v = $2 + 0; if (v < 49.5 || v > 50.5) bad = 1; seen++ }
     /^  step:/ { v = $2 + 0; if (v < 7900 || v > 8100) bad = 1; seen++ }
     END { exit bad || seen != 2 }' "$tmp/fit.yaml" || { cat "$tmp/fit.yaml"; fail "recovery"; }
"$bin" validate "$tmp/synthetic.csv" --profile-overlay "$tmp/fit.yaml" >"$tmp/check.txt" ||
    fail "validate the fit"
awk '$1 ~ /^vtrain-/ && $2 == "step_time_s" { e = $5 + 0; if (e < 0) e = -e; if (e > 0.5) bad = 1; n++ }
     END { exit bad || n != 12 }' "$tmp/check.txt" || { cat "$tmp/check.txt"; fail "refit error"; }
# a set column that fixes a fitted cost is refused
sed '1s/$/,set/; 2s/$/,host.python_op=3us/; 3,$s/$/,/' "$tmp/rows.csv" >"$tmp/set.csv"
if "$bin" calibrate "$tmp/set.csv" --host python_op >"$tmp/set.txt" 2>&1; then
    fail "calibrate accepted a set column fixing host.python_op"
fi
grep -q "set.csv:2: error: the set column fixes 'host.python_op'" "$tmp/set.txt" ||
    { cat "$tmp/set.txt"; fail "set-column message"; }
# a bad overlay names its place
printf 'host:\n  python_op: 5 parsecs\n' >"$tmp/bad.yaml"
if "$bin" validate "$tmp/rows.csv" --profile-overlay "$tmp/bad.yaml" >"$tmp/bad.txt" 2>&1; then
    fail "validate accepted a bad overlay"
fi
grep -q "bad.yaml:2:14: error:" "$tmp/bad.txt" || { cat "$tmp/bad.txt"; fail "overlay message"; }
printf 'host:\n  python_opp: 5 us\n' >"$tmp/bad2.yaml"
"$bin" validate "$tmp/rows.csv" --profile-overlay "$tmp/bad2.yaml" >"$tmp/bad2.txt" 2>&1 &&
    fail "validate accepted an unknown overlay key"
grep -q "bad2.yaml:2:3: error:" "$tmp/bad2.txt" || { cat "$tmp/bad2.txt"; fail "unknown key message"; }
if "$bin" calibrate "$tmp/rows.csv" --host nothing >"$tmp/k.txt" 2>&1; then
    fail "calibrate accepted an unknown key"
fi
grep -q "'nothing' is not a host cost" "$tmp/k.txt" || fail "unknown key"
echo "ok host"
