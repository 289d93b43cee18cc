// The op-case table (core/check) on the CPU, without Qt: every case against the float64
// reference and against a second CPU engine (every error exactly 0), the checker catching a
// broken engine, and the training-step parity (float64 measured in float64 throughout).
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/check/float64_reference.h"
#include "core/check/op_cases.h"
#include "core/check/parity.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "tests/ops/check.h"
#include "tests/ops/forwarding_backend.h"

using namespace mantissa;
using mantissa::test::ForwardingBackend;

namespace {

std::string line(const CaseResult& r) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s %s: error %.3g, tolerance %.3g%s%s", r.name.c_str(),
                  std::string(dtype_name(r.dtype)).c_str(), r.error, r.tolerance,
                  r.failure.empty() ? "" : ", ", r.failure.c_str());
    return buf;
}

// Every op at every dtype, several geometries each, and one line per case.
void table_is_complete() {
    const std::vector<OpCase> cases = op_cases();
    CHECK(cases.size() >= 60);
    std::set<std::string> lines;
    std::map<std::string, std::set<DType>> dtypes_of;
    for (const OpCase& c : cases) {
        const std::string d = describe(c);
        CHECK_MSG(lines.insert(d).second, ("duplicate case: " + d).c_str());
        CHECK_MSG(d.find('\n') == std::string::npos, d.c_str());
        CHECK_MSG(static_cast<bool>(c.body), d.c_str());
        dtypes_of[c.name + " " + c.geometry].insert(c.dtype);
        // Only the FP8 GEMM's cases and its quantise steps need an optional op.
        CHECK_MSG(c.needs_fp8_gemm == (c.name.starts_with("gemm fp8") || c.name == "quantize_fp8" ||
                                       c.name == "drelu+bias_grad+fp8 codes"),
                  d.c_str());
    }
    // Every case at every dtype; the FP8 GEMM's at its two output dtypes (float32, bfloat16);
    // NVFP4's scaled GEMMs and the quantised convolutions' float32 operands at the three dtypes
    // a copy or output may hold (no scaled float64 GEMM; float64 outputs keep float64 sums).
    int fp8_geometries = 0;
    for (const auto& [name, dtypes] : dtypes_of) {
        const bool fp8 =
            name.starts_with("gemm fp8") || name.starts_with("drelu+bias_grad+fp8 codes");
        fp8_geometries += name.starts_with("gemm fp8 C = A B^T") ? 1 : 0;
        const std::set<DType> fp8_outputs{DType::Float32, DType::BFloat16};
        const std::set<DType> scaled_dtypes{DType::Float32, DType::Float16, DType::BFloat16};
        const bool scaled = name.find("(tensor scales") != std::string::npos ||
                            name.find("(float32 operands)") != std::string::npos;
        CHECK_MSG(fp8      ? dtypes == fp8_outputs
                  : scaled ? dtypes == scaled_dtypes
                           : dtypes.size() == 4,
                  ("not at every dtype: " + name).c_str());
    }
    CHECK(fp8_geometries == 10); // e4m3 x e4m3 and e5m2 x e4m3 at 5 sizes (4 padded on CUDA)
    std::set<std::string> ops;
    for (const OpCase& c : cases) ops.insert(c.name);
    for (const char* op : {"conv2d fwd+bias+relu", "conv2d bwd-data", "conv2d bwd-filter",
                           "maxpool fwd+bwd", "softmax_cross_entropy", "gemm dW = x^T dy",
                           "unscale+adam+finish_step", "cast float32->dtype"})
        CHECK_MSG(ops.count(op) == 1, op);
    const OpCase* conv = nullptr;
    for (const OpCase& c : cases)
        if (c.name == "conv2d bwd-filter" && c.dtype == DType::BFloat16) conv = conv ? conv : &c;
    CHECK(conv && describe(*conv) == "conv2d bwd-filter 4x10x10x3 k3 s1 p0 f8 bfloat16");
    // Issue 18: every block format, both MX rules, NVFP4 1D and 2D, stochastic rounding, per-tensor
    // current and delayed scaling; exact (tolerance 0) on every engine.
    std::set<std::string> quant;
    for (const OpCase& c : cases)
        if (c.name == "fake_quantize" && c.dtype == DType::Float32) {
            quant.insert(c.geometry);
            CHECK_MSG(c.tolerance == 0.0 && c.float64_tolerance == 0.0, describe(c).c_str());
        }
    // 17 of them NVFP4 copies without the tensor scale (4 on a convolution's views), 5 the CUDA
    // line kernels' thread shapes (issue 26).
    CHECK(quant.size() == 54);
    for (const char* g :
         {"7x80 mxfp8_e4m3 1x32 floor (NaN, zero block)",
          "7x80 mxfp4 1x32 floor (NaN, zero block), bfloat16 copy",
          "40x12 mxfp8_e5m2 32x1 ceil, bfloat16 copy",
          "7x80 mxfp6_e2m3 1x32 ceil (NaN, zero block)", "7x80 nvfp4 16x16",
          "7x80 mxfp4 1x32 stochastic seed 1234", "7x80 per-tensor delayed float8_e4m3, 2 steps"})
        CHECK_MSG(quant.count(g) == 1, g);
}

