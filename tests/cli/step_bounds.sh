#!/bin/sh
# The step-range estimates of config/step_range.c are lower bounds: a key refused because it
# makes "one step last at least X s" must never refuse a scenario the simulator would answer.
# For each (scenario, key): a value far past the limit is refused at the key (its line names
# the count or the bytes behind the estimate); the value that puts the estimate at half the
# limit (500000 s) must then be accepted by the check and simulate to a step of at least
# that much, or be refused by the engine's own limit (a step past 1e6 s) - never at the key.
# Run from the repository root: tests/cli/step_bounds.sh SIMTRAIN
set -u
bin=${1:?usage: tests/cli/step_bounds.sh SIMTRAIN}
SIMTRAIN_DATA=tests/fixtures
export SIMTRAIN_DATA
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cases=0
failures=0
minimal=tests/fixtures/scenarios/minimal.yaml

fail() {
    printf 'FAIL %s\n' "$1"
    failures=$((failures + 1))
}

# check SCENARIO KEY FAR_VALUE: the half-limit value comes from the refusal's own figures
check() {
    scen=$1 key=$2 far=$3
    cases=$((cases + 1))
    line=$("$bin" "$scen" --set "$key=$far" 2>&1 >/dev/null | head -n 1)
    case $line in
    *"makes one step last at least"*) ;;
    *)
        fail "$scen $key=$far: not refused at the key: $line"
        return
        ;;
    esac
    # a time per item x N items, or a rate over an amount: the value for 500000 s
    half=$(printf '%s\n' "$line" | awk '
        match($0, /per [^,]*, [0-9.e+]+ of them/) {
            s = substr($0, RSTART, RLENGTH); sub(/ of them/, "", s); sub(/.*, /, "", s)
            printf "%.9g s\n", 500000 / s; exit
        }
        match($0, /for [0-9.e+]+ B on/) {
            s = substr($0, RSTART + 4, RLENGTH - 9)
            match($0, /bandwidth of [0-9.]+ [kMGT]?B\/s/)
            r = substr($0, RSTART + 13, RLENGTH - 13); split(r, p, " ")
            u = p[2] ~ /^k/ ? 1e3 : p[2] ~ /^M/ ? 1e6 : p[2] ~ /^G/ ? 1e9 : 1
            # the rate is bandwidth x efficiency: scale the key by rate ratio
            printf "%.9g\n", (s / 500000) / (p[1] * u); exit
        }
        match($0, /for [0-9.e+]+ trainable/) {
            s = substr($0, RSTART + 4, RLENGTH - 14)
            printf "%.9g param/s\n", s / 500000; exit
        }')
    case $key in
    *memory_bandwidth) half=$(awk -v f="$half" -v v="${far% *}" -v u="${far#* }" 'BEGIN {
        m = u ~ /^k/ ? 1e3 : u ~ /^M/ ? 1e6 : u ~ /^G/ ? 1e9 : 1
        printf "%.9g B/s\n", f * v * m }') ;;
    esac
    [ -n "$half" ] || {
        fail "$scen $key: cannot read the estimate from: $line"
        return
    }
    "$bin" "$scen" --set "$key=$half" --json "$T/r.json" >/dev/null 2>"$T/err"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        grep -q 'the step lasts longer than' "$T/err" ||
            fail "$scen $key=$half: refused (exit $rc): $(head -n 1 "$T/err")"
        return
    fi
    step=$(sed -n 's/.*"step_time_s":[[:space:]]*\([0-9.e+-]*\).*/\1/p' "$T/r.json" | head -n 1)
    awk -v s="$step" 'BEGIN { exit !(s >= 495000) }' ||
        fail "$scen $key=$half: a step of $step s, below the 500000 s the estimate promised"
}

for scen in $minimal scenarios/sharding_offload_13b_1gpu.yaml scenarios/mixtral_8x7b_64gpu.yaml \
    scenarios/qlora_7b_4090.yaml scenarios/70b_256gpu_tp4pp8.yaml scenarios/torchtitan_70b_pp8.yaml; do
    for key in hardware.efficiency.launch host.kernel_launch host.python_op host.autograd_node; do
        check "$scen" "$key" '999999 s'
    done
done
check "$minimal" hardware.efficiency.gemm_latency '999999 s'
check scenarios/qlora_7b_4090.yaml hardware.efficiency.gemm_latency '999999 s'
check scenarios/70b_256gpu_tp4pp8.yaml hardware.gpu.memory_bandwidth '1 MB/s'
check scenarios/sharding_offload_13b_1gpu.yaml hardware.node.host.adam_throughput '1 kparam/s'

echo "step_bounds: $cases cases, $failures failures"
[ "$failures" -eq 0 ]
