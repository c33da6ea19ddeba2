#!/bin/bash
# ab_wall.sh - wall time of whole simtrain processes, for comparing builds on a noisy machine.
# Usage: tests/bench/ab_wall.sh N BINARY... -- ARGS...
# Runs every BINARY with ARGS, in turn, N times (interleaved, so all see the same noise),
# and prints per binary the median and the minimum wall time in ms. Output goes to /dev/null.
# Example (docs/performance.md):
#   tests/bench/ab_wall.sh 21 /tmp/simtrain-before build/simtrain -- scenarios/70b_256gpu.yaml
set -euo pipefail

if [ $# -lt 4 ]; then
    echo "usage: $0 N BINARY... -- ARGS..." >&2
    exit 2
fi
n=$1
shift
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    bins+=("$1")
    shift
done
[ $# -gt 0 ] && shift # the "--"

declare -A times
for ((i = 0; i < n; i++)); do
    for b in "${bins[@]}"; do
        t0=$(date +%s%N)
        "$b" "$@" > /dev/null 2>&1 || true
        t1=$(date +%s%N)
        times[$b]+="$(((t1 - t0) / 1000)) "
    done
done
for b in "${bins[@]}"; do
    # shellcheck disable=SC2086
    printf '%s\n' ${times[$b]} | sort -n | awk -v name="$b" '
        { v[NR] = $1 }
        END {
            med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%-40s median %7.1f ms   min %7.1f ms   (%d runs)\n", name, med / 1000, v[1] / 1000, NR
        }'
done
