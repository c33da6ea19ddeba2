#!/bin/sh
# Build the fuzz targets with clang (libFuzzer + ASan + UBSan, float-cast-overflow included)
# and run each for a bounded time: fuzz_config (the YAML loader, seeds in corpus/, yaml.dict)
# fuzz_csv (the validate and calibrate CSV readers, seeds in corpus-csv/, csv.dict) and
# fuzz_json (the JSON reader and the importers that read JSON, seeded with the corpus JSONs) and
# fuzz_args (the Megatron-LM arguments grammar and its import, seeds in corpus-args/, args.dict).
# CI calls this; so can you: tests/fuzz/run.sh [seconds per target] [jobs] [target...]
#
# The library is compiled with -fsanitize=fuzzer-no-link so libFuzzer sees its coverage; only the
# fuzz targets link the fuzzer runtime (CMakeLists.txt, option SIMTRAIN_FUZZ).
# New interesting inputs go to tests/fuzz/corpus-run/TARGET/ (ignored by git); crashes are written
# as crash-* / leak-* / timeout-* files in the repository root and make this script fail.
set -eu
cd "$(dirname "$0")/../.."
seconds=${1:-60}
jobs=${2:-1}
shift $(($# > 2 ? 2 : $#))
targets=${*:-fuzz_config fuzz_csv fuzz_json fuzz_args}
build=${FUZZ_BUILD_DIR:-build-fuzz}
san="address,undefined,float-cast-overflow"

CC=clang cmake -S . -B "$build" -DSIMTRAIN_FUZZ=ON -DSIMTRAIN_KERNELS=OFF -DSIMTRAIN_MPI=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,$san -fno-sanitize-recover=undefined,float-cast-overflow" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$san" >/dev/null
# shellcheck disable=SC2086 # the target names are words
cmake --build "$build" -j2 --target $targets

parallel=""
if [ "$jobs" -gt 1 ]; then
    parallel="-fork=$jobs"
fi
for target in $targets; do
    case $target in
    fuzz_config) seeds=tests/fuzz/corpus dict=tests/fuzz/yaml.dict len=8192 ;;
    fuzz_csv) seeds=tests/fuzz/corpus-csv dict=tests/fuzz/csv.dict len=8192 ;;
    fuzz_args) seeds=tests/fuzz/corpus-args dict=tests/fuzz/args.dict len=4096 ;;
    fuzz_json)
        seeds="tests/corpus/hf tests/corpus/axolotl/deepspeed_configs" dict=tests/fuzz/json.dict
        len=16384
        ;;
    *)
        echo "run.sh: unknown target '$target'" >&2
        exit 2
        ;;
    esac
    mkdir -p "tests/fuzz/corpus-run/$target"
    echo "== $target: $seconds s =="
    # shellcheck disable=SC2086 # $parallel is one flag or none, $seeds folders
    SIMTRAIN_DATA=tests/fixtures UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len="$len" -dict="$dict" -print_final_stats=1 $parallel \
        "tests/fuzz/corpus-run/$target" $seeds
done
