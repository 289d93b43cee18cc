// Helpers for tests that look inside a bound Plan: a tensor by name, its float32 contents, and
// the forward steps run alone on an input (no data steps, no loss), as the quantisation suites do.
#pragma once

#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/plan/plan.h"

namespace mantissa::test {

inline const Tensor& find_tensor(const Plan& plan, const std::string& name) {
    for (const Tensor& t : plan.tensors)
        if (t.name == name) return t;
    throw Error(ErrorKind::Internal, "no tensor " + name);
}

// A tensor's values as float32 (a float32 tensor's bytes, or a bfloat16 copy's values widened).
inline std::vector<float> download(Backend& be, const Tensor& t) {
    const auto n = static_cast<std::size_t>(t.numel());
    std::vector<float> out(n);
    if (t.dtype == DType::Float32) {
        be.download(t, out.data());
        return out;
    }
    std::vector<unsigned char> raw(t.bytes());
    be.download(t, raw.data());
    convert_to_float(raw.data(), t.dtype, out.data(), n);
    return out;
}

// A quantised copy's decoded values: its contents, times its tensor scale where the copy leaves
// that to the GEMM (a Dense layer's NVFP4 copy, "<copy> tensor scale"), each product exact in
// float64 and rounded once to float32, as a copy that kept the scale holds it.
inline std::vector<float> download_decoded(Backend& be, const Plan& plan, const std::string& name) {
    std::vector<float> v = download(be, find_tensor(plan, name));
    for (const Tensor& t : plan.tensors)
        if (t.name == name + " tensor scale") {
            const double scale = download(be, t).at(0);
            for (float& x : v) x = static_cast<float>(static_cast<double>(x) * scale);
        }
    return v;
}

// Runs the forward steps of `plan` (after the data steps, before the loss) on the input `x`.
inline void run_forward(Plan& plan, Backend& be, const std::vector<float>& x) {
    be.upload(x.data(), plan.tensor(plan.input));
    RunContext ctx;
    ctx.step = 1;
    for (PlanStep& step : plan.steps) {
        if (step.phase != StepPhase::Forward || step.op == "begin_step" ||
            step.op == "gather+normalize")
            continue;
        if (step.op == "softmax_xent") break;
        step.run(be, ctx);
    }
}

} // namespace mantissa::test
