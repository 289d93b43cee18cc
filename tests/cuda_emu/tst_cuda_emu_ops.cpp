// The CUDA engine's own code on the CPU: every case of the op-case table (core/check/op_cases.h)
// run on the CPU engine and on the kernel emulator's CudaBackend (README.md here), under the
// table's rules, then a few training steps of every main policy compared step by step, as
// `selftest --require-gpu` does on a GPU. What it proves: the kernels' indexing, barriers,
// partial tiles and arithmetic as the host compiler builds them, and the engine's calls around
// them. What it cannot: timing, the hardware's FP8 instructions themselves, cuBLASLt's and cuDNN's
// own kernels (emu_libraries.cpp). CUDA Graph replay runs in cuda_emu_selftest instead. It also
// checks how the engine sets up the device's memory pool and its time marks.
//
// usage: cuda_emu_ops [substring]   (only the cases whose name holds it; no training steps)
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cuda/cuda_backend.h"
#include "core/check/op_cases.h"
#include "core/check/parity.h"
#include "core/data/synthetic_mnist.h"

using namespace mantissa;

int main(int argc, char** argv) {
    const std::string only = argc > 1 ? argv[1] : "";
    CpuBackend cpu;
    CudaBackend emulated(0);
    int failures = 0, ran = 0, skipped = 0;
    // The engine keeps what cudaFreeAsync frees in the device's default pool (cuda_backend.cpp's
    // keep_pool_memory): at CUDA's default threshold, 0, every synchronisation would hand it back
    // to the OS and the next step's quantised convolutions would map fresh pages again.
    cudaMemPool_t pool = nullptr;
    std::uint64_t threshold = 0;
    if (cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess ||
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) != cudaSuccess ||
        threshold != UINT64_MAX) {
        std::printf("FAIL the default memory pool's release threshold is %llu, not the maximum\n",
                    static_cast<unsigned long long>(threshold));
        ++failures;
    }
    // A step timed plan step by plan step (Plan::train_step_timed) marks the engine's stream with
    // events rather than waiting after each step: one interval a step, none negative, and a mark
    // past those readied is refused.
    {
        Buffer buffer = emulated.allocate(1024 * sizeof(float));
        Tensor t{"marked", DType::Float32, {1024}, MemCategory::Workspace, buffer.data()};
        std::vector<double> ms;
        if (emulated.begin_time_marks(2)) {
            emulated.mark_time(0);
            emulated.fill(t, 1.0);
            emulated.mark_time(1);
            emulated.fill(t, 2.0);
            emulated.mark_time(2);
            ms = emulated.marked_intervals_ms();
        }
        bool refused = false;
        emulated.begin_time_marks(1);
        try {
            emulated.mark_time(2);
        } catch (const Error&) {
            refused = true;
        }
        if (ms.size() != 2 || ms[0] < 0 || ms[1] < 0 || !refused) {
            std::printf("FAIL time marks: %zu intervals (2 expected)%s\n", ms.size(),
                        refused ? "" : ", a mark past those readied accepted");
            ++failures;
        }
    }
    for (const OpCase& c : op_cases()) {
        if (!only.empty() && describe(c).find(only) == std::string::npos) continue;
        const CaseResult r = run_case(c, cpu, emulated);
        if (!r.skipped.empty()) {
            ++skipped;
            continue;
        }
        ++ran;
        if (r.ok()) continue;
        ++failures;
        std::printf("FAIL %s %s: error %.3g (tolerance %.1g)%s%s%s%s\n", r.name.c_str(),
                    std::string(dtype_name(r.dtype)).c_str(), r.error, r.tolerance,
                    r.failure.empty() ? "" : ": ", r.failure.c_str(), r.worst.empty() ? "" : " at ",
                    r.worst.c_str());
    }
    std::printf("op cases on %s: %d ran, %d failed, %d skipped\n", emulated.info().name.c_str(),
                ran, failures, skipped);
    if (only.empty()) {
        const Mnist data = synthetic_mnist(512, 64);
        for (const char* policy : {"float32", "mixed_float16", "mixed_bfloat16", "mixed_float8",
                                   "mxfp8_e4m3", "nvfp4"}) {
            const TrainingParity t = training_parity(cpu, emulated, data, policy, 3);
            std::printf("training steps (3) %-15s loss rel err %.3g (tolerance %.1g) %s%s\n",
                        policy, t.max_loss_rel_error, t.tolerance, t.ok() ? "ok" : "FAIL ",
                        t.failure.c_str());
            failures += t.ok() ? 0 : 1;
        }
    }
    return failures == 0 ? 0 : 1;
}
