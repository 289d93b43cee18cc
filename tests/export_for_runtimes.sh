#!/usr/bin/env bash
# The ctest fixture of onnx_runtime_node and onnx_opencv: trains mlp-small and cnn briefly with
# mantissa-cli (CPU) and exports each run once for both runtimes: NAME.safetensors (the run's test
# accuracy in its metadata), NAME.onnx (float32) and NAME-f16.onnx (float16).
# Usage: export_for_runtimes.sh MANTISSA_CLI SOURCE_DIR MNIST_DIR OUT_DIR
# The data folder is found the way the CLI finds it: $MANTISSA_DATA when set, else MNIST_DIR.
set -euo pipefail

if [ $# -ne 4 ]; then
    echo "usage: $0 MANTISSA_CLI SOURCE_DIR MNIST_DIR OUT_DIR" >&2
    exit 2
fi
cli="$1" src="$2" mnist="${MANTISSA_DATA:-$3}" out="$4"
rm -rf "$out"
mkdir -p "$out"

# A few hundred steps: enough to put both models far above chance (~95%) so that a wrong layout
# or a misread weight shows as a large accuracy gap, in about 20 s on two cores.
train() {
    local name="$1" steps="$2"
    "$cli" train --config "$src/resources/experiments/$name.json" --data "$mnist" --device cpu \
        --max-steps "$steps" --quiet --export "$out/$name.safetensors" --export "$out/$name.onnx"
    "$cli" export --weights "$out/$name.safetensors" --out "$out/$name-f16.onnx" --dtype float16
}
train mlp-small 300
train cnn 100
