#!/bin/sh
# One sweep across two MPI ranks (`mpirun -np 2 simtrain sweep ... --mpi`) writes the same CSV
# as the serial sweep. Skipped (exit 77, which ctest reports as skipped, with a note) where
# simtrain was built without MPI or mpirun is missing. Run from the repository root: tests/cli/mpi_sweep.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/mpi_sweep.sh SIMTRAIN}
SIMTRAIN_DATA=tests/fixtures
export SIMTRAIN_DATA
# OpenMPI refuses to run as root (CI containers) unless told it may.
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/s.yaml" <<'YAML'
hardware: tiny-box
workload: tiny-llama
cluster:
  nodes: 1
training:
  seq_len: 1024
  global_batch: 64
YAML
vary="--vary cluster.nodes=1,2,4 --vary training.micro_batch=1,2"
if ! command -v mpirun >/dev/null 2>&1; then
    echo "mpi_sweep: skipped (mpirun not found)"
    exit 77
fi
if ASAN_OPTIONS=detect_leaks=0 "$bin" sweep "$tmp/s.yaml" --vary cluster.nodes=1 --mpi -q 2>&1 |
    grep -q "without MPI"; then
    echo "mpi_sweep: skipped (simtrain built without MPI)"
    exit 77
fi
"$bin" sweep "$tmp/s.yaml" $vary --csv "$tmp/serial.csv" -q || exit 1
# OpenMPI keeps allocations past MPI_Finalize that LeakSanitizer reports as leaks in sanitizer
# builds; the serial run above still checks simtrain's own memory.
ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
    mpirun -np 2 --oversubscribe "$bin" sweep "$tmp/s.yaml" $vary --mpi --csv "$tmp/mpi.csv" -q ||
    { echo "mpi_sweep: mpirun failed"; exit 1; }
if cmp -s "$tmp/serial.csv" "$tmp/mpi.csv"; then
    echo "mpi_sweep: 2 ranks agree with the serial sweep"
else
    echo "mpi_sweep: FAIL, the MPI sweep differs from the serial one"
    diff "$tmp/serial.csv" "$tmp/mpi.csv" | head
    exit 1
fi
