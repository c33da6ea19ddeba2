#!/bin/sh
# `simtrain serve` on the command line and `--html`: help and bad arguments (exit 2), an
# address that is not one or a port in use (exit 1, named), --bind to a non-loopback address
# warns, a signal stops the server with exit 0; `SCENARIO --html FILE` writes one page that
# holds the run and names no network resource (no http:, https:, ftp: URL, no src= or href=,
# no url() or @import), and refuses what it may not write.
# Run from the repository root: tests/cli/serve.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/serve.sh SIMTRAIN}
tmp=$(mktemp -d)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}
# expect NAME RC 'text in stderr' -- command...   ('' : nothing on stderr)
expect() {
    name=$1 rc_want=$2 want=$3
    shift 4
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ -z "$want" ]; then
        [ $rc -eq "$rc_want" ] && [ ! -s "$tmp/err" ]
    else
        [ $rc -eq "$rc_want" ] && grep -qF -- "$want" "$tmp/err"
    fi ||
        fail "$name: exit $rc (want $rc_want), stderr '$(head -n 2 "$tmp/err")' (want '$want')"
}
# start NAME ARGS...: a server in the background, its address line awaited (20 s)
start() {
    name=$1
    shift
    "$bin" serve --quiet "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pid=$!
    pids="$pids $pid"
    i=0
    while [ $i -lt 200 ] && ! grep -q 'http' "$tmp/$name.out" 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    port=$(sed -n 's/.*:\([0-9][0-9]*\)\/ .*/\1/p' "$tmp/$name.out")
}

expect help 0 "" -- "$bin" serve --help
grep -q -- '--bind ADDR' "$tmp/out" || fail "serve --help does not list --bind"
expect port_range 2 "--port" -- "$bin" serve --port 70000
expect workers_range 2 "--workers" -- "$bin" serve --workers 0
expect extra_argument 2 "error" -- "$bin" serve scenarios/70b_256gpu.yaml
expect bad_bind 1 "simtrain serve: error: --bind: 'localhost:80' is not a numeric IPv4 or IPv6 address" \
    -- "$bin" serve --bind localhost:80 --port 0

start one --port 0
[ -n "$port" ] || fail "no address line: $(cat "$tmp/one.out" "$tmp/one.err")"
grep -q "^simtrain serve: http://127.0.0.1:$port/ " "$tmp/one.out" ||
    fail "address line: $(cat "$tmp/one.out")"
[ -s "$tmp/one.err" ] && fail "loopback server writes to stderr: $(cat "$tmp/one.err")"
expect port_in_use 1 "cannot listen on 127.0.0.1 port $port" -- "$bin" serve --port "$port"
kill -TERM "$pid"
wait "$pid"
rc=$?
[ $rc -eq 0 ] || fail "SIGTERM: exit $rc"
grep -q "terminated: stopping" "$tmp/one.err" || fail "SIGTERM: $(cat "$tmp/one.err")"

start wide --port 0 --bind 0.0.0.0
grep -q "warning: listening on 0.0.0.0: anyone who can reach this machine" "$tmp/wide.err" ||
    fail "--bind 0.0.0.0 does not warn: $(cat "$tmp/wide.err")"
kill -INT "$pid"
wait "$pid" || fail "SIGINT: exit $?"

# --html: one page, offline
expect html 0 "" -- "$bin" scenarios/70b_256gpu.yaml --quiet --html "$tmp/run.html"
[ -s "$tmp/run.html" ] || fail "--html wrote nothing"
if grep -Eino 'https?:|ftp:|src=|href=|url\(|@import|//[a-z0-9.-]+\.[a-z]' "$tmp/run.html" |
    head -n 3 >"$tmp/urls" && [ -s "$tmp/urls" ]; then
    fail "--html names a network resource: $(cat "$tmp/urls")"
fi
grep -q '"mode":"static"' "$tmp/run.html" || fail "--html holds no run"
grep -q 'id="simtrain-data"' "$tmp/run.html" || fail "--html has no data element"
grep -q 'Content-Security-Policy' "$tmp/run.html" || fail "--html has no content security policy"
step=$("$bin" scenarios/70b_256gpu.yaml --json - -q | sed -n 's/^[[:space:]]*"step_time_s":[[:space:]]*\([0-9.e+-]*\),$/\1/p')
grep -q "\"step_time_s\":[[:space:]]*$step," "$tmp/run.html" || fail "--html: step time $step not in the page"
# the scenario's text goes in with it, '<' and '/' escaped
grep -q 'Llama 3 70B pre-training on 32 DGX H100 nodes' "$tmp/run.html" || fail "--html: no scenario text"
expect html_trace_ranks 0 "the trace keeps ranks 0" -- "$bin" scenarios/gpt2_1gpu.yaml -q --html "$tmp/gpt2.html" --trace-ranks 0
expect html_directory 1 "cannot write '$tmp': it is a directory" -- \
    "$bin" scenarios/gpt2_1gpu.yaml -q --html "$tmp"
cp scenarios/gpt2_1gpu.yaml "$tmp/in.yaml"
expect html_input 1 "it is an input of this run" -- "$bin" "$tmp/in.yaml" -q --html "$tmp/in.yaml"
expect html_missing_dir 1 "does not exist" -- "$bin" scenarios/gpt2_1gpu.yaml -q --html "$tmp/no/x.html"

echo "serve: $failures failures"
[ $failures -eq 0 ]
