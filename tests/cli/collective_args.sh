#!/bin/sh
# `simtrain collective` placements that do not fit the nodes: refused with a message (exit 1),
# never a crash; a --validate row that does not fit is skipped. Run from the repository root:
# tests/cli/collective_args.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/collective_args.sh SIMTRAIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}

# 64 GPUs on one 8-GPU node
"$bin" collective --hardware dgx-h100 --gpus 64 --nodes 1 --sizes 1M:1M >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q "64 GPUs do not split evenly over 1 node of 8 GPUs" "$tmp/err" ||
    fail "--gpus 64 --nodes 1: exit $rc: $(cat "$tmp/err")"
# what fits still runs
"$bin" collective --hardware dgx-h100 --gpus 8 --nodes 1 --sizes 1M:1M >"$tmp/out" 2>&1 ||
    fail "--gpus 8 --nodes 1: exit $?"
grep -q '8 GPUs = 1 node x 8' "$tmp/out" || fail "--gpus 8 --nodes 1: $(head -n 1 "$tmp/out")"

# a measurement of 16 GPUs on one 8-GPU node
printf 'source,gpu,num_gpus,num_nodes,message_size_bytes,algorithm,metric_name,metric_value,notes\n' \
    >"$tmp/v.csv"
printf 'test,DGX-H100,16,1,1073741824,,measured_busbw,400,\n' >>"$tmp/v.csv"
"$bin" collective --validate "$tmp/v.csv" >"$tmp/out" 2>&1 || fail "--validate exit $?"
grep -q 'skipped: more GPUs than its nodes hold' "$tmp/out" ||
    fail "--validate did not skip the row: $(cat "$tmp/out")"

# the nccl-tests harness mode: a word simtrain does not know is refused (exit 2), the known
# ones run and say which harness they model
"$bin" collective --hardware dgx-h100 --gpus 8 --sizes 1K:1K --launch bogus >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "simtrain collective: error: --launch takes 'per-rank' or 'single-process', got 'bogus'" "$tmp/err" ||
    fail "--launch bogus: exit $rc: $(cat "$tmp/err")"
"$bin" collective --hardware dgx-h100 --gpus 8 --sizes 1K:1K --launch single-process >"$tmp/out" \
    2>&1 || fail "--launch single-process: exit $?"
grep -q '^# harness:' "$tmp/out" || fail "--launch single-process: no harness line"

echo "collective_args: $failures failures"
[ "$failures" -eq 0 ]
