// Per-tensor FP8 (delayed and current scaling, as TE's Float8Quantizer / Float8CurrentScaling)
// and block scaling (core/numeric/block_quant) behind one call; nothing here allocates.
#include "core/numeric/tensor_quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/error.h"
#include "core/numeric/element_codec.h"
#include "core/numeric/hadamard.h"
#include "core/numeric/quant_math.h"
#include "core/numeric/simd_pragmas.h"

namespace mantissa {

namespace {

// In float (exact: a magnitude is a float too), as the maximum of the magnitudes' bits: for
// non-negative floats the integer order is the numeric order and a NaN lies above +inf, so the
// loop is one integer maximum (vectorised, over the threads for a large tensor).
double amax_of(std::span<const float> data) {
    std::uint32_t m = 0;
    const float* d = data.data();
    const auto n = static_cast<std::int64_t>(data.size());
    MANTISSA_OMP_FOR_MAX(m, n >= simd::kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint32_t a = std::bit_cast<std::uint32_t>(d[i]) & 0x7FFFFFFFu;
        m = a > m ? a : m;
    }
    if (m <= 0x7F800000u) return static_cast<double>(std::bit_cast<float>(m));
    for (float v : data) // the first NaN, as a float64 magnitude (its payload kept)
        if (std::isnan(v)) return std::fabs(static_cast<double>(v));
    return std::numeric_limits<double>::quiet_NaN();
}

// The per-tensor cast (TE): code = round(v * scale), value = code * scale_inv, counting the
// clipped and flushed values. The element format is a template parameter so the codec's layout is
// constant: a finite x = v * scale (exact in float64) rounds on its bits (element_codec), with
// no branch, so the loop vectorises and a large tensor is split over the threads (the counts are
// integer sums: the same for any thread count). The arithmetic is encode_element /
// decode_element's. Every value must be finite (the caller checks the amax).
template <ElementFormat F>
void cast_per_tensor(std::span<float> data, float scale, float scale_inv, double max_elem,
                     QuantTensorStats& st) {
    const double limit = max_elem * (1.0 + 0x1p-22);
    const auto s = static_cast<double>(scale), s_inv = static_cast<double>(scale_inv);
    float* d = data.data();
    const auto n = static_cast<std::int64_t>(data.size());
    // Runs of kRun values over the threads, each run one vectorised loop.
    constexpr std::int64_t kRun = 4096;
    const std::int64_t runs = (n + kRun - 1) / kRun;
    std::size_t clipped = 0, zeros = 0;
    MANTISSA_OMP_FOR_SUM_RUNS(clipped, zeros, n >= simd::kParallelMin)
    for (std::int64_t run = 0; run < runs; ++run) {
        const std::int64_t end = std::min(n, (run + 1) * kRun);
        std::size_t run_clipped = 0, run_zeros = 0;
        MANTISSA_SIMD_SUM(run_clipped, run_zeros)
        for (std::int64_t i = run * kRun; i < end; ++i) {
            const float v = d[i];
            const double x = static_cast<double>(v) * s; // exact: 24 x 24 bits
            const double decoded = element_codec::round_to_element<F>(x) * s_inv; // saturating
            run_clipped += std::fabs(x) > limit ? 1 : 0;
            run_zeros += static_cast<std::size_t>(v != 0) & static_cast<std::size_t>(decoded == 0);
            d[i] = static_cast<float>(decoded);
        }
        clipped += run_clipped;
        zeros += run_zeros;
    }
    st.clipped += clipped;
    st.zeros += zeros;
}

// cast_per_tensor's rounding into codes (fp8_codes_tensor's finite case): the code of each
// x = v * scale, row-major and/or transposed, a row at a time (the transposed stores stride by
// `rows`). A value flushes when its code's magnitude is zero (code * scale_inv is then zero, and
// no other code decodes to zero); the clip rule is cast_code's.
template <ElementFormat F>
void codes_per_tensor(std::span<const float> data, std::size_t rows, std::size_t cols, float scale,
                      double max_elem, std::span<std::uint8_t> codes,
                      std::span<std::uint8_t> codes_t, QuantTensorStats& st) {
    const double limit = max_elem * (1.0 + 0x1p-22);
    const auto s = static_cast<double>(scale);
    constexpr std::uint32_t kMagnitude = 0x7Fu;
    std::size_t clipped = 0, zeros = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = data.data() + r * cols;
        std::uint8_t* out = codes.empty() ? nullptr : codes.data() + r * cols;
        std::size_t row_clipped = 0, row_zeros = 0;
        for (std::size_t c = 0; c < cols; ++c) {
            const float v = row[c];
            const double x = static_cast<double>(v) * s; // exact: 24 x 24 bits
            const std::uint32_t code = element_codec::round_to_code<F>(x);
            row_clipped += std::fabs(x) > limit ? 1 : 0;
            row_zeros += static_cast<std::size_t>(v != 0) &
                         static_cast<std::size_t>((code & kMagnitude) == 0);
            if (out) out[c] = static_cast<std::uint8_t>(code);
            if (!codes_t.empty()) codes_t[c * rows + r] = static_cast<std::uint8_t>(code);
        }
        clipped += row_clipped;
        zeros += row_zeros;
    }
    st.clipped += clipped;
    st.zeros += zeros;
}

// TE's scale rule, the per-value cast and the delayed history are quant_math.h's, shared with the
// CUDA kernels (core/backend/cuda/fake_quantize.cu).
using quant_math::fp8_scale_for;

} // namespace

