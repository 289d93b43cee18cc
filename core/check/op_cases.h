// The op-case table: every Backend op x geometry x dtype, with its tolerance rule, run the same way
// on any pair of engines (CUDA against the CPU engine, the CPU engine against its float64
// reference, the CPU engine against itself). selftest, GPU qualification and tests/ops all read it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.h"

namespace mantissa {

// One tensor on both engines (side 0: the reference, 1: the candidate), filled from the same host
// values rounded once to its dtype.
struct Twin {
    Buffer buffer[2];
    Tensor tensor[2];
    Tensor& on(int side) { return tensor[side]; }
};

// The two engines one case runs on, and what it allocated there (freed before the engines are).
class CaseContext {
public:
    CaseContext(Backend& reference, Backend& candidate);
    ~CaseContext();
    CaseContext(const CaseContext&) = delete;
    CaseContext& operator=(const CaseContext&) = delete;

    Backend& engine(int side) { return *m_engines[side]; }
    // A tensor on both sides; `values` repeat to fill it (none: zeros).
    Twin& make(const std::string& name, DType dtype, Shape shape,
               const std::vector<double>& values = {});
    // Scratch memory of `bytes` on one side, alive until the case ends.
    Workspace workspace(int side, std::size_t bytes);
    // Runs op(engine, side) for the reference, then the candidate.
    void both(const std::function<void(Backend&, int)>& op);

private:
    Backend* m_engines[2];
    std::vector<std::unique_ptr<Twin>> m_twins;
    std::vector<Buffer> m_scratch;
};

struct OpCase {
    std::string name; // the op: "conv2d bwd-filter"
    DType dtype = DType::Float32;
    std::string geometry; // "4x10x10x3 k3 s1 p0"
    // The largest relative error (parity.h's measure) allowed against another engine computing at
    // the same dtype (CUDA against the CPU engine), and against the float64 reference.
    double tolerance = 0;
    double float64_tolerance = 0;
    // Runs the op on both sides of `ctx` and returns the outputs to compare. Throws on a mismatch
    // that is not a tensor (step scalars).
    std::function<std::vector<Twin*>(CaseContext&)> body;
    // Runs only where both engines supports_fp8_gemm() (run_case skips it elsewhere). Such cases
    // are at the FP8 GEMM's output dtypes (float32, bfloat16), not at every dtype.
    bool needs_fp8_gemm = false;
};

// The whole table, every op x geometry x dtype (float64, float32, float16, bfloat16), and the FP8
// GEMM's cases at float32 and bfloat16.
std::vector<OpCase> op_cases();
// One line: "conv2d bwd-filter 4x10x10x3 k3 s1 p0 bfloat16".
std::string describe(const OpCase& op_case);

// The relative tolerance rule per storage dtype: a few units in the last place of the format,
// widened for another engine's summation order and math library.
double dtype_tolerance(DType dtype);

} // namespace mantissa
