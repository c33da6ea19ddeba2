#!/bin/bash
# run.sh - the figures of docs/performance.md's issue-29 table, for one binary: CPU seconds
# (user + system, best of N, /usr/bin/time), peak memory, and instruction counts (valgrind
# callgrind, exact and repeatable) where valgrind is installed.
# Usage: tests/bench/run.sh [SIMTRAIN] [RUNS.csv] [N]   (run from the repository root)
#   SIMTRAIN  default build/simtrain
#   RUNS.csv  the runs file `validate` is timed on (default tests/validation/runs.csv)
#   N         repeats per timed command (default 3; the best is printed)
# Environment: JOBS=1 (the default) times validate and sweep on one core (--jobs 1);
# SKIP_ALL=1 leaves out the 405B `--ranks all` run (about 18 s before issue 29);
# SKIP_CALLGRIND=1 leaves out the instruction counts.
# Not a test: nothing here fails on a slow machine.
set -euo pipefail

bin=${1:-build/simtrain}
runs=${2:-tests/validation/runs.csv}
n=${3:-3}
jobs=${JOBS:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# best_cpu CMD...: best user+system seconds of n runs, and the peak RSS (KiB) of that run.
best_cpu() {
    local best="" rss="" i t m
    for ((i = 0; i < n; i++)); do
        /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$@" > /dev/null 2>&1 || true
        read -r u s m < "$tmp/time"
        t=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$t
            rss=$m
        fi
    done
    echo "$best $rss"
}

# instructions CMD...: instructions of the whole process (callgrind), in millions.
instructions() {
    if [ "${SKIP_CALLGRIND:-0}" = 1 ] || ! command -v valgrind > /dev/null; then
        echo "-"
        return
    fi
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$@" > /dev/null 2> "$tmp/cg.err" ||
        true
    awk '/^summary:/ { printf "%.1f", $2 / 1e6 }' "$tmp/cg"
}

rows=$(($(grep -c '' "$runs") - 1))
jobarg=()
if "$bin" validate --help 2>&1 | grep -q -- --jobs; then
    jobarg=(--jobs "$jobs") # binaries before issue 29 have no --jobs and run on one core
fi
sweep=(sweep scenarios/70b_256gpu.yaml --vary parallelism.tp=1,2,4,8 --vary training.micro_batch=1,2,4
    --vary training.recompute=none,selective,full -q --csv /dev/null)
points=36

printf '%-44s %10s %10s %12s %s\n' "what" "CPU s" "peak MiB" "M instr" "figure"
read -r t m <<< "$(best_cpu "$bin" scenarios/70b_256gpu.yaml)"
printf '%-44s %10s %10d %12s %.1f ms\n' "flagship (70b_256gpu.yaml)" "$t" $((m / 1024)) \
    "$(instructions "$bin" scenarios/70b_256gpu.yaml)" "$(awk -v t="$t" 'BEGIN { print t * 1000 }')"
read -r t m <<< "$(best_cpu "$bin" scenarios/405b_16k.yaml)"
printf '%-44s %10s %10d %12s\n' "405b_16k symmetric" "$t" $((m / 1024)) \
    "$(instructions "$bin" scenarios/405b_16k.yaml)"
read -r t m <<< "$(best_cpu "$bin" validate "$runs" "${jobarg[@]}")"
printf '%-44s %10s %10d %12s %.0f rows/CPU s (%d rows)\n' "validate $(basename "$runs") --jobs $jobs" \
    "$t" $((m / 1024)) "$(SKIP_CALLGRIND=1 instructions)" \
    "$(awk -v r="$rows" -v t="$t" 'BEGIN { print (t > 0 ? r / t : 0) }')" "$rows"
read -r t m <<< "$(best_cpu "$bin" "${sweep[@]}" "${jobarg[@]}")"
printf '%-44s %10s %10d %12s %.0f points/CPU s (%d points)\n' "sweep 70b_256gpu tp x mb x recompute" \
    "$t" $((m / 1024)) "-" "$(awk -v p=$points -v t="$t" 'BEGIN { print (t > 0 ? p / t : 0) }')" \
    $points
if [ "${SKIP_ALL:-0}" != 1 ]; then
    read -r t m <<< "$(n=1 best_cpu "$bin" scenarios/405b_16k.yaml --ranks all)"
    printf '%-44s %10s %10d %12s\n' "405b_16k --ranks all" "$t" $((m / 1024)) "-"
fi
