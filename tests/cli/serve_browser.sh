#!/bin/sh
# The page in a real browser (headless Chromium; README command 1 installs it): `simtrain
# serve` on a free loopback port, the page loaded with its scripts run, and the step time it
# shows (the element id="step-time") equal to the command line's for the flagship; two
# configurations side by side, B with --set overrides, each equal to its command line; then the
# page `--html` wrote, opened from disk with no server, showing the same. Skipped (exit 77)
# only where no chromium is installed.
# Run from the repository root: tests/cli/serve_browser.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/serve_browser.sh SIMTRAIN}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "serve_browser: no chromium installed (README command 1 installs it): skipped"
    exit 77
fi
tmp=$(mktemp -d)
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}
# dump URL NAME: the page's DOM after its scripts ran (as root Chromium needs --no-sandbox;
# a fresh profile, nothing fetched but the page and its API)
dump() {
    timeout 180 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-dev-shm-usage --user-data-dir="$tmp/profile-$2" --virtual-time-budget=60000 \
        --dump-dom "$1" >"$tmp/$2.html" 2>"$tmp/$2.err"
}
# the number in <... id="step-time">N</...> of a DOM
shown() {
    sed -n 's/.*id="step-time">\([0-9.e+-]*\)<.*/\1/p' "$1" | head -n 1
}
# close A B: |A - B| <= 1e-5 |B| (the page shows 6 significant digits)
close() {
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-5 * b) }'
}

want=$("$bin" scenarios/70b_256gpu.yaml --json - -q |
    sed -n 's/^[[:space:]]*"step_time_s":[[:space:]]*\([0-9.e+-]*\),$/\1/p')
[ -n "$want" ] || fail "no step time from the command line"

"$bin" serve --port 0 --quiet >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
i=0
while [ $i -lt 300 ] && ! grep -q 'http' "$tmp/serve.out" 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9][0-9]*\)\/ .*/\1/p' "$tmp/serve.out")
if [ -z "$port" ]; then
    fail "the server did not start: $(cat "$tmp/serve.out" "$tmp/serve.err")"
else
    dump "http://127.0.0.1:$port/" served
    got=$(shown "$tmp/served.html")
    close "$got" "$want" || fail "served page: step time '$got', the command line's $want" \
        "($(grep -o 'class="error">[^<]*' "$tmp/served.html" | head -n 1))"
    grep -q 'id="tl-a"' "$tmp/served.html" || fail "served page: no timeline"
    grep -q 'class="verdict fits"' "$tmp/served.html" || fail "served page: no memory verdict"
    grep -q '<option value="07-pipeline-bubbles"' "$tmp/served.html" || fail "served page: no labs"
    # two configurations side by side, B with overrides (the page's #fragment sets them)
    want_b=$("$bin" scenarios/70b_256gpu.yaml --set parallelism.tp=4 --set parallelism.dp=16 \
        --json - -q | sed -n 's/^[[:space:]]*"step_time_s":[[:space:]]*\([0-9.e+-]*\),$/\1/p')
    dump "http://127.0.0.1:$port/#compare&b.parallelism.tp=4&b.parallelism.dp=16" compare
    got=$(shown "$tmp/compare.html")
    close "$got" "$want" || fail "compare: A's step time '$got', the command line's $want"
    got=$(sed -n 's/.*id="step-time-b">\([0-9.e+-]*\)<.*/\1/p' "$tmp/compare.html" | head -n 1)
    close "$got" "$want_b" || fail "compare: B's step time '$got', the command line's $want_b"
fi
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=""

"$bin" scenarios/70b_256gpu.yaml --quiet --html "$tmp/run.html" || fail "--html failed"
dump "file://$tmp/run.html" static
got=$(shown "$tmp/static.html")
close "$got" "$want" || fail "--html page: step time '$got', the command line's $want"
grep -q 'class="yaml"' "$tmp/static.html" || fail "--html page: no scenario text"

echo "serve_browser: $failures failures (step time $want s)"
[ $failures -eq 0 ]
