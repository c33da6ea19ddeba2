#!/bin/sh
# Run time does not depend on addresses: a 100,000-layer GPT-2 (3 million labels, each
# interned by its text, prog.c) is built and simulated to its end, whatever the address-space
# randomisation. It cannot fit (exit 3, the simulated peak named); the bound on its time is
# this test's ctest TIMEOUT (CMakeLists.txt), which the hash of the label's pointer, 1.7 s to
# over 100 s by the addresses, could exceed. Under the sanitizer build (ASAN_OPTIONS set, as
# tests/check.sh runs it) one run of 10,000 layers: AddressSanitizer's allocator alone makes
# the 100,000-layer model take minutes there. Run from the repository root:
# tests/cli/deep_model.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/deep_model.sh SIMTRAIN}
layers=100000 runs="1 2 3"
[ -n "${ASAN_OPTIONS:-}" ] && layers=10000 runs=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
for run in $runs; do
    "$bin" scenarios/gpt2_1gpu.yaml --set workload.layers=$layers --quiet >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 3 ] || ! grep -q "does not fit: peak [0-9.]* GiB per GPU (rank 0)" "$tmp/err"; then
        printf 'FAIL run %d: exit %d: %s\n' $run $rc "$(head -c 300 "$tmp/err")"
        failures=$((failures + 1))
    fi
done
[ $failures -eq 0 ] || exit 1
echo "deep model: ok"
