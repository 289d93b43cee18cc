#!/usr/bin/env bash
# One device call (the `run` tool): ncu's detailed sections (throughput, memory, occupancy, warp
# stalls) for single launches of the kernels named, in a seed-mlp step under the policies given,
# written to $OUT/detail-<policy>.txt. Uses the mantissa-cli carried in .deps/bin.
#   usage: bench/gpu_kernel_detail.sh REGEX POLICY [POLICY...]
#   e.g.   bench/gpu_kernel_detail.sh 'code_tile|block_kernel' mixed_float8 mxfp8_e4m3
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:?this script runs under the run tool, which sets OUT}
regex=$1
shift
nv=$(python3 -c 'import nvidia, os, glob; print(":".join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "*", "lib")))))' 2>/dev/null || true)
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.deps/lib:/usr/local/cuda/lib64${nv:+:$nv}"
mkdir -p .deps/mnist && tar -C .deps/mnist -xzf .deps/mnist.tar.gz
export MANTISSA_DATA=$PWD/.deps/mnist
cli=.deps/bin/mantissa-cli
config=$out/seed-fp8.config.json
python3 - resources/experiments/seed-mlp.json > "$config" <<'EOF2'
import json, sys
e = json.load(open(sys.argv[1]))
e["policy"] = "mixed_float8"
e["recipe"] = {"gemm": "fp8"}
print(json.dumps(e))
EOF2
for policy in "$@"; do
    timeout 150 ncu -k "regex:$regex" -c 4 --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
        --section ComputeWorkloadAnalysis "$cli" bench --config "$config" --device cuda \
        --policies "$policy" --steps 1 --warmup 1 > "$out/detail-$policy.txt" 2>&1
    echo "== $policy: rc $?"
done
