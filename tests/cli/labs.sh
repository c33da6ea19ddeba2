#!/bin/sh
# Every lab's commands run as written (docs/labs/*.md): each ```sh block is run as a script with
# `simtrain` standing for the binary under test, from a scratch directory that sees the
# repository's scenarios/, hardware/ and workloads/; every command must exit 0, or 3 (the
# documented "does not fit" status: the report is still printed). Where gnuplot is
# installed, every picture a lab tells the reader to look at (out/...png) must exist.
# Run from the repository root: tests/cli/labs.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/labs.sh SIMTRAIN}
case $bin in /*) ;; *) bin="$(pwd)/$bin" ;; esac
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in scenarios hardware workloads plots; do ln -s "$root/$d" "$tmp/$d"; done
unset SIMTRAIN_DATA
failures=0
labs=0
for lab in "$root"/docs/labs/[0-9]*.md; do
    name=$(basename "$lab" .md)
    labs=$((labs + 1))
    script="$tmp/$name.sh"
    {
        printf 'simtrain() { "%s" "$@" || [ $? -eq 3 ]; }\nset -e\n' "$bin"
        awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on' "$lab"
    } >"$script"
    if ! (cd "$tmp" && sh "$script" >"$tmp/$name.out" 2>&1); then
        printf 'FAIL %s: a command failed\n' "$name"
        tail -n 5 "$tmp/$name.out"
        failures=$((failures + 1))
        continue
    fi
    if command -v gnuplot >/dev/null 2>&1; then
        for png in $(grep -o 'out/[A-Za-z0-9_./-]*\.png' "$lab" | sort -u); do
            [ -s "$tmp/$png" ] || {
                printf 'FAIL %s: no %s\n' "$name" "$png"
                failures=$((failures + 1))
            }
        done
    fi
done
echo "labs: $labs labs, $failures failures"
[ "$labs" -ge 8 ] && [ "$failures" -eq 0 ]