void cpu_against_float64_reference() {
    Float64Reference reference;
    CpuBackend cpu;
    int checked = 0;
    for (const OpCase& c : op_cases()) {
        const CaseResult r = run_case(c, reference, cpu);
        CHECK_MSG(r.ok(), line(r).c_str());
        CHECK_MSG(r.tolerance == c.float64_tolerance, line(r).c_str());
        ++checked;
    }
    CHECK(reference.memory_in_use() == 0 && cpu.memory_in_use() == 0);
    std::printf("cpu vs float64 reference: %d cases\n", checked);
}

// The same engine twice: the checker itself adds no error.
void cpu_self_parity() {
    CpuBackend a, b;
    for (const OpCase& c : op_cases()) {
        const CaseResult r = run_case(c, a, b);
        CHECK_MSG(r.failure.empty() && r.error == 0.0, line(r).c_str());
        CHECK_MSG(r.tolerance == c.tolerance, line(r).c_str());
    }
}

// A candidate whose bias gradient is 25% off, and one whose dropout throws: both are caught, and
// only in their own cases.
class BrokenEngine final : public ForwardingBackend {
public:
    using ForwardingBackend::ForwardingBackend;
    void bias_grad(const Tensor& dy, Tensor& db) override {
        m_inner.bias_grad(dy, db);
        std::vector<double> v(static_cast<std::size_t>(db.numel()));
        std::vector<unsigned char> bytes(db.bytes());
        m_inner.download(db, bytes.data());
        convert_to_double(bytes.data(), db.dtype, v.data(), v.size());
        for (double& x : v) x *= 1.25;
        convert_from_double(v.data(), bytes.data(), db.dtype, v.size());
        m_inner.upload(bytes.data(), db);
    }
    void dropout_forward(double, std::uint64_t, const Tensor&, Tensor&, Tensor&) override {
        throw Error(ErrorKind::Device, "no dropout kernel for this dtype");
    }
    std::string last_choice() const override { return "algo 7"; }
    bool supports_fake_quantize() const override { return true; }
    void fake_quantize(const FakeQuantArgs& args) override { m_inner.fake_quantize(args); }
    bool supports_fp8_gemm() const override { return true; }
    void quantize_fp8(const Fp8QuantArgs& args) override { m_inner.quantize_fp8(args); }
};

