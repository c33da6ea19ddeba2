#!/bin/sh
# Traces are complete or say why not: --trace records every simulated rank (80 here, beyond
# the 64 it used to keep silently); --trace-ranks LIST keeps only those, says so on stderr and
# in the trace ("otherData"); a bad list is refused with the flag named; a trace too large to
# write (the 405B job's 16,384 ranks) is refused before the step runs, pointing at
# --trace-ranks. Run from the repository root: tests/cli/trace_ranks.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/trace_ranks.sh SIMTRAIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}
# expect NAME RC 'first stderr line' -- command...
expect() {
    name=$1 rc_want=$2 want=$3
    shift 4
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    got=$(head -n 1 "$tmp/err")
    [ $rc -eq "$rc_want" ] && [ "$got" = "$want" ] ||
        fail "$name: exit $rc (want $rc_want): '$got' (want '$want')"
}
big="scenarios/ddp_16gpu_2node.yaml --set cluster.nodes=10 --set parallelism.dp=80 --set training.global_batch=640"

# shellcheck disable=SC2086 # $big is a list of arguments
expect all80 0 "" -- "$bin" $big --quiet --ranks all --trace "$tmp/all.json"
n=$(grep -c '"name":"process_name"' "$tmp/all.json")
[ "$n" -eq 80 ] || fail "all80: $n ranks declared, want 80"
grep -q otherData "$tmp/all.json" && fail "all80: a complete trace names a subset"
for r in 0 64 79; do
    grep -q "{\"ph\":\"X\",\"pid\":$r," "$tmp/all.json" || fail "all80: rank $r has no task"
done

# shellcheck disable=SC2086
expect subset 0 "simtrain: note: the trace keeps ranks 0-7,64 (9 of 80 simulated ranks)" -- \
    "$bin" $big --quiet --ranks all --trace "$tmp/sub.json" --trace-ranks 64,0-7
grep -q '"otherData":{"trace_ranks":"0-7,64","traced_ranks":9,"simulated_ranks":80}}' \
    "$tmp/sub.json" || fail "subset: no otherData naming the kept ranks"
n=$(grep -c '"name":"process_name"' "$tmp/sub.json")
[ "$n" -eq 9 ] || fail "subset: $n ranks declared, want 9"
grep -q '"pid":8,' "$tmp/sub.json" && fail "subset: rank 8 is in the trace"

expect symmetric 0 \
    "simtrain: note: the trace keeps ranks 0 (1 of 1 simulated ranks; --ranks all simulates every rank)" \
    -- "$bin" scenarios/ddp_8gpu.yaml --quiet --trace "$tmp/sym.json" --trace-ranks 0-3
expect range 1 "simtrain: error: --trace-ranks: rank 8 is out of range: the job has 8 ranks (0-7)" \
    -- "$bin" scenarios/ddp_8gpu.yaml --quiet --trace "$tmp/x.json" --trace-ranks 0-8
expect syntax 1 \
    "simtrain: error: --trace-ranks: 'all' is not a rank or a range of ranks (expected a list such as 0-7,64)" \
    -- "$bin" scenarios/ddp_8gpu.yaml --quiet --trace "$tmp/x.json" --trace-ranks all
expect empty 1 "simtrain: error: --trace-ranks: range '5-2' is empty (5 > 2)" \
    -- "$bin" scenarios/ddp_8gpu.yaml --quiet --trace "$tmp/x.json" --trace-ranks 5-2
expect alone 2 "simtrain: error: --trace-ranks needs --trace, --plot or --html" \
    -- "$bin" scenarios/ddp_8gpu.yaml --quiet --trace-ranks 0
expect novalue 2 "simtrain: error: --trace-ranks needs a value (LIST)" \
    -- "$bin" scenarios/ddp_8gpu.yaml --trace "$tmp/x.json" --trace-ranks
expect huge 1 "scenarios/405b_16k.yaml: error: a trace of 16384 ranks would take about 13 GiB, more than the 4 GiB a trace may take; choose fewer ranks with --trace-ranks (for example --trace-ranks 0-7)" \
    -- "$bin" scenarios/405b_16k.yaml --quiet --ranks all --trace "$tmp/x.json"
[ -e "$tmp/x.json" ] && fail "a refused trace left a file"

[ $failures -eq 0 ] || exit 1
echo "trace ranks: ok"
