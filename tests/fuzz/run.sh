#!/bin/sh
# Build the configuration-loader fuzz target with clang (libFuzzer + ASan + UBSan) and run it
# for a bounded time. CI calls this; so can you: tests/fuzz/run.sh [seconds] [jobs]
#
# The library is compiled with -fsanitize=fuzzer-no-link so libFuzzer sees its coverage; only the
# fuzz_config target links the fuzzer runtime (CMakeLists.txt, option SIMTRAIN_FUZZ).
# New interesting inputs go to tests/fuzz/corpus-run/ (ignored by git); crashes are written as
# crash-* / leak-* / timeout-* files in the repository root and make this script fail.
set -eu
cd "$(dirname "$0")/../.."
seconds=${1:-60}
jobs=${2:-1}
build=${FUZZ_BUILD_DIR:-build-fuzz}

CC=clang cmake -S . -B "$build" -DSIMTRAIN_FUZZ=ON -DSIMTRAIN_KERNELS=OFF -DSIMTRAIN_MPI=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j2 --target fuzz_config

mkdir -p tests/fuzz/corpus-run
parallel=""
if [ "$jobs" -gt 1 ]; then
    parallel="-fork=$jobs"
fi
SIMTRAIN_DATA=tests/fixtures UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/fuzz_config" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -dict=tests/fuzz/yaml.dict -print_final_stats=1 $parallel \
    tests/fuzz/corpus-run tests/fuzz/corpus
