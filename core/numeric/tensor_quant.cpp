// Per-tensor FP8 (delayed and current scaling, as TE's Float8Quantizer / Float8CurrentScaling)
// and block scaling (core/numeric/block_quant) behind one call; nothing here allocates.
#include "core/numeric/tensor_quant.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/numeric/element_codec.h"
#include "core/numeric/hadamard.h"
#include "core/numeric/quant_math.h"

namespace mantissa {

namespace {

// In float (exact: a magnitude is a float too); the NaN check leaves the loop branch-free.
double amax_of(std::span<const float> data) {
    float amax = 0;
    bool nan = false;
    for (float v : data) {
        const float a = std::fabs(v);
        nan = nan || a != a;
        amax = a > amax ? a : amax;
    }
    if (!nan) return static_cast<double>(amax);
    for (float v : data) // the first NaN, as a float64 magnitude (its payload kept)
        if (std::isnan(v)) return std::fabs(static_cast<double>(v));
    return std::numeric_limits<double>::quiet_NaN();
}

// The per-tensor cast (TE): code = round(v * scale), value = code * scale_inv, counting the
// clipped and flushed values. The element format is a template parameter so the codec's layout is
// constant and decoding is a table look-up; the arithmetic is encode_element / decode_element's.
template <ElementFormat F>
void cast_per_tensor(std::span<float> data, float scale, float scale_inv, double max_elem,
                     QuantTensorStats& st) {
    constexpr auto& values = element_codec::kValues<F>;
    const double limit = max_elem * (1.0 + 0x1p-22);
    std::size_t clipped = 0, zeros = 0;
    for (float& v : data) {
        const double x = static_cast<double>(v) * static_cast<double>(scale); // exact: 24 x 24
        const std::uint32_t code = element_codec::encode_nearest<F>(x);       // saturating
        const double decoded = values[code] * static_cast<double>(scale_inv);
        clipped += std::fabs(x) > limit ? 1 : 0;
        zeros += (v != 0 && !std::isnan(v) && decoded == 0) ? 1 : 0;
        v = static_cast<float>(decoded);
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
                                                       spec.block_cols, &st.scale);
        st.clipped = b.clipped;
        st.zeros = b.zeros;
        st.blocks = b.blocks;
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
    if (spec.element == ElementFormat::Float8E4M3)
        cast_per_tensor<ElementFormat::Float8E4M3>(data, scale, scale_inv, max_elem, st);
    else if (spec.element == ElementFormat::Float8E5M2)
        cast_per_tensor<ElementFormat::Float8E5M2>(data, scale, scale_inv, max_elem, st);
    else // the spec: any element format, one call per value
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

} // namespace mantissa
