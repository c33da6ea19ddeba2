#!/bin/sh
# `simtrain memory`'s limits and `simtrain plan`'s goals through the real command line: the
# limits in text and JSON (each one confirmed by the run itself at the limit and one step past
# it), the plan goal's answer and the count below it, and every bad value of the new flags
# refused with the flag named (exit 2), impossible goals with their figures (exit 3).
# Run from the repository root: tests/cli/limits_goals.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/limits_goals.sh SIMTRAIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}
q=scenarios/qlora_7b_4090.yaml

# memory: three limits in the text, the same in the JSON
"$bin" memory "$q" --no-what-if >"$tmp/mem.txt" 2>"$tmp/err" || fail "memory exit $?: $(cat "$tmp/err")"
for w in 'largest micro-batch' 'longest sequence' 'fewest GPUs' 'Effective batch' 'by module'; do
    grep -q "$w" "$tmp/mem.txt" || fail "memory text lacks '$w'"
done
"$bin" memory "$q" --json "$tmp/mem.json" -q || fail "memory --json exit $?"
grep -q '"seq_len": {"searched": true, "found": true' "$tmp/mem.json" || fail "memory JSON limits"
# the limits from the text: "at the largest micro-batch (13): 13 x 16 x 1 = 208 sequences"
line=$(grep 'at the largest micro-batch' "$tmp/mem.txt")
mbv=$(echo "$line" | sed 's/.*(\([0-9]*\)).*/\1/')
acc=$(echo "$line" | sed 's/.*): [0-9]* x \([0-9]*\) x.*/\1/')
dp=$(echo "$line" | sed 's/.*): [0-9]* x [0-9]* x \([0-9]*\) =.*/\1/')
gb=$((mbv * acc * dp))
mbp=$((mbv + 1))
gbp=$((mbp * acc * dp))
seqv=$(grep 'at the longest sequence' "$tmp/mem.txt" | sed 's/.*(\([0-9,]*\)).*/\1/' | tr -d ,)
step=$(grep 'Sequence lengths on a grid of' "$tmp/mem.txt" | sed 's/.*grid of \([0-9,]*\) tokens.*/\1/' | tr -d ,)
smb=$(grep 'Sequence lengths on a grid of' "$tmp/mem.txt" | sed 's/.*at micro-batch \([0-9]*\).*/\1/')
seqp=$((seqv + step))
grep -q "largest micro-batch .* $mbp: " "$tmp/mem.txt" || fail "memory: one step past is not $mbp"
# the run itself: fits (exit 0) at each limit, does not (exit 3) one step past it
"$bin" "$q" -q --set training.micro_batch="$mbv" --set training.global_batch="$gb" ||
    fail "micro-batch $mbv: exit $?, want 0 (fits)"
"$bin" "$q" -q --set training.micro_batch="$mbp" --set training.global_batch="$gbp" 2>/dev/null
[ $? -eq 3 ] || fail "micro-batch $mbp: want exit 3 (out of memory)"
"$bin" "$q" -q --set training.seq_len="$seqv" --set training.micro_batch="$smb" ||
    fail "sequence $seqv: exit $?, want 0 (fits)"
"$bin" "$q" -q --set training.seq_len="$seqp" --set training.micro_batch="$smb" 2>/dev/null
[ $? -eq 3 ] || fail "sequence $seqp: want exit 3 (out of memory)"

# plan --days: an answer, and the count below it misses
d=scenarios/ddp_16gpu_2node.yaml
"$bin" plan "$d" --tokens 200G --days 1 --top 1 --json "$tmp/goal.json" >"$tmp/goal.txt" 2>"$tmp/err" ||
    fail "plan --days exit $?: $(cat "$tmp/err")"
grep -q 'Fewest GPUs that meet 1 day' "$tmp/goal.txt" || fail "plan --days: no answer line"
grep -q 'misses it' "$tmp/goal.txt" || fail "plan --days: no line for the count below"
grep -q '"answer": {"gpus": ' "$tmp/goal.json" && grep -q '"below": {"gpus": .*"meets": false}' "$tmp/goal.json" ||
    fail "plan --days JSON: answer and below"

# impossible goals: exit 3 with the figure
"$bin" plan "$q" --tokens 1T --days 1 >/dev/null 2>"$tmp/err"
[ $? -eq 3 ] && grep -q '100 % MFU' "$tmp/err" || fail "impossible deadline: $(cat "$tmp/err")"
"$bin" plan "$d" --budget 1 --price 2 >/dev/null 2>"$tmp/err"
[ $? -eq 3 ] && grep -q 'even at 100 % MFU' "$tmp/err" || fail "tiny budget: $(cat "$tmp/err")"
"$bin" plan "$q" --days 3 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q -- '--tokens N or training.tokens' "$tmp/err" || fail "no tokens: $(cat "$tmp/err")"
"$bin" plan "$d" --budget 1M >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q -- '--price' "$tmp/err" || fail "no price: $(cat "$tmp/err")"

# bad values and combinations: exit 2, the flag named
for args in "--tokens 0" "--tokens -5" "--tokens abc" "--tokens 1e400" "--days 0" "--days x" \
    "--days 2e6" "--budget 0" "--budget -1" "--budget 2Q" "--price 0" "--price nan" \
    "--days 1 --gpus 8" "--days 1 --shard 0/2"; do
    # shellcheck disable=SC2086
    "$bin" plan "$d" $args >/dev/null 2>"$tmp/err"
    rc=$?
    flag=${args%% *}
    [ "$rc" -eq 2 ] && grep -q -- "$flag" "$tmp/err" || fail "plan $args: exit $rc: $(head -n 1 "$tmp/err")"
done
"$bin" plan --merge "$tmp/x.csv" --days 1 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- '--merge' "$tmp/err" || fail "plan --merge --days: $(head -n 1 "$tmp/err")"
"$bin" memory "$q" --bogus >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "memory --bogus: want exit 2"

# pictures: the data files always, the charts where gnuplot is installed
"$bin" memory "$q" --no-what-if --plot "$tmp/mplot" -q 2>/dev/null || fail "memory --plot exit $?"
[ -s "$tmp/mplot/limits.dat" ] || fail "memory --plot: no limits.dat"
"$bin" plan scenarios/70b_8gpu_finetune.yaml --top 2 --plot "$tmp/pplot" -q 2>/dev/null ||
    fail "plan --plot exit $?"
grep -q 'Pareto' "$tmp/pplot/plan_pareto.dat" || fail "plan --plot: no plan_pareto.dat"
if command -v gnuplot >/dev/null 2>&1; then
    [ -s "$tmp/mplot/limits.png" ] || fail "memory --plot: no limits.png"
    [ -s "$tmp/pplot/plan_pareto.png" ] || fail "plan --plot: no plan_pareto.png"
fi

echo "limits_goals: $failures failures"
[ "$failures" -eq 0 ]
