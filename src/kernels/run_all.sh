#!/bin/sh
# run_all.sh - run the whole kernel set on one node within a time limit and write one
# measurements CSV for `simtrain calibrate` (format: src/kernels/README.md).
#
#   src/kernels/run_all.sh [OUT.csv [HARDWARE]]
#
# With HARDWARE (a hardware name or file) and a built `simtrain` (SIMTRAIN, default
# build/simtrain), the measurements are fitted at the end: one command calibrates a part,
# writing OUT.yaml (docs/calibration.md); the hardware file then names it.
#
# Environment: BENCH (simtrain-bench binary; default build/src/kernels/simtrain-bench),
# TIME_LIMIT (seconds for everything, default 3600; the sustained GEMM suite takes 25 % of
# it, SUSTAINED_S seconds per dtype and shape: by default what the share allows over its
# six runs), MAX_BYTES (largest buffer/message,
# default 1073741824), GPUS (collectives on up to N GPUs, default all visible).
# Each step gets a share of the limit and is stopped by timeout(1) when it runs over; the
# rows it wrote are kept (simtrain-bench flushes every row). Collectives run once with
# NCCL's own choice and once per forced algorithm, so `calibrate` can fit each.
set -u

OUT=${1:-measurements-$(hostname)-$(date -u +%Y%m%d).csv}
HW=${2:-}
SIMTRAIN=${SIMTRAIN:-build/simtrain}
BENCH=${BENCH:-build/src/kernels/simtrain-bench}
LIMIT=${TIME_LIMIT:-3600}
MAX_BYTES=${MAX_BYTES:-1073741824}
GPUS=${GPUS:-0}
START=$(date +%s)

if [ ! -x "$BENCH" ]; then
    echo "run_all.sh: no simtrain-bench at '$BENCH' (build it: cmake --build build --target simtrain-bench, or set BENCH)" >&2
    exit 1
fi

# step PERCENT_OF_LIMIT DESCRIPTION [ENV=VALUE...] -- SIMTRAIN-BENCH ARGS
step() {
    share=$1
    what=$2
    shift 2
    left=$((LIMIT - ($(date +%s) - START)))
    budget=$((LIMIT * share / 100))
    [ "$budget" -gt "$left" ] && budget=$left
    if [ "$budget" -lt 10 ]; then
        echo "run_all.sh: time limit reached, skipping $what" >&2
        return 0
    fi
    echo "run_all.sh: $what (up to ${budget}s)" >&2
    envs=""
    while [ "$1" != "--" ]; do
        envs="$envs $1"
        shift
    done
    shift
    # shellcheck disable=SC2086
    env $envs timeout "$budget" "$BENCH" --out "$OUT" --max-bytes "$MAX_BYTES" --gpus "$GPUS" "$@"
    rc=$?
    [ $rc -eq 124 ] && echo "run_all.sh: $what stopped at its time share; its rows so far are kept" >&2
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "run_all.sh: $what failed (exit $rc)" >&2
    return 0
}

# sustained GEMMs: 2 dtypes x 3 shapes, each with 4 s of idle and a burst beside it
SUSTAINED_S=${SUSTAINED_S:-$((LIMIT * 25 / 100 / 6 - 10))}
[ "$SUSTAINED_S" -lt 20 ] && SUSTAINED_S=20

step 15 "GEMMs (cuBLASLt)" -- --suite gemm
step 25 "sustained GEMMs at the power cap (NVML clock and power)" -- --suite sustained --sustained-s "$SUSTAINED_S"
step 5 "attention" -- --suite attention
step 5 "memory-bound kernels and FP8 casts" -- --suite membound,fp8cast
step 5 "host and peer copies" -- --suite copy
step 15 "collectives, NCCL's choice" -- --suite nccl
step 10 "collectives, ring" NCCL_ALGO=Ring -- --suite nccl
step 10 "collectives, tree" NCCL_ALGO=Tree -- --suite nccl
step 10 "collectives, NVLS (Hopper and later with NVSwitch)" NCCL_ALGO=NVLS -- --suite nccl

echo "run_all.sh: wrote $OUT in $(($(date +%s) - START))s" >&2
if [ -n "$HW" ] && [ -x "$SIMTRAIN" ]; then
    "$SIMTRAIN" calibrate "$OUT" --hardware "$HW" --output "${OUT%.csv}.yaml" && \
        echo "run_all.sh: wrote ${OUT%.csv}.yaml; name it in the hardware file: calibration: PATH" >&2
else
    echo "next: simtrain calibrate $OUT --hardware HARDWARE --output hardware/calibration/HARDWARE.yaml" >&2
fi
