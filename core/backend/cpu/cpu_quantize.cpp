// The quantise steps of the frontier policies on the CPU: widen the input to float32 in the
// output (or in a float32 buffer, narrowed after, for a bfloat16 MX copy), then
// core/numeric/tensor_quant in place, so the engine is bit-exact with the numerics;
// and per-tensor FP8 into codes for the FP8 GEMM (quantize_fp8), with the same arithmetic.
#include <algorithm>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cpu/cpu_kernels.h"
#include "core/backend/fp8_gemm.h"
#include "core/numeric/quant_recipe.h"
#include "core/numeric/tensor_quant.h"

namespace mantissa {

namespace {

// The six float64 stats a quantise step reports (amax, scale, clipped, zeros, count, blocks).
void write_stats(const QuantTensorStats& s, Tensor& stats) {
    auto* out = static_cast<double*>(stats.data);
    out[0] = s.amax;
    out[1] = s.scale;
    out[2] = static_cast<double>(s.clipped);
    out[3] = static_cast<double>(s.zeros);
    out[4] = static_cast<double>(s.count);
    out[5] = static_cast<double>(s.blocks);
}

} // namespace

void CpuBackend::fake_quantize(const FakeQuantArgs& a) {
    cpu::require(a.spec && a.src && a.dst && a.stats, "fake_quantize: missing argument");
    const Tensor& src = *a.src;
    Tensor& dst = *a.dst;
    cpu::require_floating(src, "fake_quantize");
    // Under the Hadamard transform the output may have extra (zero) rows: a multiple of 16.
    const bool padded = a.spec->hadamard && dst.rows() > src.rows();
    cpu::require(quant_copy_dtype_ok(*a.spec, dst.dtype) && dst.cols() == src.cols() &&
                     (dst.rows() == src.rows() || padded),
                 "fake_quantize: output " + cpu::describe(dst) +
                     " must be float32 (bfloat16 for MX and NVFP4 copies) like " +
                     cpu::describe(src));
    cpu::require(a.stats->dtype == DType::Float64 && a.stats->numel() == kQuantStatsValues,
                 "fake_quantize: stats " + cpu::describe(*a.stats) + " must be float64 (6)");
    const std::size_t state_floats = quant_state_floats(*a.spec);
    cpu::require(state_floats == 0 || (a.state && a.state->dtype == DType::Float32 &&
                                       static_cast<std::size_t>(a.state->numel()) == state_floats),
                 "fake_quantize: delayed scaling needs a float32 state of " +
                     std::to_string(state_floats));
    const bool gemm_scale = tensor_scale_in_gemm(*a.spec);
    cpu::require(
        gemm_scale == (a.gemm_scale != nullptr) &&
            (!gemm_scale || (a.gemm_scale->dtype == DType::Float32 && a.gemm_scale->numel() == 1)),
        "fake_quantize: gemm_scale must be one float32 exactly when the spec leaves "
        "NVFP4's tensor scale to the GEMM");
    const std::int64_t rows = a.rows > 0 ? a.rows : dst.rows();
    cpu::require(rows > 0 && dst.numel() % rows == 0, "fake_quantize: " + std::to_string(rows) +
                                                          " rows do not divide " +
                                                          cpu::describe(dst));
    // A bfloat16 copy (MX, NVFP4 without its tensor scale) is quantised in float32, then
    // narrowed: exactly (quant_copy_dtype_ok).
    const bool narrow = dst.dtype != DType::Float32;
    std::vector<float> wide_values(narrow ? static_cast<std::size_t>(dst.numel()) : 0);
    Tensor wide = dst;
    if (narrow) {
        wide.dtype = DType::Float32;
        wide.data = wide_values.data();
    }
    auto* data = static_cast<float*>(wide.data);
    Tensor head = wide; // the rows src fills; the padding rows are zero
    head.shape = src.shape;
    cast(src, head); // exact: every stored float dtype but float64 widens exactly
    std::fill(data + src.numel(), data + dst.numel(), 0.0f);
    const auto n = static_cast<std::size_t>(dst.numel());
    std::span<float> state;
    if (state_floats) state = {static_cast<float*>(a.state->data), state_floats};
    const QuantTensorStats s = fake_quantize_tensor({data, n}, static_cast<std::size_t>(rows),
                                                    static_cast<std::size_t>(dst.numel() / rows),
                                                    *a.spec, state, a.step, a.record);
    if (narrow) cast(wide, dst);
    if (gemm_scale) *static_cast<float*>(a.gemm_scale->data) = s.gemm_scale;
    if (!a.record) return;
    write_stats(s, *a.stats);
}

void CpuBackend::quantize_fp8(const Fp8QuantArgs& a) {
    const Fp8QuantShape view = check_quantize_fp8(a); // fp8_gemm.h: the same rules on every engine
    const Tensor& src = *a.src;
    const std::int64_t rows = view.rows, cols = view.cols;
    const std::size_t state_floats = quant_state_floats(*a.spec);
    const auto n = static_cast<std::size_t>(src.numel());
    std::vector<float> values(n); // exact: every stored float dtype but float64 widens exactly
    cpu::load(src, 0, values.data(), src.numel());
    std::span<float> state;
    if (state_floats) state = {static_cast<float*>(a.state->data), state_floats};
    std::span<std::uint8_t> codes, codes_t;
    if (a.codes) codes = {static_cast<std::uint8_t*>(a.codes->data), n};
    if (a.codes_t) codes_t = {static_cast<std::uint8_t*>(a.codes_t->data), n};
    float scale_inv = 1.0f;
    const QuantTensorStats s =
        fp8_codes_tensor(values, static_cast<std::size_t>(rows), static_cast<std::size_t>(cols),
                         *a.spec, state, a.record, codes, codes_t, scale_inv);
    *static_cast<float*>(a.scale_inv->data) = scale_inv;
    if (!a.record) return;
    write_stats(s, *a.stats);
}

} // namespace mantissa
