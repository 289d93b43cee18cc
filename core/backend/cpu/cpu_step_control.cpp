// The CPU engine's step control: found-inf detection, gated optimizer updates, the loss-scale step.
// It runs the same update_rules.h and next_loss_scale() the CUDA engine does, so both agree bit for
// bit.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/numeric/float_format.h"
#include "core/numeric/half.h"
#include "core/optim/update_rules.h"

namespace mantissa {

namespace {

// Elements per chunk when 16/8-bit storage is widened to float32: 5 arrays of this fit on the
// stack (20 KiB in float32) and in L1, with no heap allocation in the step.
constexpr std::size_t kChunk = 512;
constexpr int kMaxSlots = 3;

StepScalars* scalars_of(const Tensor& scalars) {
    if (scalars.data == nullptr)
        throw Error(ErrorKind::Internal,
                    "step scalars tensor '" + scalars.name + "' has no memory");
    if (scalars.bytes() < sizeof(StepScalars))
        throw Error(ErrorKind::Internal, "step scalars tensor '" + scalars.name + "' holds " +
                                             std::to_string(scalars.bytes()) +
                                             " bytes; StepScalars needs " +
                                             std::to_string(sizeof(StepScalars)));
    return static_cast<StepScalars*>(scalars.data);
}

// Round functors for emulated variables: an operation computed in float32, stored in 16/8 bits.
// float32 arithmetic on float16/bfloat16 operands rounds +, -, *, /, sqrt correctly after this
// second rounding (float32 has more than 2p + 2 significand bits for p = 11 and 8).
struct RoundFloat16 {
    float operator()(float x) const { return half_bits_to_float(float_to_half_bits(x)); }
};
struct RoundBFloat16 {
    float operator()(float x) const { return bfloat16_bits_to_float(float_to_bfloat16_bits(x)); }
};
struct RoundFormat { // float8: rare, so the general encoder is fast enough
    DType dtype;
    float operator()(float x) const {
        return static_cast<float>(round_to_dtype(static_cast<double>(x), dtype));
    }
};

void load(const Tensor& t, std::size_t offset, std::size_t count, float* dst) {
    convert_to_float(static_cast<const char*>(t.data) + offset * dtype_size(t.dtype), t.dtype, dst,
                     count);
}
void load(const Tensor& t, std::size_t offset, std::size_t count, double* dst) {
    convert_to_double(static_cast<const char*>(t.data) + offset * dtype_size(t.dtype), t.dtype, dst,
                      count);
}
void store(const float* src, std::size_t offset, std::size_t count, Tensor& t) {
    convert_from_float(src, static_cast<char*>(t.data) + offset * dtype_size(t.dtype), t.dtype,
                       count);
}
void store(const double* src, std::size_t offset, std::size_t count, Tensor& t) {
    convert_from_double(src, static_cast<char*>(t.data) + offset * dtype_size(t.dtype), t.dtype,
                        count);
}

// Widens each array chunk by chunk to W (float32, or float64 for float64 params), updates,
// and narrows the weight and slots back (exact when `round` already rounded to their dtype).
// With `unscale` each widened gradient element is multiplied by `inv_scale` first
// (optimizer_update's unscale_grad).
template <class W, class Round>
void update_chunked(const OptimizerConfig& config, Tensor& param, const Tensor& grad,
                    std::span<Tensor* const> slot_tensors, std::size_t n, std::int64_t t,
                    Round round, bool unscale = false, W inv_scale = 1) {
    W w[kChunk];
    W g[kChunk];
    W slot_data[kMaxSlots][kChunk];
    W* slot_ptrs[kMaxSlots] = {slot_data[0], slot_data[1], slot_data[2]};
    for (std::size_t offset = 0; offset < n; offset += kChunk) {
        const std::size_t count = std::min(kChunk, n - offset);
        load(param, offset, count, w);
        load(grad, offset, count, g);
        if (unscale) for_each_index(count, [&](std::size_t i) { g[i] *= inv_scale; });
        for (std::size_t k = 0; k < slot_tensors.size(); ++k)
            load(*slot_tensors[k], offset, count, slot_ptrs[k]);
        apply_update(config, w, g, slot_ptrs, count, t, round);
        store(w, offset, count, param);
        for (std::size_t k = 0; k < slot_tensors.size(); ++k)
            store(slot_ptrs[k], offset, count, *slot_tensors[k]);
    }
}

// Float16/bfloat16 parameters: the same widening, but each chunk goes through update_chunk, which
// rounds after every operation with the vectorised round_in_place instead of a scalar functor
// per element (about 5x faster; the bits are update_element's). The rule is built once per tensor.
// Conventions with other operations than Keras's take update_element per element.
template <class Round>
void update_chunked_16bit(const OptimizerConfig& config, Tensor& param, const Tensor& grad,
                          std::span<Tensor* const> slot_tensors, std::size_t n, std::int64_t t,
                          Round round) {
    static_assert(kChunk <= kUpdateChunk, "update_chunk takes at most kUpdateChunk elements");
    const UpdateRule<float> rule = make_update_rule<float>(config, t, round);
    const DType dtype = param.dtype;
    const auto round_array = [dtype](float* data, std::size_t count) {
        round_in_place(data, count, dtype);
    };
    float w[kChunk];
    float g[kChunk];
    float slot_data[kMaxSlots][kChunk];
    float* slot_ptrs[kMaxSlots] = {slot_data[0], slot_data[1], slot_data[2]};
    for (std::size_t offset = 0; offset < n; offset += kChunk) {
        const std::size_t count = std::min(kChunk, n - offset);
        load(param, offset, count, w);
        load(grad, offset, count, g);
        for (std::size_t k = 0; k < slot_tensors.size(); ++k)
            load(*slot_tensors[k], offset, count, slot_ptrs[k]);
        if (update_chunk_supported(rule))
            update_chunk(rule, w, g, slot_ptrs, count, round_array);
        else
            for (std::size_t i = 0; i < count; ++i)
                update_element(rule, w[i], g[i], slot_ptrs, i, round);
        store(w, offset, count, param);
        for (std::size_t k = 0; k < slot_tensors.size(); ++k)
            store(slot_ptrs[k], offset, count, *slot_tensors[k]);
    }
}

void check_update_operands(const OptimizerConfig& config, const Tensor& param, const Tensor& grad,
                           std::span<Tensor* const> slot_tensors, const Tensor* compute_copy,
                           bool unscale_grad) {
    const auto fail = [&](const std::string& what) {
        throw Error(ErrorKind::InvalidArgument, std::string("optimizer_update(") +
                                                    optimizer_type_name(config.type) + ", '" +
                                                    param.name + "'): " + what);
    };
    if (static_cast<int>(slot_tensors.size()) != optimizer_slot_count(config))
        fail("got " + std::to_string(slot_tensors.size()) + " slots, the optimizer keeps " +
             std::to_string(optimizer_slot_count(config)));
    const auto check = [&](const Tensor& t, const char* role) {
        if (!is_floating(t.dtype))
            fail(std::string(role) + " '" + t.name + "' has non-float dtype " +
                 std::string(dtype_name(t.dtype)));
        if (t.numel() != param.numel())
            fail(std::string(role) + " '" + t.name + "' has " + std::to_string(t.numel()) +
                 " elements, the parameter " + std::to_string(param.numel()));
        if (t.numel() > 0 && t.data == nullptr)
            fail(std::string(role) + " '" + t.name + "' has no memory");
    };
    check(param, "parameter");
    check(grad, "gradient");
    for (const Tensor* slot : slot_tensors) check(*slot, "slot");
    if (compute_copy) check(*compute_copy, "compute copy");
    if (unscale_grad && param.dtype != DType::Float32 && param.dtype != DType::Float64)
        fail("unscaling the gradient needs a float32 or float64 parameter, not " +
             std::string(dtype_name(param.dtype)));
}

// 1 if x is inf or NaN: an integer test of the exponent field, whose OR over an array vectorises
// where a bool reduction of std::isfinite does not.
inline std::uint32_t nonfinite_bit(float x) {
    return (std::bit_cast<std::uint32_t>(x) & 0x7F800000u) == 0x7F800000u;
}
inline std::uint32_t nonfinite_bit(double x) {
    return (std::bit_cast<std::uint64_t>(x) & 0x7FF0000000000000u) == 0x7FF0000000000000u;
}

// Multiplies by `inv` in place and reports whether any result is inf or NaN.
template <class T>
bool unscale_native(T* data, std::size_t n, T inv) {
    std::uint32_t nonfinite = 0;
    for_each_index(n, [&](std::size_t i) {
        data[i] *= inv;
        nonfinite |= nonfinite_bit(data[i]);
    });
    return nonfinite != 0;
}

// unscale_and_check_finite for a gradient it leaves scaled: whether any element times `inv`, in
// float32 (float64 for a float64 gradient), is inf or NaN; nothing is written.
bool scaled_nonfinite(const Tensor& grad, std::size_t n, double inv) {
    std::uint32_t nonfinite = 0;
    if (grad.dtype == DType::Float64) {
        const double* data = grad.as<const double>();
        for_each_index(n, [&](std::size_t i) { nonfinite |= nonfinite_bit(data[i] * inv); });
        return nonfinite != 0;
    }
    const float inv_f = static_cast<float>(inv);
    float work[kChunk];
    for (std::size_t offset = 0; offset < n; offset += kChunk) {
        const std::size_t count = std::min(kChunk, n - offset);
        load(grad, offset, count, work);
        for_each_index(count, [&](std::size_t i) { nonfinite |= nonfinite_bit(work[i] * inv_f); });
    }
    return nonfinite != 0;
}

bool unscale_emulated(Tensor& grad, std::size_t n, float inv) {
    float work[kChunk];
    std::uint32_t nonfinite = 0;
    for (std::size_t offset = 0; offset < n; offset += kChunk) {
        const std::size_t count = std::min(kChunk, n - offset);
        load(grad, offset, count, work);
        for_each_index(count, [&](std::size_t i) { work[i] *= inv; });
        // Round once to the gradient dtype and test the stored value: a product that overflows
        // the 16-bit range (a scale below 1) is an inf the update must not see.
        round_in_place(work, count, grad.dtype);
        for_each_index(count, [&](std::size_t i) { nonfinite |= nonfinite_bit(work[i]); });
        store(work, offset, count, grad);
    }
    return nonfinite != 0;
}

// The update itself, after the checks and the skip decision (CpuBackend::optimizer_update).
// With `inv_scale` the gradient still carries the loss scale (optimizer_update's unscale_grad).
void update_in_place(const OptimizerConfig& config, Tensor& param, const Tensor& grad,
                     std::span<Tensor* const> slot_tensors, std::int64_t t,
                     std::optional<double> inv_scale) {
    const std::size_t n = static_cast<std::size_t>(param.numel());
    if (n == 0) return;
    bool float32_state = param.dtype == DType::Float32;
    for (const Tensor* slot : slot_tensors)
        float32_state = float32_state && slot->dtype == param.dtype;
    if (float32_state && (grad.dtype != DType::Float32 || inv_scale)) {
        // A float32 master reading a mixed layer's 16-bit gradient: only the gradient is widened
        // (and unscaled), chunk by chunk; the parameter and slots update in place.
        const float inv = static_cast<float>(inv_scale.value_or(1.0));
        float g[kChunk];
        for (std::size_t offset = 0; offset < n; offset += kChunk) {
            const std::size_t count = std::min(kChunk, n - offset);
            load(grad, offset, count, g);
            if (inv_scale) for_each_index(count, [&](std::size_t i) { g[i] *= inv; });
            float* slot_ptrs[kMaxSlots] = {};
            for (std::size_t k = 0; k < slot_tensors.size(); ++k)
                slot_ptrs[k] = slot_tensors[k]->as<float>() + offset;
            apply_update(config, param.as<float>() + offset, g, slot_ptrs, count, t, NoRounding{});
        }
        return;
    }
    if (inv_scale) { // float64, or float32 with slots of another dtype (check_update_operands)
        if (param.dtype == DType::Float64)
            update_chunked<double>(config, param, grad, slot_tensors, n, t, NoRounding{}, true,
                                   *inv_scale);
        else
            update_chunked<float>(config, param, grad, slot_tensors, n, t, NoRounding{}, true,
                                  static_cast<float>(*inv_scale));
        return;
    }

    bool uniform = grad.dtype == param.dtype;
    for (const Tensor* slot : slot_tensors) uniform = uniform && slot->dtype == param.dtype;
    if (uniform && param.dtype == DType::Float32) {
        float* slot_ptrs[kMaxSlots] = {};
        for (std::size_t k = 0; k < slot_tensors.size(); ++k)
            slot_ptrs[k] = slot_tensors[k]->as<float>();
        apply_update(config, param.as<float>(), grad.as<const float>(), slot_ptrs, n, t,
                     NoRounding{});
        return;
    }
    if (uniform && param.dtype == DType::Float64) {
        double* slot_ptrs[kMaxSlots] = {};
        for (std::size_t k = 0; k < slot_tensors.size(); ++k)
            slot_ptrs[k] = slot_tensors[k]->as<double>();
        apply_update(config, param.as<double>(), grad.as<const double>(), slot_ptrs, n, t,
                     NoRounding{});
        return;
    }
    // Mixed storage dtypes or an emulated parameter: widen in chunks. The rounding follows the
    // parameter's dtype: under a pure 16-bit policy weights, gradients and slots share it.
    switch (param.dtype) {
    case DType::Float64:
        update_chunked<double>(config, param, grad, slot_tensors, n, t, NoRounding{});
        break;
    case DType::Float32:
        update_chunked<float>(config, param, grad, slot_tensors, n, t, NoRounding{});
        break;
    case DType::Float16:
        update_chunked_16bit(config, param, grad, slot_tensors, n, t, RoundFloat16{});
        break;
    case DType::BFloat16:
        update_chunked_16bit(config, param, grad, slot_tensors, n, t, RoundBFloat16{});
        break;
    default:
        update_chunked<float>(config, param, grad, slot_tensors, n, t, RoundFormat{param.dtype});
        break;
    }
}

} // namespace

void CpuBackend::begin_step(Tensor& scalars) {
    StepScalars* s = scalars_of(scalars);
    s->found_inf = 0;
    s->nonfinite_mask = 0;
    s->loss_sum = 0.0;
    s->correct = 0;
    s->examples = 0;
}

void CpuBackend::unscale_and_check_finite(std::span<Tensor* const> grads, Tensor& scalars,
                                          std::span<const std::uint8_t> leave_scaled) {
    StepScalars* s = scalars_of(scalars);
    if (!leave_scaled.empty() && leave_scaled.size() != grads.size())
        throw Error(ErrorKind::Internal,
                    "unscale_and_check_finite: " + std::to_string(leave_scaled.size()) +
                        " flags for " + std::to_string(grads.size()) + " gradients");
    bool any = false;
    for (std::size_t i = 0; i < grads.size(); ++i) {
        Tensor* grad = grads[i];
        const std::size_t n = static_cast<std::size_t>(grad->numel());
        if (n == 0) continue;
        bool nonfinite = false;
        if (grad->data == nullptr)
            throw Error(ErrorKind::Internal, "gradient '" + grad->name + "' has no memory");
        if (!is_floating(grad->dtype))
            throw Error(ErrorKind::InvalidArgument, "gradient '" + grad->name +
                                                        "' has non-float dtype " +
                                                        std::string(dtype_name(grad->dtype)));
        if (!leave_scaled.empty() && leave_scaled[i] != 0) {
            nonfinite = scaled_nonfinite(*grad, n, 1.0 / s->loss_scale);
            if (nonfinite) s->nonfinite_mask |= nonfinite_bit(static_cast<std::int64_t>(i));
            any |= nonfinite;
            continue;
        }
        switch (grad->dtype) {
        case DType::Float64:
            nonfinite |= unscale_native(grad->as<double>(), n, 1.0 / s->loss_scale);
            break;
        case DType::Float32:
            nonfinite |=
                unscale_native(grad->as<float>(), n, static_cast<float>(1.0 / s->loss_scale));
            break;
        default:
            nonfinite |= unscale_emulated(*grad, n, static_cast<float>(1.0 / s->loss_scale));
            break;
        }
        if (nonfinite) s->nonfinite_mask |= nonfinite_bit(static_cast<std::int64_t>(i));
        any |= nonfinite;
    }
    if (any) s->found_inf = 1; // never cleared here: several calls accumulate
}

void CpuBackend::optimizer_update(const OptimizerConfig& scheduled, Tensor& param,
                                  const Tensor& grad, std::span<Tensor* const> slot_tensors,
                                  const Tensor& scalars, bool skip_if_found_inf,
                                  Tensor* compute_copy, bool unscale_grad) {
    const StepScalars* s = scalars_of(scalars);
    // This step's learning rate from the schedule, at the step the scalars say.
    const OptimizerConfig config = optimizer_at_step(scheduled, s->iterations, s->skipped_total);
    check_update_operands(config, param, grad, slot_tensors, compute_copy, unscale_grad);
    if (skip_if_found_inf && s->found_inf != 0) return; // a skipped step writes nothing
    update_in_place(config, param, grad, slot_tensors, s->iterations + 1,
                    unscale_grad ? std::optional<double>(1.0 / s->loss_scale) : std::nullopt);
    // The forward's copy, rounded by the very cast a cast step would run.
    if (compute_copy) cast(param, *compute_copy);
}

void CpuBackend::finish_step(const LossScaleConfig& config, Tensor& scalars) {
    StepScalars* s = scalars_of(scalars);
    const LossScaleStep step =
        next_loss_scale(LossScaleState{s->loss_scale, s->good_steps}, s->found_inf != 0, config);
    s->scale_used = step.scale_used;
    s->skipped = step.skipped ? 1 : 0;
    if (step.skipped)
        ++s->skipped_total;
    else
        ++s->iterations;
    s->loss_scale = step.next.scale;
    s->good_steps = step.next.good_steps;
    advance_batch_position(*s);
}

StepScalars CpuBackend::read_scalars(const Tensor& scalars) {
    StepScalars values;
    std::memcpy(&values, scalars_of(scalars), sizeof(StepScalars));
    return values;
}

void CpuBackend::write_scalars(const StepScalars& values, Tensor& scalars) {
    std::memcpy(scalars_of(scalars), &values, sizeof(StepScalars));
}

namespace {

int checked_slot(int slot) {
    if (slot < 0 || slot >= kReadoutSlots)
        throw Error(ErrorKind::Internal, "readout slot " + std::to_string(slot) +
                                             " is outside [0, " + std::to_string(kReadoutSlots) +
                                             ")");
    return slot;
}

} // namespace

void CpuBackend::enqueue_readout(const Tensor& scalars, int slot) {
    m_readout[checked_slot(slot)] = read_scalars(scalars);
}

StepReadout CpuBackend::read_readout(int slot) {
    StepReadout out;
    out.scalars = m_readout[checked_slot(slot)];
    return out;
}

} // namespace mantissa
