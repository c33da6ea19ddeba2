#!/bin/sh
# `cmake --install` to a temporary prefix gives a simtrain that works from any directory: the
# binary, the data under PREFIX/share/simtrain (hardware, workloads, scenarios, plots), the
# HTTP module of serve and the MPI module where built; the flagship run from / finds its scenario, hardware and workload
# there and prints what the build-tree binary prints (but for the scenario's path on the first
# line); and the installed binary reads the install tree, not the source tree. Run from the
# repository root: tests/cli/install.sh path/to/build/simtrain
set -u
bin=${1:?usage: tests/cli/install.sh SIMTRAIN}
case $bin in /*) ;; *) bin="$(pwd)/$bin" ;; esac
build=$(dirname "$bin")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset SIMTRAIN_DATA
failures=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}
prefix="$tmp/prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    { echo "FAIL cmake --install: $(tail -n 3 "$tmp/install.log")"; exit 1; }
share="$prefix/share/simtrain"
[ -x "$prefix/bin/simtrain" ] || fail "no $prefix/bin/simtrain"
for f in hardware/dgx-h100.yaml hardware/calibration/dgx-h100.yaml workloads/llama3-70b.yaml \
    scenarios/70b_256gpu.yaml plots/bars.gp; do
    [ -f "$share/$f" ] || fail "not installed: share/simtrain/$f"
done
if ls "$build"/libsimtrain_mpi.* >/dev/null 2>&1; then
    ls "$prefix"/lib*/simtrain/libsimtrain_mpi.* >/dev/null 2>&1 || fail "MPI module not installed"
    # the installed binary loads the installed module: without it, it names that path (and
    # does not fall back to the build tree's)
    mkdir "$tmp/hidden"
    mv "$prefix"/lib*/simtrain/libsimtrain_mpi.* "$tmp/hidden/"
    (cd / && "$prefix/bin/simtrain" sweep scenarios/gpt2_1gpu.yaml --vary training.micro_batch=16 \
        --mpi -q) >/dev/null 2>"$tmp/err" && fail "installed --mpi ran without its module"
    grep -q "cannot load the MPI module ($prefix/lib[^)]*/simtrain/libsimtrain_mpi" "$tmp/err" ||
        fail "installed --mpi: $(cat "$tmp/err")"
fi

# serve's HTTP module is installed and the installed binary loads it from there
ls "$prefix"/lib*/simtrain/libsimtrain_http.* >/dev/null 2>&1 || fail "HTTP module not installed"
(cd / && "$prefix/bin/simtrain" serve --port 0 --quiet >"$tmp/serve.out" 2>"$tmp/serve.err") &
spid=$!
i=0
while [ $i -lt 100 ] && ! grep -q 'http' "$tmp/serve.out" 2>/dev/null && kill -0 $spid 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
grep -q '^simtrain serve: http://127.0.0.1:' "$tmp/serve.out" ||
    fail "installed serve did not start: $(cat "$tmp/serve.out" "$tmp/serve.err")"
kill $spid 2>/dev/null
wait $spid 2>/dev/null
mkdir -p "$tmp/hidden"
mv "$prefix"/lib*/simtrain/libsimtrain_http.* "$tmp/hidden/"
(cd / && "$prefix/bin/simtrain" serve --port 0 --quiet) >/dev/null 2>"$tmp/err" &&
    fail "installed serve ran without its module"
grep -q "cannot load the HTTP module ($prefix/lib[^)]*/simtrain/libsimtrain_http" "$tmp/err" ||
    fail "installed serve without its module: $(cat "$tmp/err")"

# the flagship from /, by the path it has in the repository
(cd / && "$prefix/bin/simtrain" scenarios/70b_256gpu.yaml) >"$tmp/installed.txt" 2>&1 ||
    fail "installed flagship from /: exit $?: $(head -n 3 "$tmp/installed.txt")"
"$bin" scenarios/70b_256gpu.yaml >"$tmp/build.txt" 2>&1 || fail "build-tree flagship: exit $?"
head -n 1 "$tmp/installed.txt" | grep -q "$share/scenarios/70b_256gpu.yaml\$" ||
    fail "installed flagship read: $(head -n 1 "$tmp/installed.txt")"
sed 1d "$tmp/installed.txt" >"$tmp/a"
sed 1d "$tmp/build.txt" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "installed and build-tree flagship differ: $(diff "$tmp/a" "$tmp/b" | head -5)"

# a name reference resolves in the install tree only: remove a file there and it is not found
(cd / && "$prefix/bin/simtrain" collective --hardware dgx-h100 --sizes 1M:1M) >/dev/null 2>&1 ||
    fail "installed collective --hardware dgx-h100 from /"
rm "$share/hardware/dgx-b200.yaml"
(cd / && "$prefix/bin/simtrain" collective --hardware dgx-b200 --sizes 1M:1M) >/dev/null \
    2>"$tmp/err" && fail "installed binary found dgx-b200 outside its install tree"
grep -q "tried .*$share/hardware/dgx-b200.yaml" "$tmp/err" ||
    fail "not-found message does not name the install tree: $(cat "$tmp/err")"
echo "install: $failures failures"
[ "$failures" -eq 0 ]
