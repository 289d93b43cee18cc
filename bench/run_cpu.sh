#!/usr/bin/env bash
# Reproduces every CPU figure in bench/RESULTS.md on this machine: accuracy per policy, the pure
# float16 failure, step times per policy, and the GEMM throughput. Run from the repository root.
set -euo pipefail
cli=${MANTISSA_CLI:-build/dev/app/mantissa-cli}
out=${1:-bench/out}
mkdir -p "$out"
exp=resources/experiments

echo "== machine"; lscpu | grep -E 'Model name|^CPU\(s\)' || true; date -u +%Y-%m-%d

echo "== mlp-small, 3 epochs, per policy (test accuracy)"
for p in float32 mixed_float16 mixed_bfloat16 float16 bfloat16 float64; do
    "$cli" train --config $exp/mlp-small.json --device cpu --policy $p --metrics "$out/mlp-small-$p.jsonl" | tail -1
done

echo "== cnn, 3 epochs, mixed_float16"
"$cli" train --config $exp/cnn.json --device cpu --metrics "$out/cnn-mixed_float16.jsonl" | tail -1

echo "== RMSprop lr 1e-3: pure float16 against mixed_float16 (mlp-small)"
for args in "--policy float16 --loss-scale none" "--policy float16" "--policy mixed_float16" "--policy float32"; do
    echo "-- $args"
    "$cli" train --config $exp/mlp-small.json --device cpu --lr 0.001 $args \
        --metrics "$out/rmsprop-$(echo "$args" | tr ' ' '_').jsonl" | grep -E '^[0-9]+/|completed|diverged' || true
done

echo "== step time per policy (mlp-small, batch 128, median of 300 steps)"
"$cli" bench --config $exp/mlp-small.json --device cpu --steps 300 --warmup 20 \
    --policies float32,mixed_float16,mixed_bfloat16,float16,bfloat16,float64

echo "== GEMM throughput"
"$cli" bench --gemm --device cpu --sizes 512,1024,2048 --dtypes float32,float16,bfloat16 --steps 10

echo "== a large Dense layer: seed-mlp (784-4096-4096-10) at batch 256, float32"
"$cli" bench --config $exp/seed-mlp.json --device cpu --batch 256 --policies float32,mixed_float16 --steps 10 --warmup 2
