#!/bin/sh
# The dependency rule is enforced: tests/deps.sh passes on src/, and on a copy of src/ with one
# violation planted at a time it fails and names the file and the rule broken: a folder
# including one above it (base/ including cli/, strategy/ including config/), another
# folder's private header, an include cycle between headers, a call cycle between modules of
# one folder, a bare include, a file at the top of src/, a folder outside the order, mpi/
# included from elsewhere, an include of no file; two planted at once are both listed. Run
# from anywhere: tests/cli/deps.sh [SIMTRAIN] (the binary is not used).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
check="$root/tests/deps.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

if ! sh "$check" "$root/src" >"$tmp/out" 2>&1; then
    printf 'FAIL the real tree:\n%s\n' "$(cat "$tmp/out")"
    failures=$((failures + 1))
fi

# plant NAME PATTERN COMMAND: run COMMAND in a fresh copy of src/; deps.sh must fail and print
# a line matching the grep pattern PATTERN.
plant() {
    name=$1
    want=$2
    rm -rf "$tmp/src"
    cp -R "$root/src" "$tmp/src"
    (cd "$tmp/src" && eval "$3")
    if sh "$check" "$tmp/src" >"$tmp/out" 2>&1; then
        printf 'FAIL %s: deps.sh passed\n' "$name"
        failures=$((failures + 1))
    elif ! grep -q -- "$want" "$tmp/out"; then
        printf 'FAIL %s: no line matching %s in:\n%s\n' "$name" "$want" "$(cat "$tmp/out")"
        failures=$((failures + 1))
    fi
}

plant "folder above" 'base/util.c:[0-9]*: error: base/ may not include cli/' \
    'echo "#include \"cli/cmd.h\"" >>base/util.c'
plant "simulation on the loader" 'strategy/build.c:[0-9]*: error: strategy/ may not include config/' \
    'echo "#include \"config/config.h\"" >>strategy/build.c'
plant "private header" 'report/trace.c:[0-9]*: error: "strategy/dp_internal.h" is private to strategy/' \
    'echo "#include \"strategy/dp_internal.h\"" >>report/trace.c'
plant "header cycle" 'error: include cycle between modules: model/\(topo -> model/layout -> model/topo\|layout -> model/topo -> model/layout\)$' \
    'echo "#include \"model/layout.h\"" >>model/topo.h'
plant "module cycle" 'error: include cycle between modules: run/\(run -> run/metrics -> run/run\|metrics -> run/run -> run/metrics\)$' \
    'echo "#include \"run/run.h\"" >>run/metrics.c'
plant "bare include" 'base/csv.c:[0-9]*: error: include "util.h" must name its folder' \
    'echo "#include \"util.h\"" >>base/csv.c'
plant "file at the top" 'stray.c:1: error: only folders sit at the top of src/' \
    'echo "int stray;" >stray.c'
plant "folder outside the order" "extra/x.c:1: error: folder 'extra/' is in neither" \
    'mkdir extra && echo "int x;" >extra/x.c'
plant "mpi apart" 'cli/main.c:[0-9]*: error: mpi/ stands apart' \
    'echo "#include \"mpi/mpi_module.h\"" >>cli/main.c'
plant "no such file" 'model/cost.c:[0-9]*: error: include "model/nosuch.h" names no file' \
    'echo "#include \"model/nosuch.h\"" >>model/cost.c'
plant "two at once" 'deps.sh: 2 violations' \
    'echo "#include \"cli/cmd.h\"" >>base/util.c && echo "#include \"report/report.h\"" >>model/cost.h'

[ $failures -eq 0 ] || exit 1
echo "deps: ok (the real tree passes; 11 planted violations caught)"
