#!/bin/sh
# The reproducers of issues 17 and 25 (adversarial runs: crashes, hangs, wrong answers, lost files),
# each with the outcome it must have now: exit 1 with a precise message, or a correct answer.
# Each takes milliseconds; the limit (5 s, 20 s under the sanitizers) only tells a hang from a
# loaded machine. The exact messages of most are also rows of the
# bad-input tables (tests/bad/cases.tsv, cli.tsv); the 100,000-layer model is
# tests/cli/deep_model.sh, complete traces tests/cli/trace_ranks.sh. Run from the repository
# root: tests/cli/reproducers.sh path/to/simtrain
set -u
bin=${1:?usage: tests/cli/reproducers.sh SIMTRAIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
limit=5
[ -n "${ASAN_OPTIONS:-}" ] && limit=20
failures=0
n=0
fail() {
    printf 'FAIL %s\n' "$*"
    failures=$((failures + 1))
}

# run ARG...: simtrain ARG... within the limit; $rc, $tmp/out, $tmp/err
run() {
    n=$((n + 1))
    timeout "$limit" "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}

# refused NAME TEXT ARG...: exit 1, and the first stderr line contains TEXT
refused() {
    name=$1 text=$2
    shift 2
    run "$@"
    if [ "$rc" -ne 1 ] || ! head -n 1 "$tmp/err" | grep -qF -- "$text"; then
        fail "$name: exit $rc (want 1 within $limit s), want '$text' in: $(head -n 1 "$tmp/err")"
    fi
}

# answers NAME ARG...: exit 0 (the run is correct now; the caller checks what it printed)
answers() {
    name=$1
    shift
    run "$@"
    [ "$rc" -eq 0 ] || fail "$name: exit $rc (want 0): $(head -n 1 "$tmp/err")"
}

# json_lt NAME KEY LIMIT: the number KEY in $tmp/out (a --json document) is below LIMIT
json_lt() {
    v=$(sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\([-0-9.e+]*\).*/\1/p" "$tmp/out" | head -n 1)
    awk -v v="$v" -v l="$3" 'BEGIN { exit !(v != "" && v + 0 < l + 0) }' ||
        fail "$1: $2 = '$v', want below $3"
}

sum() { cksum <"$1"; }

# ---- crashes ---------------------------------------------------------------------------------
# a DeepSpeed config without zero_optimization: its stand-in empty block was a compound literal
# that died with its `if` (SIGSEGV in zero_keys() at -O2; found by this round's sweep)
printf '{\n  "train_micro_batch_size_per_gpu": 1,\n  "bf16": {"enabled": true}\n}\n' >"$tmp/ds.json"
answers "a DeepSpeed config without zero_optimization" import deepspeed "$tmp/ds.json" \
    --model-config tests/corpus/hf/meta-llama--Meta-Llama-3.1-8B.config.json --hardware dgx-h100 \
    --gpus 8 --set training.seq_len=1024
grep -q 'sharding: none' "$tmp/out" || fail "a DeepSpeed config without zero_optimization: no sharding: none in $(head -n 3 "$tmp/out")"
refused "1-byte DDP buckets" "ddp.bucket_size 1 B makes" \
    scenarios/ddp_8gpu.yaml --set 'ddp.bucket_size=1 B'
SIMTRAIN_DATA=tests/fixtures refused "1-byte DDP buckets in YAML" "ddp.bucket_size 1 B makes" \
    tests/bad/ddp_bucket_tiny.yaml
refused "1-element ZeRO-2 buckets" "zero.reduce_bucket_size 1 makes" scenarios/sharding_7b_8gpu.yaml \
    --set parallelism.sharding=zero2 --set zero.reduce_bucket_size=1 --set zero.allgather_bucket_size=1
refused "2^30 micro-batches (int overflow in build.c)" "= 1073741824 micro-batches per step" \
    scenarios/gpt2_1gpu.yaml --set training.global_batch=1073741824 --set training.micro_batch=1
refused "validate /dev/zero" "not a regular file" validate /dev/zero
printf 'id,hardware,num_gpus,layers,hidden,heads,vocab,seq_len,global_batch,metric,value\n' >"$tmp/v.csv"
printf 'deep,dgx-h100,8,100000000,768,12,50257,1024,64,step_time_s,1\n' >>"$tmp/v.csv"
printf 'fine,dgx-h100,8,12,768,12,50257,1024,64,step_time_s,1\n' >>"$tmp/v.csv"
answers "validate row of 1e8 layers" validate "$tmp/v.csv"
grep -q '^deep .*error at line 2: 100000000 layers' "$tmp/out" ||
    fail "validate: the 1e8-layer row is not an error with its line: $(grep '^deep' "$tmp/out")"
grep -q '^fine .* %$' "$tmp/out" || fail "validate: the good row after it was not evaluated"

# ---- hangs -----------------------------------------------------------------------------------
run sweep scenarios/gpt2_1gpu.yaml --vary training.micro_batch=1,2,4,8,16,32,64,128,256,512 \
    --vary training.seq_len=128,256,512,1024,2048,4096,8192,16384,32768,65536 \
    --vary training.global_batch=512,1024,2048,4096,8192,16384,32768,65536,131072,262144 \
    --vary parallelism.dp=1,2,3,4,5,6,7,8,9,10 --vary cluster.gpus=1,2,3,4,5,6,7,8,9,10 \
    --vary training.memory_fragmentation=0,0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09
[ "$rc" -eq 1 ] && grep -q "1000000 points" "$tmp/err" && grep -q -- "--force" "$tmp/err" ||
    fail "a sweep of 10^6 points: exit $rc: $(head -n 1 "$tmp/err")"
refused "--ranks all over 10^6 GPUs" "simulating 1048576 ranks would take" \
    tests/fixtures/scenarios/minimal.yaml --set hardware=tests/fixtures/hardware/tiny-box.yaml \
    --set cluster.nodes=131072 --set training.global_batch=1048576 --set training.micro_batch=1 \
    --ranks all

# ---- wrong answers ---------------------------------------------------------------------------
refused "1e-20 FLOP/s peak" "'bf16' must be at least 1.00 GFLOP/s" \
    scenarios/gpt2_1gpu.yaml --set 'hardware.gpu.flops.bf16=1e-20 FLOPS'
refused "collective --sizes 1:1e30" "--sizes: 1e+30 B is more than" \
    collective --hardware dgx-h100 --sizes 1:1e30
refused "collective --algo nvls on PCIe" "--algo nvls needs an NVSwitch system" \
    collective --hardware ws-4x-rtx4090 --algo nvls
refused "collective --gpus 12 on 8-GPU nodes" "--gpus 12 is not a whole number of 8-GPU nodes" \
    collective --hardware dgx-h100 --gpus 12
m=hardware/calibration/measurements/dgx-h100.csv
{ head -n 1 $m; for i in 1 2 3 4 5 6 7 8 9 10; do sed -n 2p $m; sed -n 2p $m; sed -n 2p $m; sed -n 2p $m; sed -n 2p $m; done; } >"$tmp/same.csv"
refused "calibrate 50 identical rows" "the row repeats line 2 in every measured column" \
    calibrate "$tmp/same.csv" --hardware dgx-h100
{ head -n 1 $m; echo 'gemm,m=1e18 n=1e18 k=1e18,,fp8,H100,1,1,,,,274.1,,2024-09,x,y'; } >"$tmp/big.csv"
refused "calibrate m=n=k=1e18" "'m' must be a whole number of at most 2147483647" \
    calibrate "$tmp/big.csv" --hardware dgx-h100
head -n 1 $m >"$tmp/header.csv"
refused "calibrate a header-only file" "nothing to fit" calibrate "$tmp/header.csv" --hardware dgx-h100
{ head -n 1 $m; echo 'warp_shuffle,,,,H100,1,1,,,1,,,2024-09,x,y'; } >"$tmp/unknown.csv"
refused "calibrate an unknown kernel" "unknown kernel 'warp_shuffle'" \
    calibrate "$tmp/unknown.csv" --hardware dgx-h100
{ head -n 1 $m; echo 'all_reduce,,1048576,,H100,1e30,1,,,100,,,2024-09,x,y'; } >"$tmp/gpus.csv"
refused "calibrate gpus=1e30 (float-cast overflow)" "gpus '1e30' exceeds" \
    calibrate "$tmp/gpus.csv" --hardware dgx-h100
refused "training.tokens=1e30" "tokens 1e+30 is more than 1e+16" \
    scenarios/gpt2_1gpu.yaml --set training.tokens=1e30
refused "LoRA targets [q,q,q]" "'q' is listed twice in 'targets'" \
    scenarios/qlora_7b_4090.yaml --set 'training.lora.targets=[q,q,q]'
printf 'id,hardware,num_gpus,layers,hidden,heads,vocab,seq_len,global_batch,metric,value\n' >"$tmp/nul.csv"
printf 'a,dgx-h100,8,12,76\0008,12,50257,1024,64,step_time_s,1\n' >>"$tmp/nul.csv"
refused "a NUL in a CSV field" "nul.csv:2:19: error: NUL byte in a field" validate "$tmp/nul.csv"
# MFU counts what runs: no weight gradients for frozen weights (was 83.3 % and 54.6 %)
run scenarios/qlora_7b_4090.yaml --set training.finetune=lora --set training.recompute=none \
    --json - --quiet
json_lt "LoRA on a 4090" mfu 0.8
grep -q '"flops_convention":.*frozen weights 4N' "$tmp/out" || fail "LoRA: no FLOP convention"
answers "QLoRA on a 4090" scenarios/qlora_7b_4090.yaml --json - --quiet
json_lt "QLoRA on a 4090" mfu 0.55
grep -q '"hfu":' "$tmp/out" || fail "QLoRA: no HFU"

# ---- files lost or destroyed -----------------------------------------------------------------
before=$(sum scenarios/ddp_8gpu.yaml)
refused "--json over the scenario" "it is an input of this run" \
    scenarios/ddp_8gpu.yaml --json scenarios/ddp_8gpu.yaml
[ "$(sum scenarios/ddp_8gpu.yaml)" = "$before" ] || fail "--json changed scenarios/ddp_8gpu.yaml"
if [ -w /dev/full ]; then
    refused "--trace /dev/full" "cannot write '/dev/full': No space left on device" \
        tests/fixtures/scenarios/minimal.yaml --trace /dev/full
fi
refused "--plot under a missing directory" "its parent '$tmp/nonexistent' does not exist" \
    scenarios/gpt2_1gpu.yaml --plot "$tmp/nonexistent/dir"
[ -e "$tmp/nonexistent" ] && fail "--plot created $tmp/nonexistent"
before=$(sum hardware/calibration/dgx-h100.yaml)
answers "the README's calibrate" calibrate $m --hardware dgx-h100
[ "$(sum hardware/calibration/dgx-h100.yaml)" = "$before" ] ||
    fail "calibrate changed hardware/calibration/dgx-h100.yaml"
grep -q '^hardware: dgx-h100$' "$tmp/out" || fail "calibrate: no calibration on standard output"

# ---- help, byte-order marks, line numbers, per-rank counts, 1 GPU ------------------------------
answers "memory --help" memory --help
grep -q -- '--no-what-if' "$tmp/out" || fail "memory --help does not list --no-what-if"
{ printf '\357\273\277'; cat tests/fixtures/scenarios/minimal.yaml; } >"$tmp/bom.yaml"
SIMTRAIN_DATA=tests/fixtures answers "a YAML file with a byte-order mark" "$tmp/bom.yaml" --quiet
answers "ddp_8gpu" scenarios/ddp_8gpu.yaml
grep ' each (x' "$tmp/out" >"$tmp/stage"
answers "ddp_8gpu --ranks all" scenarios/ddp_8gpu.yaml --ranks all
grep ' each (x' "$tmp/out" >"$tmp/all"
cmp -s "$tmp/stage" "$tmp/all" || fail "per-rank counts change with --ranks all"
answers "gpt2_1gpu" scenarios/gpt2_1gpu.yaml
grep -q '^  hardware   dgx-h100: 1 GPU of one 8-GPU node' "$tmp/out" ||
    fail "1-GPU hardware line: $(grep '^  hardware' "$tmp/out")"

# ---- issue 25 (round 3): rows refused, no -inf in JSON, no quadratic input -----------------------
SIMTRAIN_DATA=tests/fixtures answers "validate 1e308" validate tests/bad/csv/runs-huge-value.csv \
    --json "$tmp/v.json"
grep -q "value '1e308' is outside what a step_time_s can measure" "$tmp/out" ||
    fail "validate: a measured 1e308 is not refused: $(grep '^r1' "$tmp/out")"
grep -qi 'inf' "$tmp/v.json" && fail "validate --json holds an infinity"
for f in runs-hex-value:"value '0x1p-4' is not a positive number" \
    runs-hex-int:"layers '0x2' is not an integer >= 1" \
    runs-kv-heads-zero:"kv_heads '0' is not an integer >= 1"; do
    SIMTRAIN_DATA=tests/fixtures answers "validate ${f%%:*}" validate "tests/bad/csv/${f%%:*}.csv"
    grep -qF "${f#*:}" "$tmp/out" || fail "validate ${f%%:*}: no '${f#*:}': $(grep '^r1' "$tmp/out")"
done
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "c%d,", i; print "c0" }' >"$tmp/wide.csv"
refused "a runs CSV of 100,000 header columns (was 12 s)" "duplicate column 'c0' in the header" \
    validate "$tmp/wide.csv"
vals=$(awk 'BEGIN { for (i = 0; i < 10000; i++) printf "1,"; print "1" }')
refused "--vary with 10,000 repeated values (was 34 s)" "value '1' is given twice" \
    sweep tests/fixtures/scenarios/minimal.yaml --vary "training.micro_batch=$vals"
for f in /etc/passwd; do # a path to a file of another kind: refused, its text not echoed
    refused "simtrain $f" "error: expected a mapping of keys" "$f"
    grep -q root "$tmp/err" && fail "simtrain $f echoes the file: $(cat "$tmp/err")"
    refused "import hf-config $f" "error: invalid JSON" import hf-config "$f"
    grep -q root "$tmp/err" && fail "import hf-config $f echoes the file: $(cat "$tmp/err")"
done
# a byte that is no UTF-8 text, or a terminal escape, after the first line: the position, and
# none of the file's bytes (the first-byte case above, made consistent: base/diag.c echoable())
printf 'hardware: dgx-h100\nworkload: llama3-8b\ndescription: "caf\377 secret"\n' >"$tmp/u.yaml"
printf 'hardware: dgx-h100\nworkload: llama3-8b\ndescription: "\033[2J secret"\n' >"$tmp/e.yaml"
printf '{\n  "hidden_size": 512,\n  "model_type": "ll\377 secret"\n}\n' >"$tmp/u.json"
printf '{\n  "hidden_size": 512,\n  "model_type": "\033[31m secret"\n}\n' >"$tmp/e.json"
for f in u.yaml e.yaml; do
    refused "a scenario with a bad byte on line 3 ($f)" "$tmp/$f:3:" "$tmp/$f"
    grep -q secret "$tmp/err" && fail "simtrain $f echoes the file: $(cat "$tmp/err")"
done
for f in u.json e.json; do
    refused "an HF config with a bad byte on line 3 ($f)" "$tmp/$f:3:" import hf-config "$tmp/$f" \
        --hardware dgx-h100 --gpus 8
    grep -q secret "$tmp/err" && fail "import hf-config $f echoes the file: $(cat "$tmp/err")"
done

# --set over a calibrated hardware's efficiency and sustained-clock keys: the user's value wins
# over the calibration file's (config/load.c calibration_keep_overrides), once per refusal
step_s() { sed -n 's/^[[:space:]]*"step_time_s":[[:space:]]*\([-0-9.e+]*\).*/\1/p' "$1" | head -n 1; }
answers "the flagship as calibrated" scenarios/70b_256gpu.yaml --json -
cal=$(step_s "$tmp/out")
for set in hardware.efficiency.gemm_max=0.5 "hardware.gpu.clock.sustained.bf16=1500 MHz"; do
    answers "--set $set on dgx-h100 (calibrated)" scenarios/70b_256gpu.yaml --json - --set "$set"
    awk -v a="$(step_s "$tmp/out")" -v b="$cal" 'BEGIN { exit !(a + 0 > b * 1.05) }' ||
        fail "--set $set: step $(step_s "$tmp/out") s, want above the calibrated $cal s"
done
refused "--set hardware.efficiency.gemm_max=7 over a calibration" "must be at most 1" \
    scenarios/70b_256gpu.yaml --set hardware.efficiency.gemm_max=7
[ "$(grep -c error: "$tmp/err")" -eq 1 ] || fail "gemm_max=7 refused more than once: $(cat "$tmp/err")"

# offloaded states beyond the host RAM per GPU: said, and exit 3 like a GPU that does not fit
# (was "49 MiB per GPU (0 MiB of host RAM per GPU)" and exit 0; found by #25's key sweep)
run memory tests/fixtures/scenarios/minimal.yaml --set parallelism.sharding=zero2 \
    --set training.offload=optimizer --set "hardware.node.host.memory=1 MiB" --no-what-if --no-limits
[ "$rc" -eq 3 ] && grep -q "does NOT fit the 0 MiB of host RAM per GPU" "$tmp/out" ||
    fail "offload beyond host RAM: exit $rc, $(grep 'Host memory' "$tmp/out")"
run memory tests/fixtures/scenarios/minimal.yaml --set parallelism.sharding=zero2 \
    --set training.offload=optimizer --set "hardware.node.host.memory=1 MiB" --no-what-if \
    --no-limits --json -
[ "$rc" -eq 3 ] && grep -q '"host_fits": false' "$tmp/out" && grep -q '"fits": true' "$tmp/out" ||
    fail "offload beyond host RAM, --json: exit $rc, $(grep host_ "$tmp/out")"
# the what-if table: its offload rows do not fit a host with 1 MiB of RAM, and say why
run memory tests/fixtures/scenarios/minimal.yaml --set "hardware.node.host.memory=1 MiB" --no-limits
grep -q "CPU offload of optimizer (ZeRO-2 Offload) .* no .* host RAM short" "$tmp/out" ||
    fail "what-if offload row on a 1 MiB host: $(grep 'CPU offload of' "$tmp/out")"
answers "offload within host RAM" memory tests/fixtures/scenarios/minimal.yaml \
    --set parallelism.sharding=zero2 --set training.offload=optimizer --no-what-if --no-limits
grep -q "Host memory for offloaded states: about 49 MiB per GPU (64.0 GiB of host RAM per GPU)" \
    "$tmp/out" || fail "offload within host RAM: $(grep 'Host memory' "$tmp/out")"

[ $failures -eq 0 ] || exit 1
echo "reproducers: $n runs ok"
