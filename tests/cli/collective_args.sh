#!/bin/sh
# `simtrain collective` placements that do not fit the nodes, uneven placements not asked for and
# algorithms the hardware lacks: refused with a message naming the option (exit 1), never a
# crash or a silent substitute; a --validate row that does not fit is skipped. Run from the repository root:
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

# exact refusals (exit 1) of what used to run something else silently
refused() { # name, expected stderr line, then the arguments
    name=$1 want=$2
    shift 2
    "$bin" collective "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] && grep -qxF "$want" "$tmp/err" ||
        fail "$name: exit $rc (want 1)
  want: $want
  got:  $(cat "$tmp/err")"
}
refused "--algo nvls on a PCIe workstation" \
    "simtrain collective: error: --algo nvls needs an NVSwitch system of the Hopper generation or later, which 'ws-4x-rtx4090' is not" \
    --hardware ws-4x-rtx4090 --algo nvls --sizes 1M:1M
refused "--algo nvls_tree on an A100 system" \
    "simtrain collective: error: --algo nvls_tree needs an NVSwitch system of the Hopper generation or later, which 'dgx-a100-80g' is not" \
    --hardware dgx-a100-80g --algo nvls_tree --sizes 1M:1M
refused "--gpus 12 on 8-GPU nodes" \
    "simtrain collective: error: --gpus 12 is not a whole number of 8-GPU nodes: give --nodes M to place 12/M GPUs on each of M nodes" \
    --hardware dgx-h100 --gpus 12 --sizes 1M:1M
# what is asked for runs, and the header says what it is
header() { # expected first line, then the arguments
    want=$1
    shift
    "$bin" collective "$@" >"$tmp/out" 2>"$tmp/err" || fail "collective $*: exit $?: $(cat "$tmp/err")"
    [ "$(head -n 1 "$tmp/out")" = "$want" ] || fail "collective $*: $(head -n 1 "$tmp/out")"
}
header "# simtrain collective: all_reduce on dgx-h100, 12 GPUs = 2 nodes x 6, rail-aligned" \
    --hardware dgx-h100 --gpus 12 --nodes 2 --sizes 1M:1M
header "# simtrain collective: all_reduce on dgx-h100, 1 GPU = 1 node x 1" \
    --hardware dgx-h100 --gpus 1 --sizes 1M:1M
header "# simtrain collective: all_reduce on dgx-h100, 16 GPUs = 2 nodes x 8, rail-aligned" \
    --hardware dgx-h100 --nodes 2 --sizes 1M:1M
"$bin" collective --hardware dgx-h100 --algo nvls --sizes 1G:1G >"$tmp/out" 2>&1 ||
    fail "--algo nvls on dgx-h100: exit $?"
grep -q ' nvls/' "$tmp/out" || fail "--algo nvls on dgx-h100 did not run NVLS: $(tail -n 1 "$tmp/out")"

echo "collective_args: $failures failures"
[ "$failures" -eq 0 ]
