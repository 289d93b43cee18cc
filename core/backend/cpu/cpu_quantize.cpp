// The quantise step of the frontier policies on the CPU: widen the input to float32 in the
// output, then core/numeric/tensor_quant in place, so the engine is bit-exact with the numerics.
#include <algorithm>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cpu/cpu_kernels.h"
#include "core/numeric/tensor_quant.h"

namespace mantissa {

void CpuBackend::fake_quantize(const FakeQuantArgs& a) {
    cpu::require(a.spec && a.src && a.dst && a.stats, "fake_quantize: missing argument");
    const Tensor& src = *a.src;
    Tensor& dst = *a.dst;
    cpu::require_floating(src, "fake_quantize");
    // Under the Hadamard transform the output may have extra (zero) rows: a multiple of 16.
    const bool padded = a.spec->hadamard && dst.rows() > src.rows();
    cpu::require(dst.dtype == DType::Float32 && dst.cols() == src.cols() &&
                     (dst.rows() == src.rows() || padded),
                 "fake_quantize: output " + cpu::describe(dst) + " must be float32 like " +
                     cpu::describe(src));
    cpu::require(a.stats->dtype == DType::Float64 && a.stats->numel() == kQuantStatsValues,
                 "fake_quantize: stats " + cpu::describe(*a.stats) + " must be float64 (6)");
    const std::size_t state_floats = quant_state_floats(*a.spec);
    cpu::require(state_floats == 0 || (a.state && a.state->dtype == DType::Float32 &&
                                       static_cast<std::size_t>(a.state->numel()) == state_floats),
                 "fake_quantize: delayed scaling needs a float32 state of " +
                     std::to_string(state_floats));
    const std::int64_t rows = a.rows > 0 ? a.rows : dst.rows();
    cpu::require(rows > 0 && dst.numel() % rows == 0, "fake_quantize: " + std::to_string(rows) +
                                                          " rows do not divide " +
                                                          cpu::describe(dst));
    auto* data = static_cast<float*>(dst.data);
    Tensor head = dst; // the rows src fills; the padding rows are zero
    head.shape = src.shape;
    cast(src, head); // exact: every stored float dtype but float64 widens exactly
    std::fill(data + src.numel(), data + dst.numel(), 0.0f);
    const auto n = static_cast<std::size_t>(dst.numel());
    std::span<float> state;
    if (state_floats) state = {static_cast<float*>(a.state->data), state_floats};
    const QuantTensorStats s = fake_quantize_tensor({data, n}, static_cast<std::size_t>(rows),
                                                    static_cast<std::size_t>(dst.numel() / rows),
                                                    *a.spec, state, a.step, a.record);
    if (!a.record) return;
    auto* out = static_cast<double*>(a.stats->data);
    out[0] = s.amax;
    out[1] = s.scale;
    out[2] = static_cast<double>(s.clipped);
    out[3] = static_cast<double>(s.zeros);
    out[4] = static_cast<double>(s.count);
    out[5] = static_cast<double>(s.blocks);
}

} // namespace mantissa
