#!/bin/sh
# snapshot.sh - every prediction simtrain prints, into one directory, to compare two builds
# byte for byte (docs/performance.md): each shipped scenario's report and --json (and
# --ranks all for those up to 512 GPUs), validate on the project's runs files (text and
# --json), a sweep (table and CSV) and a plan's candidates.
# Usage: tests/bench/snapshot.sh SIMTRAIN OUTDIR [RUNS.csv...]   (run from the repository root)
#   tests/bench/snapshot.sh /tmp/before/simtrain /tmp/snap-before
#   tests/bench/snapshot.sh build/simtrain /tmp/snap-after && diff -r /tmp/snap-before /tmp/snap-after
# Extra runs files (e.g. a shared validation set) are validated too. Exit status 0 unless
# the directory cannot be written; a command's failure is recorded in its output file.
# Both binaries read this tree's hardware/, workloads/ and frameworks/ ($SIMTRAIN_DATA), so a
# copy of an older build (its install layout elsewhere) prints the same file names.
set -u
export SIMTRAIN_DATA=${SIMTRAIN_DATA:-$PWD}
bin=${1:?usage: tests/bench/snapshot.sh SIMTRAIN OUTDIR [RUNS.csv...]}
out=${2:?usage: tests/bench/snapshot.sh SIMTRAIN OUTDIR [RUNS.csv...]}
shift 2
mkdir -p "$out" || exit 1
# The run's own wall time is not a prediction: drop such lines.
strip() { sed -E -e 's/ in [0-9.]+ s/ in - s/g' -e 's/\([0-9,]+\/s;/(-\/s;/'; }
for y in scenarios/*.yaml; do
    n=$(basename "$y" .yaml)
    "$bin" "$y" > "$out/$n.txt" 2>&1 || echo "exit $?" >> "$out/$n.txt"
    "$bin" "$y" --quiet --json "$out/$n.json" > "$out/$n.json.err" 2>&1 ||
        echo "exit $?" >> "$out/$n.json.err"
    gpus=$("$bin" "$y" --quiet --json - 2>/dev/null | sed -n 's/^[[:space:]]*"gpus":[[:space:]]*\([0-9]*\).*/\1/p' | head -1)
    if [ -n "$gpus" ] && [ "$gpus" -le 512 ]; then
        "$bin" "$y" --ranks all --quiet --json "$out/$n.all.json" > /dev/null 2>&1 ||
            echo "exit $?" > "$out/$n.all.err"
    fi
done
i=0
for csv in tests/validation/runs.csv tests/validation/runs-vtrain.csv tests/validation/memory.csv "$@"; do
    i=$((i + 1))
    b=validate-$i-$(basename "$csv" .csv)
    "$bin" validate "$csv" > "$out/$b.txt" 2>&1 || echo "exit $?" >> "$out/$b.txt"
    "$bin" validate "$csv" --quiet --json "$out/$b.json" > /dev/null 2>&1 ||
        echo "exit $?" >> "$out/$b.txt"
done
"$bin" sweep scenarios/70b_256gpu.yaml --vary parallelism.tp=2,4,8 --vary training.micro_batch=1,2 \
    --csv "$out/sweep.csv" > "$out/sweep.txt" 2>&1 || echo "exit $?" >> "$out/sweep.txt"
"$bin" plan scenarios/ddp_8gpu.yaml --top 5 2>&1 | strip > "$out/plan.txt"
exit 0
