#!/usr/bin/env bash
# One device call of a GPU session (the `run` tool): the stages of bench/run_gpu.sh with their
# logs kept in one tarball that comes back even when the call is cut off at its limit (the tool
# returns at most 8 files). A mantissa-cli carried from the build machine is used when all its
# libraries resolve there (.deps/bin, from `bench/prepare_deps.sh --cli`: -march=x86-64-v3, no MPI);
# otherwise the build stage builds one first.
# e.g. run(carry=[".deps"], timeout_s=480, command="bash bench/gpu_call.sh --stage check --stage bench")
#   usage: bench/gpu_call.sh [run_gpu.sh arguments...]   (default: --stage check --stage bench)
# Put MANTISSA_COMMIT=<git rev-parse --short HEAD, run here> before it in the command: the box's
# copy of the tree may carry a stale .git (the first run recorded an older commit).
set -uo pipefail
cd "$(dirname "$0")/.."
real_out=${OUT:?this script runs under the run tool, which sets OUT}
export OUT=/tmp/gpu_out
mkdir -p "$OUT"
pack() { tar czf "$real_out/gpu.tmp" -C "$OUT" . && mv "$real_out/gpu.tmp" "$real_out/gpu.tgz"; }
(while sleep 20; do pack; done) &
packer=$!
# Every NVIDIA wheel's lib folder (cuBLAS, cuDNN, NCCL) after whatever the loader path has.
nv=$(python3 -c 'import nvidia, os, glob; print(":".join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "*", "lib")))))' 2>/dev/null || true)
# .deps/lib: the carried build's Debian libraries the GPU box may lack (ONNX protobuf).
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.deps/lib:/usr/local/cuda/lib64${nv:+:$nv}"
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(--stage check --stage bench)
cli=build/headless/app/mantissa-cli
if [ -f .deps/bin/mantissa-cli.xz ] || [ -x .deps/bin/mantissa-cli ]; then
    mkdir -p build/headless/app
    if [ -f .deps/bin/mantissa-cli.xz ]; then
        # Python's lzma: the box has Python (PyTorch), perhaps not xz.
        python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
            .deps/bin/mantissa-cli.xz $cli && chmod +x $cli
    else
        cp .deps/bin/mantissa-cli $cli
    fi
    echo "carried mantissa-cli, built at $(cat .deps/bin/commit.txt 2> /dev/null | tr '\n' ' ')"
fi
if [ -x $cli ]; then
    ldd $cli > "$OUT/ldd.txt" 2>&1
    grep -E "not found|cublas|cudnn|nccl|gomp" "$OUT/ldd.txt"
    grep -q "not found" "$OUT/ldd.txt" && { echo "carried mantissa-cli lacks libraries: building"; stages=(--stage build "${stages[@]}"); }
else
    stages=(--stage build "${stages[@]}")
fi
rc=0
bash bench/run_gpu.sh "${stages[@]}" || rc=$?
kill $packer 2> /dev/null
pack
cp "$OUT/selftest.txt" "$real_out/" 2> /dev/null
exit $rc
