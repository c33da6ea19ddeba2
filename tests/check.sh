#!/bin/sh
# The whole test suite (README command 2): the dependency rule of src/ (tests/deps.sh),
# warnings as errors, unit and CLI tests (the bad-input tables, the issue-17 reproducers,
# every shipped scenario), the same tests again built by clang under AddressSanitizer +
# UndefinedBehaviorSanitizer + float-cast-overflow (any finding fatal), and a bounded fuzzing
# run of the YAML loader, the CSV readers and the JSON importers (SIMTRAIN_FUZZ_SECONDS each,
# default 30).
# Run from the repository root.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

echo "== formatting (.clang-format) =="
clang-format --dry-run --Werror src/*/*.c src/*/*.h tests/*.c tests/*.h tests/bench/*.c tests/fuzz/*.c

echo "== dependency rule (tests/deps.sh: include order, private headers, cycles) =="
sh tests/deps.sh

echo "== build (-Werror) and test =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIMTRAIN_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
# No test may write into the source tree (a file left, or created and removed, changes a
# directory's time): compare with a marker touched just before the tests.
touch build/.before-tests
ctest --test-dir build --output-on-failure -j "$jobs"
written=$(find . \( -path ./build -o -path ./build-asan -o -path ./.git \) -prune -o \
    -newer build/.before-tests -print)
if [ -n "$written" ]; then
    echo "tests wrote into the source tree: $written"
    exit 1
fi

echo "== install to a temporary prefix, run the flagship from / =="
sh tests/cli/install.sh build/simtrain

echo "== clang ASan + UBSan + float-cast-overflow build and test =="
# clang: gcc's -fsanitize=undefined leaves float-cast-overflow out (CMakeLists.txt)
cmake -S . -B build-asan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DSIMTRAIN_WERROR=ON \
      -DSIMTRAIN_SANITIZE=ON -DSIMTRAIN_KERNELS=OFF >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"

echo "== fuzz the YAML loader, the CSV readers and the JSON importers (bounded) =="
sh tests/fuzz/run.sh "${SIMTRAIN_FUZZ_SECONDS:-30}"

echo "== all tests passed =="