void checker_catches_a_broken_engine() {
    CpuBackend reference, inner;
    BrokenEngine broken(inner);
    int bias_fails = 0, dropout_fails = 0, other_fails = 0;
    for (const OpCase& c : op_cases()) {
        const CaseResult r = run_case(c, reference, broken);
        CHECK(r.choice == "algo 7");
        // The fused dZ + bias gradient cases reach the broken bias_grad through Backend's
        // default activation_backward_bias_grad.
        // The fused FP8 step's codes rows compare only the codes, which the bias never reaches.
        const bool codes_row =
            c.name == "drelu+bias_grad+fp8 codes" && c.geometry.ends_with(": the codes");
        if (codes_row) {
            other_fails += r.ok() ? 0 : 1;
        } else if (c.name == "bias_grad" || c.name.find("+bias_grad") != std::string::npos) {
            bias_fails += r.ok() ? 0 : 1;
            CHECK_MSG(r.failure.empty() && r.error > 5e-3, line(r).c_str());
        } else if (c.name.rfind("dropout", 0) == 0) {
            dropout_fails += r.ok() ? 0 : 1;
            CHECK_MSG(r.failure.find("no dropout kernel") != std::string::npos, line(r).c_str());
        } else {
            other_fails += r.ok() ? 0 : 1;
        }
    }
    // (5 geometries + 4 activations x 2 fused) x 4 dtypes, and the fused FP8 step's bias
    // gradient rows (3 geometries x float32, bfloat16).
    CHECK(bias_fails == 58);
    CHECK(dropout_fails == 4); // 4 dtypes
    CHECK(other_fails == 0);
    CHECK(reference.memory_in_use() == 0 && inner.memory_in_use() == 0);
}

// An engine without the FP8 GEMM (ForwardingBackend keeps Backend's default, false; the CUDA
// engine below compute capability 8.9): its FP8 cases (the GEMMs and quantize_fp8) are skipped
// with the reason, pass, and run nothing; every other GEMM case runs. Against the CPU engine the
// same cases run and pass.
void fp8_cases_skip_where_unsupported() {
    CpuBackend reference, inner;
    ForwardingBackend no_fp8(inner);
    CHECK(!no_fp8.supports_fp8_gemm() && inner.supports_fp8_gemm());
    int skipped = 0, ran = 0;
    for (const OpCase& c : op_cases()) {
        if (c.name.rfind("gemm", 0) != 0 && c.name != "quantize_fp8") continue;
        const CaseResult r = run_case(c, reference, no_fp8);
        CHECK_MSG(r.ok(), line(r).c_str());
        CHECK_MSG(r.skipped.empty() != c.needs_fp8_gemm, line(r).c_str());
        if (c.needs_fp8_gemm) {
            ++skipped;
            CHECK_MSG(r.skipped.find("no FP8 GEMM") != std::string::npos, r.skipped.c_str());
            const CaseResult on_cpu = run_case(c, reference, inner);
            CHECK_MSG(on_cpu.ok() && on_cpu.skipped.empty(), line(on_cpu).c_str());
            ++ran;
        }
    }
    // 20 plain products (5 sizes), 8 with an epilogue (2 sizes) and 4 with a bias alone or
    // before a ReLU (cuBLASLt's own FP8 epilogue on the CUDA engine), 10 quantize_fp8 cases at 4
    // input dtypes.
    CHECK_MSG(skipped == 72 && ran == 72, (std::to_string(skipped) + " skipped").c_str());
    CHECK(reference.memory_in_use() == 0 && inner.memory_in_use() == 0);
}