std::size_t quant_state_floats(const QuantSpec& spec) {
    return spec.scaling == QuantScaling::Delayed ? 2 + static_cast<std::size_t>(spec.history_len)
                                                 : 0;
}

QuantTensorStats fake_quantize_tensor(std::span<float> data, std::size_t rows, std::size_t cols,
                                      const QuantSpec& spec, std::span<float> state,
                                      std::uint64_t step, bool record) {
    QuantTensorStats st;
    st.count = data.size();
    // The transform comes first: the scales (and the recorded amax) are those of what is cast.
    if (spec.hadamard) random_hadamard_rows(data, rows, cols, hadamard_signs(spec.hadamard_seed));
    st.amax = amax_of(data);
    if (spec.scaling == QuantScaling::Block) {
        BlockQuantConfig config = spec.block;
        config.seed = quant_math::step_seed(spec.block.seed, step); // a new stream each step
        const BlockQuantStats b = fake_quantize_blocks(data, rows, cols, config, spec.block_rows,
                                                       spec.block_cols, &st.scale, st.amax);
        st.clipped = b.clipped;
        st.zeros = b.zeros;
        st.blocks = b.blocks;
        if (config.tensor_scale_in_gemm && block_format_spec(config.format).tensor_scale)
            st.gemm_scale = nvfp4_gemm_scale(b.global_scale);
        return st;
    }
    if (state.size() < quant_state_floats(spec))
        throw Error(ErrorKind::Internal, "fake_quantize_tensor: missing delayed-scaling state");
    const double max_elem = element_spec(spec.element).max_finite;
    float scale = 1.0f;
    if (spec.scaling == QuantScaling::Current)
        scale = fp8_scale_for(st.amax, max_elem, 0, 1.0f);
    else if (state[0] > 0)
        scale = state[0];
    const float scale_inv = 1.0f / scale;
    st.scale = scale_inv;
    st.blocks = 1;
    const bool finite = std::isfinite(st.amax);
    if (finite && spec.element == ElementFormat::Float8E4M3)
        cast_per_tensor<ElementFormat::Float8E4M3>(data, scale, scale_inv, max_elem, st);
    else if (finite && spec.element == ElementFormat::Float8E5M2)
        cast_per_tensor<ElementFormat::Float8E5M2>(data, scale, scale_inv, max_elem, st);
    else // the spec: any element format or a NaN or inf, one call per value
        for (float& v : data) {
            const quant_math::CastResult c =
                quant_math::cast_element(v, scale, scale_inv, spec.element, max_elem);
            st.clipped += c.clipped ? 1 : 0;
            st.zeros += c.zero ? 1 : 0;
            v = c.value;
        }
    if (spec.scaling == QuantScaling::Delayed && record)
        quant_math::delayed_record(state.data(), static_cast<std::size_t>(spec.history_len),
                                   st.amax, max_elem, spec.margin, spec.amax_most_recent, scale);
    return st;
}

QuantTensorStats fp8_codes_tensor(std::span<const float> data, std::size_t rows, std::size_t cols,
                                  const QuantSpec& spec, std::span<float> state, bool record,
                                  std::span<std::uint8_t> codes, std::span<std::uint8_t> codes_t,
                                  float& scale_inv) {
    const std::size_t n = rows * cols;
    if (spec.scaling == QuantScaling::Block || spec.hadamard || data.size() != n ||
        (!codes.empty() && codes.size() != n) || (!codes_t.empty() && codes_t.size() != n))
        throw Error(ErrorKind::Internal, "fp8_codes_tensor: a per-tensor spec and " +
                                             std::to_string(rows) + "×" + std::to_string(cols) +
                                             " values and codes");
    if (state.size() < quant_state_floats(spec))
        throw Error(ErrorKind::Internal, "fp8_codes_tensor: missing delayed-scaling state");
    QuantTensorStats st;
    st.count = n;
    st.blocks = 1;
    st.amax = amax_of(data);
    const double max_elem = element_spec(spec.element).max_finite;
    float scale = 1.0f; // fake_quantize_tensor's rule, word for word
    if (spec.scaling == QuantScaling::Current)
        scale = fp8_scale_for(st.amax, max_elem, 0, 1.0f);
    else if (state[0] > 0)
        scale = state[0];
    scale_inv = 1.0f / scale;
    st.scale = scale_inv;
    const bool finite = std::isfinite(st.amax);
    if (finite && spec.element == ElementFormat::Float8E4M3)
        codes_per_tensor<ElementFormat::Float8E4M3>(data, rows, cols, scale, max_elem, codes,
                                                    codes_t, st);
    else if (finite && spec.element == ElementFormat::Float8E5M2)
        codes_per_tensor<ElementFormat::Float8E5M2>(data, rows, cols, scale, max_elem, codes,
                                                    codes_t, st);
    else // a NaN or inf in the tensor: the spec's definition, one call per value
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) {
                const quant_math::CodeResult q = quant_math::cast_code(
                    data[r * cols + c], scale, scale_inv, spec.element, max_elem);
                st.clipped += q.clipped ? 1 : 0;
                st.zeros += q.zero ? 1 : 0;
                const auto code = static_cast<std::uint8_t>(q.code);
                if (!codes.empty()) codes[r * cols + c] = code;
                if (!codes_t.empty()) codes_t[c * rows + r] = code;
            }
    if (spec.scaling == QuantScaling::Delayed && record)
        quant_math::delayed_record(state.data(), static_cast<std::size_t>(spec.history_len),
                                   st.amax, max_elem, spec.margin, spec.amax_most_recent, scale);
    return st;
}

} // namespace mantissa
