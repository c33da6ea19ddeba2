#!/bin/sh
# --jobs: `validate` and `sweep` write the same bytes on any number of threads (issue 29):
# the rows of a runs file and the points of a sweep (one whose axis changes the GPU count, so
# that group bases are sought ahead of their turn, and a shard) compared between --jobs 1 and
# --jobs 3. Run from the repository root: tests/cli/jobs.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/jobs.sh SIMTRAIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
same() { # name, then the command (its stdout, stderr and --csv/--json outputs go to $tmp/J)
    name=$1
    shift
    for j in 1 3; do
        mkdir -p "$tmp/$j"
        (cd "$tmp/$j" && "$@" --jobs $j > out 2> err)
        echo "exit $?" >> "$tmp/$j/out"
    done
    if ! diff -r "$tmp/1" "$tmp/3" > "$tmp/diff"; then
        printf 'FAIL %s: --jobs 3 differs from --jobs 1\n' "$name"
        head -20 "$tmp/diff"
        failures=$((failures + 1))
    fi
    rm -rf "$tmp/1" "$tmp/3"
}
root=$(pwd)
case $bin in /*) ;; *) bin="$root/$bin" ;; esac
same validate "$bin" validate "$root/tests/validation/runs.csv" --json v.json
same validate-memory "$bin" validate "$root/tests/validation/memory.csv"
same sweep "$bin" sweep "$root/scenarios/ddp_8gpu.yaml" --vary cluster.nodes=1,2,4 \
    --vary training.micro_batch=1,2,4,8 --csv s.csv --json s.json
same sweep-shard "$bin" sweep "$root/scenarios/ddp_8gpu.yaml" --vary training.micro_batch=1,2,4,8,16 \
    --vary training.recompute=none,full --shard 1/3 --csv s.csv
echo "jobs: $failures failures"
[ "$failures" -eq 0 ]
