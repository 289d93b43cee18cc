// The CPU engine's float32 optimizer updates, bit for bit, against a reference that rounds every
// operation separately (each intermediate stored through a volatile float, which no compiler can
// fuse). GCC contracts m + (g - m) * c into one FMA under -march=native unless the engine is built
// with -ffp-contract=off; the CUDA kernels compile with --fmad=false, so only unfused arithmetic
// keeps "optimizer updates are bit-identical" true. The inputs are checked to contain elements
// where a fused multiply-add gives another result, so the comparison can fail.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/optim/update_rules.h"
#include "tests/host_tensor.h"
#include "tests/ops/check.h"

using namespace mantissa;
using mantissa::test::HostScalars;
using mantissa::test::HostTensor;

namespace {

constexpr std::size_t kN = 4096;

std::vector<double> random_values(std::uint64_t seed, double lo, double hi) {
    std::vector<double> out(kN);
    for (double& v : out) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v = lo + (hi - lo) * (static_cast<double>(seed >> 11) * 0x1.0p-53);
    }
    return out;
}

std::uint32_t bits(float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, 4);
    return b;
}

// Each operation rounded to float32 on its own.
float add(float a, float b) {
    volatile float r = a + b;
    return r;
}
float sub(float a, float b) {
    volatile float r = a - b;
    return r;
}
float mul(float a, float b) {
    volatile float r = a * b;
    return r;
}
float div(float a, float b) {
    volatile float r = a / b;
    return r;
}

struct Inputs {
    std::vector<double> w, g, s0, s1;
};

Inputs inputs() {
    return {random_values(1, -1.0, 1.0), random_values(2, -0.5, 0.5), random_values(3, -0.05, 0.05),
            random_values(4, 0.0, 0.01)};
}

// Runs one update of `config` on the CPU engine over float32 tensors; returns w and the slots.
std::vector<std::vector<double>> engine_update(const OptimizerConfig& config, const Inputs& in) {
    CpuBackend cpu;
    HostTensor w(DType::Float32, in.w, "w"), g(DType::Float32, in.g, "g");
    HostTensor s0(DType::Float32, in.s0, "s0"), s1(DType::Float32, in.s1, "s1");
    HostScalars scalars;
    scalars.values.iterations = 4; // t = 5
    Tensor* slots[] = {&s0.tensor, &s1.tensor};
    cpu.optimizer_update(
        config, w.tensor, g.tensor,
        std::span<Tensor* const>(slots, static_cast<std::size_t>(optimizer_slot_count(config))),
        scalars.tensor, false);
    return {w.values(), s0.values(), s1.values()};
}

// Compares the engine with the unfused reference; `fma_differs` counts elements where fusing the
// named multiply-add would change the result (the test's teeth).
void compare(const char* name, const std::vector<std::vector<double>>& got,
             const std::vector<float>& w, const std::vector<float>& s0,
             const std::vector<float>& s1, int fma_differs, int slots) {
    int mismatches = 0;
    for (std::size_t i = 0; i < kN; ++i) {
        mismatches += bits(static_cast<float>(got[0][i])) != bits(w[i]);
        if (slots > 0) mismatches += bits(static_cast<float>(got[1][i])) != bits(s0[i]);
        if (slots > 1) mismatches += bits(static_cast<float>(got[2][i])) != bits(s1[i]);
    }
    const std::string detail = std::string(name) + ": " + std::to_string(mismatches) +
                               " element(s) differ from the unfused reference";
    CHECK_MSG(mismatches == 0, detail.c_str());
    CHECK_MSG(fma_differs > 0, (std::string(name) + ": no input where an FMA differs").c_str());
}

void adam() {
    const Inputs in = inputs();
    OptimizerConfig config = optimizer_defaults(OptimizerType::Adam);
    const UpdateRule<float> r = make_update_rule<float>(config, 5, NoRounding{});
    std::vector<float> w(kN), m(kN), v(kN);
    int fma_differs = 0;
    for (std::size_t i = 0; i < kN; ++i) {
        const float g = float(in.g[i]), m0 = float(in.s0[i]), v0 = float(in.s1[i]);
        const float d = sub(g, m0);
        m[i] = add(m0, mul(d, r.one_minus_beta_1));
        fma_differs += bits(std::fma(d, r.one_minus_beta_1, m0)) != bits(m[i]);
        v[i] = add(v0, mul(sub(mul(g, g), v0), r.one_minus_beta_2));
        const float denominator = add(std::sqrt(v[i]), r.epsilon);
        w[i] = sub(float(in.w[i]), div(mul(m[i], r.alpha), denominator));
    }
    compare("adam", engine_update(config, in), w, m, v, fma_differs, 2);
}

void rmsprop() {
    Inputs in = inputs();
    in.s0 = in.s1; // the velocity: >= 0
    OptimizerConfig config = optimizer_defaults(OptimizerType::RMSprop);
    const UpdateRule<float> r = make_update_rule<float>(config, 5, NoRounding{});
    std::vector<float> w(kN), v(kN), unused(kN);
    int fma_differs = 0;
    for (std::size_t i = 0; i < kN; ++i) {
        const float g = float(in.g[i]), v0 = float(in.s0[i]);
        const float rest = mul(r.one_minus_rho, mul(g, g));
        v[i] = add(mul(r.rho, v0), rest);
        fma_differs += bits(std::fma(r.rho, v0, rest)) != bits(v[i]);
        const float increment = div(mul(r.lr, g), std::sqrt(add(v[i], r.epsilon)));
        w[i] = sub(float(in.w[i]), increment);
    }
    compare("rmsprop", engine_update(config, in), w, v, unused, fma_differs, 1);
}

void sgd_momentum() {
    const Inputs in = inputs();
    OptimizerConfig config = optimizer_defaults(OptimizerType::SGD);
    config.momentum = 0.9;
    const UpdateRule<float> r = make_update_rule<float>(config, 5, NoRounding{});
    std::vector<float> w(kN), m(kN), unused(kN);
    int fma_differs = 0;
    for (std::size_t i = 0; i < kN; ++i) {
        const float step = mul(float(in.g[i]), r.lr), m0 = float(in.s0[i]);
        m[i] = sub(mul(m0, r.momentum), step);
        fma_differs += bits(std::fma(m0, r.momentum, -step)) != bits(m[i]);
        w[i] = add(float(in.w[i]), m[i]);
    }
    compare("sgd momentum", engine_update(config, in), w, m, unused, fma_differs, 1);
}

} // namespace

int main() {
    adam();
    rmsprop();
    sgd_momentum();
    return mantissa::test::test_exit_code("ops_update_bits");
}
