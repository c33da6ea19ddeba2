#!/bin/sh
# gen-screenshot.sh [SIMTRAIN] - regenerate docs/serve.png, the picture of `simtrain serve`'s
# page in the README and the user guide: lab 7 (pipeline bubbles) open, the flagship at a
# global batch of 64 as A (interleaved, vpp 5) beside B (1F1B, vpp 1), taken by headless
# Chromium (README command 1 installs it). Run from the repository root after a build.
set -eu
bin=${1:-build/simtrain}
browser=$(command -v chromium || command -v chromium-browser)
tmp=$(mktemp -d)
"$bin" serve --port 0 --quiet >"$tmp/out" 2>"$tmp/err" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
while [ $i -lt 300 ] && ! grep -q 'http' "$tmp/out"; do
    sleep 0.1
    i=$((i + 1))
done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9][0-9]*\)\/ .*/\1/p' "$tmp/out")
hash='lab=07-pipeline-bubbles&a.training.global_batch=64&compare'
hash="$hash&b.parallelism.vpp=1&b.parallelism.schedule=1f1b"
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile" --hide-scrollbars --window-size=1600,1500 \
    --virtual-time-budget=60000 --screenshot="$tmp/serve.png" \
    "http://127.0.0.1:$port/#$hash" 2>"$tmp/chrome.err"
cp "$tmp/serve.png" docs/serve.png
echo "docs/serve.png: $(wc -c <docs/serve.png) bytes"
