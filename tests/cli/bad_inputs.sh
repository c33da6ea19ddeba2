#!/bin/sh
# The bad-input tables through the real command line. Every case must exit with its expected
# status (never a signal: no crash, no abort, no sanitizer report) and print exactly its
# expected first line on stderr, within the timeout:
# - tests/bad/cases.tsv: `simtrain tests/bad/FILE.yaml [--set ARG]`, exit 1 (the loader's
#   table, also read by tests/test_config.c through the API);
# - tests/bad/cli.tsv: every command, its options, input files (scenario, hardware, workload,
#   runs and measurements CSVs) and outputs; its header says the format.
# At least 200 cases in all. Run from the repository root: tests/cli/bad_inputs.sh SIMTRAIN
set -u
bin=${1:?usage: tests/cli/bad_inputs.sh SIMTRAIN}
SIMTRAIN_DATA=tests/fixtures
export SIMTRAIN_DATA
R=$(pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
tab=$(printf '\t')
limit=${SIMTRAIN_CASE_SECONDS:-20} # per case; each takes milliseconds in a release build
cases=0
failures=0

# check ID WANT_RC WANT_LINE ARG...: run simtrain ARG... and compare
check() {
    id=$1 want_rc=$2 want=$3
    shift 3
    out=$(timeout "$limit" "$bin" "$@" 2>&1 >/dev/null </dev/null)
    rc=$?
    first=$(printf '%s\n' "$out" | head -n 1)
    cases=$((cases + 1))
    if [ "$rc" -ne "$want_rc" ] || [ "$first" != "$want" ]; then
        printf 'FAIL %s (exit %d, want %d)\n  want: %s\n  got:  %s\n' "$id" "$rc" "$want_rc" \
            "$want" "$first"
        failures=$((failures + 1))
    fi
}

# the expected line with $T and $R replaced by their paths
expand() {
    printf '%s\n' "$1" | awk -v t="$T" -v r="$R" '{ gsub(/\$T/, t); gsub(/\$R/, r); print }'
}

while IFS="$tab" read -r file set want; do
    case $file in
    '' | '#'*) continue ;;
    esac
    if [ "$set" = "-" ]; then
        check "$file" 1 "$want" "tests/bad/$file.yaml"
    else
        check "$file $set" 1 "$want" "tests/bad/$file.yaml" --set "$set"
    fi
done <tests/bad/cases.tsv
loader=$cases

while IFS="$tab" read -r id want_rc want args; do
    case $id in
    '' | '#'*) continue ;;
    esac
    mkdir -p "$T" # a case may not remove it
    eval "set -- $args"
    case $want in
    *'$'[TR]*) want=$(expand "$want") ;;
    esac
    check "$id" "$want_rc" "$want" "$@"
done <tests/bad/cli.tsv

echo "bad_inputs: $cases cases ($loader through the loader, $((cases - loader)) through every command), $failures failures"
[ "$cases" -ge 200 ] && [ "$failures" -eq 0 ]
