#!/usr/bin/env bash
# The whole GPU session in one call: build the headless preset, run the self-test, then run
# Mantissa and the PyTorch peer alternately per (config, policy), appending one JSON line per
# measured pair to bench/results.jsonl and regenerating the table in bench/RESULTS.md.
# Needs .deps/ (bench/prepare_deps.sh, run on the build machine) carried along. Every stage's
# output goes to $OUT (the run tool's folder; bench/out/gpu otherwise).
#   usage: bench/run_gpu.sh [build] [selftest] [bench] [--quick]   (no stage named: all three)
# One `run` call may last 10 minutes and a warm machine is released after ~30 s idle, so the first
# call is usually everything with one pair per case (--quick); a second call can add pairs with
# `build bench` (the build is a no-op on a still-warm machine). Pairs land in $OUT as they go.
set -u -o pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-$root/bench/out/gpu}
mkdir -p "$out"
quick=0
do_build=0 do_selftest=0 do_bench=0
for arg in "$@"; do
    case $arg in
    --quick) quick=1 ;;
    build) do_build=1 ;;
    selftest) do_selftest=1 ;;
    bench) do_bench=1 ;;
    *) echo "run_gpu.sh: unknown argument '$arg' (build, selftest, bench, --quick)" >&2; exit 2 ;;
    esac
done
if [ $((do_build + do_selftest + do_bench)) -eq 0 ]; then do_build=1 do_selftest=1 do_bench=1; fi
reps=$((quick ? 1 : 3))
status=0
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$out/run_gpu.log"; }
fail() { log "FAILED: $*"; status=1; }

[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
log "stage 1/5: environment"
{
    nvidia-smi || echo "nvidia-smi: not available"
    command -v nvcc && nvcc --version || echo "nvcc: not on PATH"
    cmake --version | head -1
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' \
        || echo "python3/torch: not available"
} > "$out/env.txt" 2>&1
head -40 "$out/env.txt"

log "stage 2/5: dependencies from .deps/"
if [ ! -d .deps/include/eigen3 ] || [ ! -f .deps/mnist.tar.gz ]; then
    fail ".deps/ is missing or incomplete: run bench/prepare_deps.sh on the build machine and carry .deps"
    exit 2
fi
mkdir -p .deps/mnist && tar -C .deps/mnist -xzf .deps/mnist.tar.gz || { fail "unpacking MNIST"; exit 2; }
export MANTISSA_DATA=$root/.deps/mnist
# cuDNN from PyTorch's wheel when the toolkit has none.
cudnn_root=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null || true)
if [ -n "$cudnn_root" ] && [ -d "$cudnn_root/lib" ]; then
    # cuDNN 9 dlopens its sub-libraries (libcudnn_cnn.so.9, ...) from the loader's search path.
    export LD_LIBRARY_PATH="$cudnn_root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

cli=$root/build/headless/app/mantissa-cli
if [ $do_build -eq 1 ]; then
log "stage 3/5: build (headless preset)"
generator=()
command -v ninja > /dev/null || generator=(-G "Unix Makefiles") # the preset asks for Ninja
if ! cmake --preset headless ${generator[@]+"${generator[@]}"} -DCMAKE_PREFIX_PATH="$root/.deps" \
        ${cudnn_root:+-DCUDNN_ROOT=$cudnn_root} > "$out/configure.log" 2>&1; then
    tail -30 "$out/configure.log"; fail "configure (see configure.log)"; exit 3
fi
if ! grep -q "^MANTISSA_WITH_CUDA:BOOL=ON" build/headless/CMakeCache.txt; then
    fail "the CUDA engine is not configured (nvcc not found?): put the CUDA toolkit's bin on PATH"
    exit 3
fi
grep -E "cuDNN|CUDA" "$out/configure.log" | head -5
if ! cmake --build build/headless -j"$(nproc)" > "$out/build.log" 2>&1; then
    grep -E "error|Error" "$out/build.log" | head -30; fail "build (see build.log)"; exit 3
fi
grep -ci "warning" "$out/build.log" | sed 's/^/build warnings: /'
fi
[ -x "$cli" ] || { fail "$cli is missing: run the build stage first"; exit 3; }

if [ $do_selftest -eq 1 ]; then
log "stage 4/5: selftest (every CUDA op x dtype against the CPU engine, a step, short runs)"
"$cli" selftest > "$out/selftest.txt" 2>&1
selftest_rc=$?
tail -80 "$out/selftest.txt"
[ $selftest_rc -eq 0 ] || fail "selftest exited $selftest_rc (see selftest.txt)"
fi
[ $do_bench -eq 1 ] || { log "done (status $status); files in $out"; exit $status; }

log "stage 5/5: Mantissa and PyTorch AMP, alternately"
exp=resources/experiments
steps=$((quick ? 20 : 50))
gemm_json="$out/gemm.jsonl"
"$cli" bench --gemm --device cuda --sizes 4096,8192 --dtypes float16,float32 --steps 20 --json \
    > "$gemm_json" 2> "$out/gemm.err" || fail "cuBLAS GEMM throughput (see gemm.err)"
cat "$gemm_json"
[ -s "$gemm_json" ] && python3 bench/gpu_results.py gemm "$gemm_json" bench/results.jsonl
# config | policy | extra flags for both | label
cases=(
    "seed-mlp|mixed_float16||mixed_float16"
    "seed-mlp|float32||float32"
    "seed-mlp|float32|--tf32|float32+tf32"
    "mlp-small|mixed_float16||mixed_float16"
    "mlp-small|float32||float32"
    "cnn|mixed_float16|--batch 256|mixed_float16"
)
for rep in $(seq 1 $reps); do
    for c in "${cases[@]}"; do
        IFS='|' read -r config policy extra label <<< "$c"
        tag="$config-$label-$rep"
        # shellcheck disable=SC2086
        "$cli" bench --config $exp/$config.json --device cuda --policies "$policy" $extra \
            --steps $steps --warmup 10 --json > "$out/m-$tag.json" 2> "$out/m-$tag.err" \
            || { fail "mantissa $tag (see m-$tag.err)"; tail -3 "$out/m-$tag.err"; continue; }
        # shellcheck disable=SC2086
        python3 bench/peer_torch.py --config $exp/$config.json --policy "$policy" $extra \
            --steps $steps --warmup 10 > "$out/p-$tag.json" 2> "$out/p-$tag.err" \
            || { fail "peer $tag (see p-$tag.err)"; tail -3 "$out/p-$tag.err"; continue; }
        python3 bench/gpu_results.py pair "$out/m-$tag.json" "$out/p-$tag.json" "$label" \
            bench/results.jsonl "$rep" | tee -a "$out/results.jsonl"
    done
done
python3 bench/gpu_results.py table bench/results.jsonl bench/RESULTS.md \
    && cp bench/RESULTS.md bench/results.jsonl "$out/" || fail "table"
log "done (status $status); files in $out"
exit $status
