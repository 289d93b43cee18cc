#!/usr/bin/env bash
# NOT YET RUN. The NCCL path on a machine with two or more GPUs (issue 19): `mpirun -np 2
# mantissa-cli train --data-parallel --device cuda` against one process on one GPU, with the
# same global batch, seed and data order. It needs mantissa-cli built with the CUDA engine,
# NCCL and Open MPI (bench/run_gpu.sh --stage build; its configure.log must say "Data-parallel
# CUDA ranks: on"), two visible GPUs and mpirun. Until a session runs it, the NCCL path is only
# known to compile.
#   usage: bench/run_gpu_multi.sh [--steps N]      (after bench/run_gpu.sh --stage build)
# Checks, as tests/tst_data_parallel does for CPU ranks:
#   - float32 policy, --allreduce-dtype float32: loss at every step within 1e-4 relative of one
#     process (only the summation order differs);
#   - bfloat16 and float16 wires: allreduce_bytes halved, loss within 2e-2 relative;
#   - mixed_float16: the same skip decisions as one process, and both ranks agree on each;
#   - a rank that dies (MANTISSA_TEST_FAIL_RANK=1:10): the job ends with an error naming the rank.
# Results: one JSON line per check in $OUT/multi_gpu.jsonl (bench/out/gpu_multi without the tool).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-$root/bench/out/gpu_multi}
mkdir -p "$out"
steps=50
while [ $# -gt 0 ]; do
    case $1 in
    --steps) steps=$2; shift 2 ;;
    *) echo "usage: bench/run_gpu_multi.sh [--steps N]" >&2; exit 2 ;;
    esac
done
cli=$root/build/headless/app/mantissa-cli
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$out/run_gpu_multi.log"; }
failures=0
fail() { log "FAILED: $*"; failures=$((failures + 1)); }

[ -x "$cli" ] || { log "FAILED: $cli is missing: run bench/run_gpu.sh --stage build first"; exit 2; }
command -v mpirun > /dev/null || { log "FAILED: mpirun is not installed (Open MPI)"; exit 2; }
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
[ "$gpus" -ge 2 ] || { log "FAILED: $gpus GPU(s) visible; the NCCL check needs two"; exit 2; }
if [ -f .deps/mnist/t10k-labels-idx1-ubyte ]; then export MANTISSA_DATA=$root/.deps/mnist; fi
# Containers run as root; NCCL_DEBUG=WARN puts NCCL's own account of a failure in the log.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_DEBUG=WARN
mlp=resources/experiments/mlp-small.json
# mpirun passes only the variables named with -x (and refuses unset ones).
pass_env=(-x NCCL_DEBUG)
[ -n "${MANTISSA_DATA:-}" ] && pass_env+=(-x MANTISSA_DATA)

# train NAME RANKS [args...]: one process on cuda:0 (RANKS=0) or mpirun -np RANKS NCCL ranks.
train() {
    local name=$1 ranks=$2
    shift 2
    local args=(train --config "$mlp" --max-steps "$steps" --metrics "$out/$name.jsonl" --quiet "$@")
    log "$name: $ranks rank(s): ${args[*]}"
    if [ "$ranks" -eq 0 ]; then
        "$cli" "${args[@]}" --device cuda:0 > "$out/$name.log" 2>&1
    else
        mpirun -np "$ranks" "${pass_env[@]}" "$cli" "${args[@]}" --device cuda --data-parallel > "$out/$name.log" 2>&1
    fi
}

# compare NAME ONE TWO TOLERANCE: per-step loss and skips of TWO against ONE.
compare() {
    python3 - "$out/$2.jsonl" "$out/$3.jsonl" "$4" "$1" << 'PY' | tee -a "$out/multi_gpu.jsonl"
import json, sys
one_path, two_path, tol, name = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
def steps(path):
    return [r for r in map(json.loads, open(path)) if r.get("type") == "step"]
one, two = steps(one_path), steps(two_path)
worst = max(abs(a["loss"] - b["loss"]) / abs(a["loss"]) for a, b in zip(one, two))
skips_agree = all(a["skipped"] == b["skipped"] and all(s == b["skipped"] for s in b["rank_skipped"])
                  for a, b in zip(one, two))
ok = len(one) == len(two) and worst <= tol and skips_agree
print(json.dumps({"check": name, "steps": len(two), "worst_relative_loss": worst, "tolerance": tol,
                  "skips_agree": skips_agree, "allreduce_bytes": two[-1]["allreduce_bytes"],
                  "allreduce_ms_last": two[-1].get("allreduce_ms"), "ok": ok}))
sys.exit(0 if ok else 1)
PY
}

train one_f32 0 --policy float32 || fail "one process, float32"
train nccl_f32 2 --policy float32 --allreduce-dtype float32 || fail "2 NCCL ranks, float32"
compare float32_wire one_f32 nccl_f32 1e-4 || fail "float32 wire vs one process"
for wire in bfloat16 float16; do
    train "nccl_$wire" 2 --policy float32 --allreduce-dtype "$wire" || fail "2 NCCL ranks, $wire"
    compare "${wire}_wire" one_f32 "nccl_$wire" 2e-2 || fail "$wire wire vs one process"
    python3 -c "
import json, sys
f = lambda p: [r for r in map(json.loads, open(p)) if r.get('type') == 'step'][-1]['allreduce_bytes']
sys.exit(0 if 2 * f('$out/nccl_$wire.jsonl') == f('$out/nccl_f32.jsonl') else 1)" \
        || fail "$wire wire does not halve the bytes"
done
train one_mixed 0 --policy mixed_float16 || fail "one process, mixed_float16"
train nccl_mixed 2 --policy mixed_float16 || fail "2 NCCL ranks, mixed_float16"
compare mixed_float16 one_mixed nccl_mixed 1e-3 || fail "mixed_float16 skips vs one process"
# A rank that dies after step 10: every rank must stop with an error naming it, in bounded time.
log "nccl_dead: rank 1 throws after step 10"
if MANTISSA_TEST_FAIL_RANK=1:10 timeout 300 mpirun -np 2 "${pass_env[@]}" \
    -x MANTISSA_TEST_FAIL_RANK "$cli" train --config "$mlp" --max-steps "$steps" --quiet \
    --metrics "$out/nccl_dead.jsonl" --device cuda --data-parallel > "$out/nccl_dead.log" 2>&1; then
    fail "a dead rank did not end the job with an error"
elif ! grep -q "rank 1 of 2 failed" "$out/nccl_dead.log"; then
    fail "a dead rank's error does not name it, or the job timed out (see nccl_dead.log)"
fi
log "done: $failures failure(s)"
[ "$failures" -eq 0 ]