// The quantiser cases reach what they are named for: 500 clips under E4M3's floor rule and not
// under ceil, a tiny value flushes, the blocks are counted with the partial edge ones, and the
// delayed case's second step clips the spike its history has not seen.
void quant_cases_clip_flush_and_count() {
    std::map<std::string, std::vector<double>> stats; // float32 input, by geometry
    for (const OpCase& c : op_cases()) {
        if (c.name != "fake_quantize" || c.dtype != DType::Float32) continue;
        CpuBackend a, b;
        CaseContext ctx(a, b);
        const std::vector<Twin*> outs = c.body(ctx);
        std::vector<double> v(kQuantStatsValues);
        a.download(outs[1]->on(0), v.data());
        stats[c.geometry] = v;
    }
    const auto& floor = stats["7x80 mxfp8_e4m3 1x32 floor (NaN, zero block)"];
    const auto& ceil = stats["7x80 mxfp8_e4m3 1x32 ceil (NaN, zero block)"];
    CHECK(floor.size() == 6 && ceil.size() == 6);
    CHECK(floor[2] >= 1 && ceil[2] == 0);        // clipped
    CHECK(floor[3] >= 1);                        // flushed to zero
    CHECK(floor[4] == 560 && floor[5] == 7 * 3); // count, blocks (80 = 2.5 blocks of 32)
    CHECK(stats["40x12 mxfp8_e4m3 32x1 floor"][5] == 2 * 12); // 40 rows: 2 blocks per column
    CHECK(stats["7x80 nvfp4 16x16"][5] == 5);
    // Blocks lie on the view the engine is given, not on the tensor's first dimension: 20 rows
    // of 40 channels (2 blocks each; 4 x 200 would give 28), and 36 x 20 in 16 x 16 tiles (6).
    CHECK(stats["20x40 mxfp8_e4m3 1x32 floor, NHWxC view"][5] == 20 * 2);
    CHECK(stats["36x20 nvfp4 16x16, conv kernel view"][5] == 3 * 2);
    // One channel: a block (padded from 1 to 16) per pixel.
    CHECK(stats["300x1 nvfp4 1x16, one channel (NHWxC view), tensor scale in the GEMM, float32 "
                "copy"][5] == 300);
    CHECK(stats["7x80 per-tensor delayed float8_e4m3, 2 steps"][2] >= 1);
    CHECK(stats["7x80 per-tensor current float8_e4m3"][2] == 0);
    // The Hadamard cases quantise the padded rows too: 16 x 80 values in 80 blocks of 16 x 1.
    const auto& hadamard = stats["7x80 nvfp4 16x1 hadamard seed 77, rows padded 7->16"];
    CHECK(hadamard[4] == 16 * 80 && hadamard[5] == 80);
    CHECK(stats["40x12 nvfp4 16x1 stochastic, hadamard seed 77, 40->48"][5] == 3 * 12);
}

// A quantiser that rounds one value of each call to the next value of the copy's dtype (an
// off-by-one in a kernel's rounding) fails every fake_quantize case (but the all-NaN one) and
// nothing else.
class OffByOneQuantiser final : public ForwardingBackend {
public:
    using ForwardingBackend::ForwardingBackend;
    bool supports_fake_quantize() const override { return true; }
    void fake_quantize(const FakeQuantArgs& args) override {
        m_inner.fake_quantize(args);
        if (args.dst->dtype == DType::BFloat16) {
            std::vector<std::uint16_t> v(static_cast<std::size_t>(args.dst->numel()));
            m_inner.download(*args.dst, v.data());
            // Toward +infinity: one step up in magnitude when positive, down when negative.
            v[1] = v[1] == 0x8000u
                       ? std::uint16_t{1}
                       : static_cast<std::uint16_t>(v[1] & 0x8000u ? v[1] - 1 : v[1] + 1);
            m_inner.upload(v.data(), *args.dst);
            return;
        }
        std::vector<float> v(static_cast<std::size_t>(args.dst->numel()));
        m_inner.download(*args.dst, v.data());
        v[1] = std::nextafter(v[1], 1e30f);
        m_inner.upload(v.data(), *args.dst);
    }
};

