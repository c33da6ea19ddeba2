#!/bin/sh
# `simtrain sweep`, `simtrain plan` and `--plot` through the real command line, on the test
# fixtures (tiny-llama on 8-GPU tiny-box nodes): outputs exist and agree, shards merge to the
# whole, bad input fails with a message. Charts are checked only where gnuplot is installed.
# Run from the repository root: tests/cli/whatif.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/whatif.sh SIMTRAIN}
SIMTRAIN_DATA=tests/fixtures
export SIMTRAIN_DATA
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}
cat >"$tmp/s.yaml" <<'YAML'
name: whatif_cli
hardware: tiny-box
workload: tiny-llama
cluster:
  nodes: 1
training:
  seq_len: 1024
  global_batch: 64
  micro_batch: 2
  tokens: 10G
  price_per_gpu_hour: 2
parallelism:
  dp: 8
YAML
s="$tmp/s.yaml"
vary="--vary cluster.nodes=1,2,4 --vary training.recompute=none,full"

# sweep: CSV with a header and one row per point, JSON, a table
"$bin" sweep "$s" $vary --csv "$tmp/all.csv" --json "$tmp/all.json" >"$tmp/table.txt" 2>"$tmp/err" ||
    fail "sweep exit $?: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/all.csv")" -eq 7 ] || fail "sweep CSV has $(wc -l <"$tmp/all.csv") lines, want 7"
head -n 1 "$tmp/all.csv" | grep -q '^index,cluster.nodes,training.recompute,status,' ||
    fail "sweep CSV header: $(head -n 1 "$tmp/all.csv")"
grep -q '"points"' "$tmp/all.json" || fail "sweep JSON has no points"
grep -q 'strong' "$tmp/table.txt" || fail "sweep table has no efficiency column"

# the number of points first, on stderr; rows are the same streamed to standard output
grep -qxF "simtrain sweep: 6 points (3 x 2)" "$tmp/err" || fail "sweep count line: $(head -n 1 "$tmp/err")"
"$bin" sweep "$s" $vary --csv - 2>/dev/null | cmp -s - "$tmp/all.csv" ||
    fail "sweep --csv - differs from --csv FILE"
# more than 10,000 points: refused (exit 1, nothing simulated) unless --force
many=$(seq -s, 1 101)
"$bin" sweep "$s" --vary training.tokens="$many" --vary training.price_per_gpu_hour="$many" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -qxF "simtrain sweep: error: 10201 points (101 x 101) exceed the limit of 10000: each point is a simulation; narrow the axes, split the sweep with --shard K/N, or pass --force" "$tmp/err" ||
    fail "10201-point sweep: exit $rc: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "10201-point sweep printed rows"
"$bin" sweep "$s" --vary training.tokens="$many" --vary training.price_per_gpu_hour="$many" \
    --force --shard 0/5000 --csv "$tmp/forced.csv" -q 2>"$tmp/err" || fail "--force exit $?"
[ "$(wc -l <"$tmp/forced.csv")" -eq 4 ] || fail "--force --shard 0/5000: $(wc -l <"$tmp/forced.csv") lines, want 3 points and a header"

# shards: three job-array tasks, merged, give the same points and numbers
for k in 0 1 2; do
    "$bin" sweep "$s" $vary --shard "$k/3" --csv "$tmp/part$k.csv" -q 2>/dev/null ||
        fail "sweep shard $k/3"
done
"$bin" sweep --merge "$tmp/part0.csv" "$tmp/part1.csv" "$tmp/part2.csv" --csv "$tmp/merged.csv" \
    -q || fail "sweep --merge exit $?"
cut -d, -f1-4,16 "$tmp/all.csv" >"$tmp/a.cut"
cut -d, -f1-4,16 "$tmp/merged.csv" >"$tmp/m.cut"
cmp -s "$tmp/a.cut" "$tmp/m.cut" || fail "merged shards differ from the whole sweep"

# plan: five layouts that fit, with the rejected counted by reason
"$bin" plan "$s" --top 5 --csv "$tmp/plan.csv" >"$tmp/plan.txt" 2>"$tmp/err" ||
    fail "plan exit $?: $(cat "$tmp/err")"
grep -q '^  5 ' "$tmp/plan.txt" || fail "plan did not list five layouts"
grep -q 'Rejected' "$tmp/plan.txt" || fail "plan printed no rejection counts"
grep -q 'divisibility' "$tmp/plan.txt" || fail "plan printed no divisibility count"
for k in 0 1; do
    "$bin" plan "$s" --top 3 --shard "$k/2" --csv "$tmp/plan$k.csv" -q || fail "plan shard $k/2"
done
"$bin" plan --merge "$tmp/plan0.csv" "$tmp/plan1.csv" --top 3 >"$tmp/merge.txt" ||
    fail "plan --merge exit $?"
grep -q '^  3 ' "$tmp/merge.txt" || fail "plan --merge did not rank three layouts"

# bad input
"$bin" sweep "$s" --vary parallelism.tpp=1,2 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "tpp" "$tmp/err" || fail "unknown --vary key: $(cat "$tmp/err")"
"$bin" sweep "$s" $vary --shard 3/3 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "--shard 3/3 accepted"
"$bin" plan "$s" --gpus 12 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "12 GPUs" "$tmp/err" || fail "plan --gpus 12: $(cat "$tmp/err")"

# pictures
if command -v gnuplot >/dev/null 2>&1; then
    "$bin" "$s" --quiet --plot "$tmp/run" 2>/dev/null || fail "run --plot exit $?"
    for n in breakdown memory timeline pipeline memory_timeline; do
        [ -s "$tmp/run/$n.png" ] && [ -s "$tmp/run/$n.svg" ] || fail "run --plot: no $n.png/.svg"
    done
    "$bin" sweep "$s" $vary --plot "$tmp/sweep" -q 2>/dev/null || fail "sweep --plot exit $?"
    [ -s "$tmp/sweep/scaling.png" ] || fail "sweep --plot: no scaling.png"
    [ -s "$tmp/sweep/sweep_breakdown.png" ] || fail "sweep --plot: no sweep_breakdown.png"
    "$bin" plan "$s" --top 3 --plot "$tmp/plan" -q 2>/dev/null || fail "plan --plot exit $?"
    [ -s "$tmp/plan/plan.png" ] && [ -s "$tmp/plan/plan_top.png" ] || fail "plan --plot: no png"
else
    echo "whatif: gnuplot not installed, pictures not checked"
fi

echo "whatif: $failures failures"
[ "$failures" -eq 0 ]
