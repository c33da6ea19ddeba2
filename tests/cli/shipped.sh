#!/bin/sh
# Every shipped scenario through the commands a user runs first, in whatever build runs this
# (tests/check.sh runs it under clang's ASan + UBSan + float-cast-overflow, where any finding
# aborts): the report (exit 0, or 3 where the scenario says it does not fit), `memory`, `plan`
# on the small scenarios, and `--ranks all` on every scenario of at most 64 GPUs, whose
# per-GPU communication counts must equal the symmetric run's. Run from the repository root:
# tests/cli/shipped.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/shipped.sh SIMTRAIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
runs=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}

# ok NAME WANT_RC ARG...: simtrain ARG... exits WANT_RC; stderr holds at most the fit verdict
ok() {
    name=$1 want=$2
    shift 2
    runs=$((runs + 1))
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "$name: exit $rc (want $want): $(head -c 400 "$tmp/err")"
    elif grep -v "does not fit\|^ *[0-9]* |\|^ *|\|^simtrain sweep: \|^simtrain plan: " \
        "$tmp/err" | grep -q .; then
        fail "$name: unexpected stderr: $(head -c 400 "$tmp/err")"
    fi
}

for f in scenarios/*.yaml; do
    name=$(basename "$f" .yaml)
    want=0
    grep -qi "does not fit" "$f" && want=3 # teaching scenarios that show the verdict
    ok "$name" $want "$f"
    ok "memory $name" $want memory "$f"
    gpus=$("$bin" "$f" --json - --quiet 2>/dev/null | sed -n 's/^[[:space:]]*"gpus":[[:space:]]*\([0-9]*\).*/\1/p' | head -n 1)
    if [ -n "$gpus" ] && [ "$gpus" -le 64 ]; then
        ok "$name --ranks all" $want "$f" --ranks all
        grep ' each (x' "$tmp/out" >"$tmp/all"
        "$bin" "$f" 2>/dev/null | grep ' each (x' >"$tmp/stage"
        cmp -s "$tmp/all" "$tmp/stage" ||
            fail "$name: per-GPU collective counts differ under --ranks all: $(diff "$tmp/stage" "$tmp/all" | head -n 4)"
    fi
done
for name in gpt2_1gpu ddp_8gpu sharding_7b_8gpu; do
    ok "plan $name" 0 plan "scenarios/$name.yaml" --top 3
done
[ $failures -eq 0 ] || exit 1
echo "shipped: $runs runs ok"
