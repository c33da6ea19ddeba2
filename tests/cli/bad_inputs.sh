#!/bin/sh
# Every case of tests/bad/cases.tsv through the real command line: `simtrain FILE [--set ARG]`
# must fail with exit status 1 (no crash, no signal) and print exactly the expected first line
# on stderr. Run from the repository root: tests/cli/bad_inputs.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/bad_inputs.sh SIMTRAIN}
SIMTRAIN_DATA=tests/fixtures
export SIMTRAIN_DATA
tab=$(printf '\t')
cases=0
failures=0
while IFS="$tab" read -r file set want; do
    case $file in
    '' | '#'*) continue ;;
    esac
    cases=$((cases + 1))
    if [ "$set" = "-" ]; then
        out=$("$bin" "tests/bad/$file.yaml" 2>&1 >/dev/null </dev/null)
    else
        out=$("$bin" "tests/bad/$file.yaml" --set "$set" 2>&1 >/dev/null </dev/null)
    fi
    rc=$?
    first=$(printf '%s\n' "$out" | head -n 1)
    if [ "$rc" -ne 1 ] || [ "$first" != "$want" ]; then
        printf 'FAIL %s %s (exit %d)\n  want: %s\n  got:  %s\n' "$file" "$set" "$rc" "$want" \
            "$first"
        failures=$((failures + 1))
    fi
done <tests/bad/cases.tsv
echo "bad_inputs: $cases cases, $failures failures"
[ "$cases" -ge 30 ] && [ "$failures" -eq 0 ]
