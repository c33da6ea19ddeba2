#!/bin/sh
# Build the fuzz targets with clang (libFuzzer + ASan + UBSan) and run them for a bounded time:
# the configuration loader (fuzz_config, the seconds given) and the JSON reader with the
# importers that read JSON (fuzz_json, a quarter of them, seeded with the corpus JSONs). CI calls
# this; so can you: tests/fuzz/run.sh [seconds] [jobs]
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
cmake --build "$build" -j2 --target fuzz_config fuzz_json

mkdir -p tests/fuzz/corpus-run
parallel=""
if [ "$jobs" -gt 1 ]; then
    parallel="-fork=$jobs"
fi
SIMTRAIN_DATA=tests/fixtures UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/fuzz_config" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -dict=tests/fuzz/yaml.dict -print_final_stats=1 $parallel \
    tests/fuzz/corpus-run tests/fuzz/corpus

mkdir -p tests/fuzz/corpus-json-run
json_seconds=$((seconds / 4 > 0 ? seconds / 4 : 1))
SIMTRAIN_DATA=tests/fixtures UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/fuzz_json" -max_total_time="$json_seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=16384 -dict=tests/fuzz/json.dict -print_final_stats=1 $parallel \
    tests/fuzz/corpus-json-run tests/corpus/hf tests/corpus/axolotl/deepspeed_configs
