// Parity of two engines: one op case (op_cases.h) run on both, or a short training run on both
// with the loss compared step by step. The reference is the CPU engine (or its float64 form,
// float64_reference.h); the candidate is the engine under test (CUDA, or the CPU engine itself).
#pragma once

#include <string>

#include "core/backend/backend.h"
#include "core/check/op_cases.h"
#include "core/data/mnist.h"
#include "core/nn/layer_spec.h"

namespace mantissa {

struct CaseResult {
    std::string name; // the op and its geometry, without the dtype
    DType dtype = DType::Float32;
    double error = 0;     // the largest relative error over the case's outputs
    double tolerance = 0; // the rule that applied (float64_tolerance against Float64Reference)
    std::string choice;   // what the candidate's GEMM or convolution of this case ran, may be ""
    // Where the largest error lies, for a failure's report: "y[134]: reference 0.0127, candidate
    // -0.0127" (the output tensor's name and flat index); "" when nothing differs.
    std::string worst;
    std::string failure; // an exception's text
    std::string skipped; // why the case did not run (an engine lacks the op); ok() stays true
    bool ok() const { return failure.empty() && error <= tolerance; }
};

// Runs `op_case` on both engines and compares its outputs. Never throws for the case's own
// errors: they land in `failure`. A case needing an op one engine lacks (OpCase::needs_fp8_gemm)
// does not run: `skipped` says why.
CaseResult run_case(const OpCase& op_case, Backend& reference, Backend& candidate);

// The largest |candidate - reference| / (|reference| + floor) over a tensor, floor being a tenth
// of the reference's largest finite magnitude (an allclose-style atol); NaN and inf must sit at
// the same places (inf with the same sign), else the error is infinite.
// `worst`, when given, gets the largest error's place (CaseResult::worst's form) if it is > 0.
double max_error(Backend& reference, const Tensor& ref, Backend& candidate, const Tensor& cand,
                 std::string* worst = nullptr);

// A short training run on both engines (an mlp-small-like model), loss compared step by step.
struct TrainingParity {
    std::string policy;
    int steps = 0;
    double max_loss_rel_error = 0;
    double tolerance = 0;
    std::string failure;
    bool ok() const { return failure.empty() && max_loss_rel_error <= tolerance; }
};
TrainingParity training_parity(Backend& reference, Backend& candidate, const Mnist& data,
                               const std::string& policy, int steps);

// The model training_parity trains: Flatten, Dense 32 relu, Dense 10, softmax. The softmax runs
// in float32 (as Keras keeps it under mixed policies) except under float64, whose tight tolerance
// would otherwise measure two float32 math libraries instead of the engines.
ModelSpec parity_model(const std::string& policy);
// The loss tolerance of training_parity under a policy.
double training_tolerance(const std::string& policy);

} // namespace mantissa