void checker_catches_a_wrong_quantiser() {
    CpuBackend reference, inner;
    OffByOneQuantiser wrong(inner);
    int quant_as_expected = 0, quant_cases = 0, other_fails = 0;
    for (const OpCase& c : op_cases()) {
        if (c.name != "fake_quantize" && c.name != "cast float32->dtype") continue;
        const CaseResult r = run_case(c, reference, wrong);
        if (c.name == "fake_quantize") {
            ++quant_cases;
            // NVFP4 with a NaN: the tensor scale is NaN, so every output is NaN, nudged or not.
            const bool all_nan = c.geometry.find("nvfp4 1x16 (NaN") != std::string::npos ||
                                 c.geometry.find("every value NaN") != std::string::npos;
            quant_as_expected += r.ok() == all_nan ? 1 : 0;
            // The report names the output and the element that differs (what a GPU run's
            // failure shows, so the next session can tell a kernel's mistake from another).
            if (!all_nan) CHECK_MSG(r.worst.rfind("y[1]: reference ", 0) == 0, r.worst.c_str());
        } else {
            other_fails += r.ok() ? 0 : 1;
        }
    }
    CHECK(quant_cases == 216); // 54 cases x 4 dtypes
    CHECK(quant_as_expected == quant_cases);
    CHECK(other_fails == 0);
}

// An FP8 quantiser whose transposed copy has one code off by one (a transposition kernel writing
// a neighbour's code, say) fails every quantize_fp8 case and nothing else.
class WrongTransposedCode final : public ForwardingBackend {
public:
    using ForwardingBackend::ForwardingBackend;
    bool supports_fake_quantize() const override { return true; }
    void fake_quantize(const FakeQuantArgs& args) override { m_inner.fake_quantize(args); }
    bool supports_fp8_gemm() const override { return true; }
    void quantize_fp8(const Fp8QuantArgs& args) override {
        m_inner.quantize_fp8(args);
        std::vector<std::uint8_t> codes(static_cast<std::size_t>(args.codes_t->numel()));
        m_inner.download(*args.codes_t, codes.data());
        codes[3] = static_cast<std::uint8_t>(codes[3] ^ 1u); // the next code of the same sign
        m_inner.upload(codes.data(), *args.codes_t);
    }
};

void checker_catches_a_wrong_fp8_code() {
    CpuBackend reference, inner;
    WrongTransposedCode wrong(inner);
    int fp8_cases = 0, fp8_fails = 0, other_fails = 0;
    for (const OpCase& c : op_cases()) {
        if (c.name != "quantize_fp8" && c.name != "fake_quantize") continue;
        const CaseResult r = run_case(c, reference, wrong);
        if (c.name == "quantize_fp8") {
            ++fp8_cases;
            fp8_fails += r.ok() ? 0 : 1;
        } else {
            other_fails += r.ok() ? 0 : 1;
        }
    }
    CHECK(fp8_cases == 40); // 10 cases (48x80: 4 recipes; 67x130, ties, 33x75: 2 each) x 4
    CHECK(fp8_fails == fp8_cases);
    CHECK(other_fails == 0);
}

// An engine whose float32 math library differs from glibc's by about an ulp (as CUDA's expf and
// logf do): the float32 loss moves by ~2e-7.
class OtherFloat32Math final : public ForwardingBackend {
public:
    using ForwardingBackend::ForwardingBackend;
    void softmax_cross_entropy(const SoftmaxXentArgs& args) override {
        const StepScalars before = m_inner.read_scalars(*args.scalars);
        m_inner.softmax_cross_entropy(args);
        if (args.logits->dtype != DType::Float32) return;
        StepScalars after = m_inner.read_scalars(*args.scalars);
        after.loss_sum = before.loss_sum + (after.loss_sum - before.loss_sum) * (1.0 + 0x1.0p-22);
        m_inner.write_scalars(after, *args.scalars);
    }
};

// An engine that names the algorithm of its GEMMs, as the CUDA engine does, and forgets it when
// asked: a case reports only its own GEMM's choice, never the one of the case before it (the
// first GPU run showed "direct kernel bwd-filter" beside every fake_quantize case).
class ChoosingEngine final : public ForwardingBackend {
public:
    using ForwardingBackend::ForwardingBackend;
    void gemm(const GemmArgs& args) override {
        m_inner.gemm(args);
        m_choice = "gemm algo 1";
    }
    std::string last_choice() const override { return m_choice; }
    void clear_last_choice() override { m_choice.clear(); }
    bool supports_fake_quantize() const override { return true; }
    void fake_quantize(const FakeQuantArgs& args) override { m_inner.fake_quantize(args); }

private:
    std::string m_choice;
};

