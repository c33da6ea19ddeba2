#!/bin/sh
# Golden results: `simtrain SCENARIO --json` must reproduce tests/golden/NAME.json byte for
# byte, in every build configuration CI runs (release and sanitizer builds). A deliberate model
# change regenerates them: UPDATE_GOLDEN=1 tests/cli/golden.sh build/simtrain, and the commit
# says why the numbers moved. Run from the repository root.
set -u
bin=${1:?usage: tests/cli/golden.sh SIMTRAIN}
tmp=$(mktemp)
failures=0
for golden in tests/golden/*.json; do
    name=$(basename "$golden" .json)
    if ! "$bin" "scenarios/$name.yaml" --quiet --json "$tmp"; then
        echo "FAIL $name: simtrain exited with status $?"
        failures=$((failures + 1))
        continue
    fi
    if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$tmp" "$golden"
    elif ! cmp -s "$tmp" "$golden"; then
        echo "FAIL $name: output differs from $golden:"
        diff "$golden" "$tmp" | head -20
        failures=$((failures + 1))
    fi
done
rm -f "$tmp"
echo "golden: $failures failures"
[ "$failures" -eq 0 ]
