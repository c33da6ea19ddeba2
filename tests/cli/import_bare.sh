#!/bin/sh
# A bare Hugging Face config.json runs with the stated defaults for what it does not give
# (docs/import.md, "A bare config.json"): run, memory and plan predict and say so on stderr;
# --set replaces a default and drops it from the note; --gpus stays required.
# Run from the repository root: tests/cli/import_bare.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/import_bare.sh SIMTRAIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    echo "FAIL $*"
    failures=$((failures + 1))
}
cfg=tests/corpus/hf/Qwen--Qwen3-8B.config.json
note="note: $cfg gives no training; simtrain's defaults for a bare config.json: training.seq_len 4096 (4096, or max_position_embeddings when shorter), training.global_batch 8 (one micro-batch per GPU) (docs/import.md); --set them for others"
for cmd in run memory plan; do
    c=$cmd
    [ "$cmd" = run ] && c=
    # shellcheck disable=SC2086 # $c is empty for the run command
    "$bin" $c --from hf-config "$cfg" --hardware dgx-h100 --gpus 8 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 3 ] || fail "$cmd --from hf-config: exit $rc"
    grep -qxF "$note" "$tmp/err" || fail "$cmd --from hf-config: no defaults note: $(head -n 2 "$tmp/err")"
    grep -q 'seq 4096\|4096 tokens\|x 4096' "$tmp/out" || fail "$cmd --from hf-config: no seq 4096 in the report"
done
"$bin" memory --from hf-config "$cfg" --hardware dgx-h100 --gpus 8 --set training.seq_len=2048 \
    >/dev/null 2>"$tmp/err"
grep -q '^note: .*training.global_batch 8 (one micro-batch per GPU)' "$tmp/err" &&
    ! grep -q 'training.seq_len 4096' "$tmp/err" || fail "--set seq_len: $(cat "$tmp/err")"
"$bin" memory --from hf-config "$cfg" --hardware dgx-h100 >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q 'pass --gpus' "$tmp/err" || fail "without --gpus: exit $rc: $(cat "$tmp/err")"
[ $failures -eq 0 ] || exit 1
echo "import_bare.sh: ok"