void choice_is_the_cases_own() {
    CpuBackend reference, inner;
    ChoosingEngine engine(inner);
    int gemm_cases = 0, other_cases = 0;
    for (const OpCase& c : op_cases()) {
        // The FP8 GEMM cases are skipped here (the forwarding engine has no FP8 GEMM).
        const bool gemm = c.name.rfind("gemm", 0) == 0 && !c.needs_fp8_gemm;
        if (!gemm && c.name != "bias_grad" && c.name != "fake_quantize") continue;
        const CaseResult r = run_case(c, reference, engine);
        CHECK_MSG(r.ok() && r.choice == (gemm ? "gemm algo 1" : ""), line(r).c_str());
        ++(gemm ? gemm_cases : other_cases);
    }
    CHECK(gemm_cases > 0 && other_cases > 0);
}

// Issue 17 §1.1: under float64 the parity model has no float32 layer, so the 1e-9 tolerance
// measures the engines, not two float32 math libraries.
void training_parity_float64_is_float64() {
    const ModelSpec spec = parity_model("float64");
    for (const LayerSpec& layer : spec.layers)
        CHECK_MSG(!layer.dtype.has_value(), "a layer of the float64 parity model has a dtype");
    bool softmax32 = false;
    for (const LayerSpec& layer : parity_model("mixed_float16").layers)
        softmax32 = softmax32 || (layer.dtype && *layer.dtype == "float32");
    CHECK(softmax32); // mixed policies keep Keras's float32 softmax

    const Mnist data = synthetic_mnist(512, 256);
    CpuBackend reference, inner;
    OtherFloat32Math other(inner);
    const TrainingParity f64 = training_parity(reference, other, data, "float64", 3);
    CHECK_MSG(f64.ok(), f64.failure.c_str());
    CHECK(f64.steps == 3 && f64.tolerance == 1e-9 && f64.max_loss_rel_error == 0.0);
    const TrainingParity f32 = training_parity(reference, other, data, "float32", 3);
    CHECK(f32.ok() && f32.max_loss_rel_error > 0.0); // the fake engine is really different

    CpuBackend a, b;
    for (const char* policy : {"float64", "float32", "mixed_float16", "mixed_bfloat16"}) {
        const TrainingParity r = training_parity(a, b, data, policy, 3);
        CHECK_MSG(r.failure.empty() && r.steps == 3 && r.max_loss_rel_error == 0.0, policy);
    }
}

} // namespace

int main(int argc, char** argv) {
    const std::string only = argc > 1 ? argv[1] : "";
    auto run = [&](const char* name, void (*fn)()) {
        if (!only.empty() && only != name) return;
        try {
            fn();
        } catch (const std::exception& err) {
            std::fprintf(stderr, "%s threw: %s\n", name, err.what());
            ++mantissa::test::check_failures();
        }
    };
    run("table_is_complete", table_is_complete);
    run("cpu_against_float64_reference", cpu_against_float64_reference);
    run("cpu_self_parity", cpu_self_parity);
    run("checker_catches_a_broken_engine", checker_catches_a_broken_engine);
    run("checker_catches_a_wrong_quantiser", checker_catches_a_wrong_quantiser);
    run("checker_catches_a_wrong_fp8_code", checker_catches_a_wrong_fp8_code);
    run("fp8_cases_skip_where_unsupported", fp8_cases_skip_where_unsupported);
    run("quant_cases_clip_flush_and_count", quant_cases_clip_flush_and_count);
    run("choice_is_the_cases_own", choice_is_the_cases_own);
    run("training_parity_float64_is_float64", training_parity_float64_is_float64);
    return mantissa::test::test_exit_code("ops_parity");
}
