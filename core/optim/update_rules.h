// The optimizer update formulas (Keras 3), applied elementwise, shared by every backend.
// `round` runs after EVERY operation, so pure 16-bit policies fail as Keras/TF running each op in
// 16 bits do.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/optim/optimizer_config.h"

// The per-element step is also callable from CUDA kernels.
#if defined(__CUDACC__)
#define MANTISSA_HOST_DEVICE __host__ __device__
#else
#define MANTISSA_HOST_DEVICE
#endif

namespace mantissa {

// The formulas, with every operation rounded to the variable dtype (written r(.) below: identity
// for float32/float64; nearest-even float16/bfloat16 for pure 16-bit policies). w is the weight,
// g its (unscaled) gradient, t = iterations + 1 (optimizer steps applied so far, plus one).
//
//   SGD      momentum == 0:  w = w - g*lr
//            momentum != 0:  m = m*momentum - g*lr
//                            w = w + m                          (nesterov: w = w + (m*momentum -
//                            g*lr))
//   RMSprop  v = rho*v + (1-rho)*g²
//            centered:       a = rho*a + (1-rho)*g;  denom = (v - a²) + epsilon
//            else:           denom = v + epsilon                 (epsilon INSIDE the sqrt, as
//            Keras/TF) increment = lr*g / sqrt(denom) momentum > 0:   mom = momentum*mom +
//            increment;  w = w - mom else:           w = w - increment
//   Adam     alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
//            m = m + (g - m)*(1-beta_1)
//            v = v + (g² - v)*(1-beta_2)
//            w = w - m*alpha / (sqrt(v) + epsilon)
//   AdamW    w = w - (w*weight_decay)*lr, then Adam.
//
// Constants are rounded to the dtype before use, the way TF converts a Python float: double ->
// float32 -> the variable dtype (so RMSprop's epsilon 1e-7 becomes the float16 subnormal 2^-23,
// and 1 - beta_2 = 0.001 becomes 2^-10). t itself is converted too, as Keras casts
// `iterations + 1` to the variable dtype (float16 holds integers exactly only up to 2048).
//
// Slot order (optimizer_config.cpp): SGD [momentum]; RMSprop velocity, [momentum],
// [average_gradient]; Adam/AdamW m, v.

// The Round functor for float32 and float64 variables.
struct NoRounding {
    template <class T>
    MANTISSA_HOST_DEVICE T operator()(T x) const {
        return x;
    }
};

// Everything an update needs besides the arrays, already rounded to the dtype; computed once per
// tensor on the host so a CUDA kernel can take it by value.
template <class T>
struct UpdateRule {
    OptimizerType type = OptimizerType::SGD;
    bool has_momentum = false; // SGD momentum != 0, RMSprop momentum > 0
    bool nesterov = false;
    bool centered = false;
    int momentum_slot = 0; // RMSprop's momentum slot index (1)
    int average_slot = 0;  // RMSprop's average_gradient slot index (1 or 2)
    T lr{}, momentum{}, rho{}, one_minus_rho{}, epsilon{};
    T one_minus_beta_1{}, one_minus_beta_2{}, alpha{}; // Adam; alpha includes the bias correction
    T weight_decay{};                                  // AdamW
};

// The constant as TF builds it from a Python float: float32 first, then the variable dtype.
template <class T, class Round>
T rounded_constant(double value, Round round) {
    if constexpr (sizeof(T) == sizeof(double)) {
        return round(static_cast<T>(value));
    } else {
        return round(static_cast<T>(static_cast<float>(value)));
    }
}

template <class T, class Round>
UpdateRule<T> make_update_rule(const OptimizerConfig& config, std::int64_t t, Round round) {
    using std::pow;
    using std::sqrt;
    UpdateRule<T> rule;
    rule.type = config.type;
    rule.lr = rounded_constant<T>(config.learning_rate, round);
    rule.epsilon = rounded_constant<T>(config.epsilon, round);
    switch (config.type) {
    case OptimizerType::SGD:
        rule.has_momentum = config.momentum != 0.0;
        rule.nesterov = config.nesterov;
        rule.momentum = rounded_constant<T>(config.momentum, round);
        break;
    case OptimizerType::RMSprop:
        rule.has_momentum = config.momentum > 0.0;
        rule.centered = config.centered;
        rule.momentum_slot = 1;
        rule.average_slot = rule.has_momentum ? 2 : 1;
        rule.momentum = rounded_constant<T>(config.momentum, round);
        rule.rho = rounded_constant<T>(config.rho, round);
        rule.one_minus_rho =
            rounded_constant<T>(1.0 - config.rho, round); // Python computes 1 - rho
        break;
    case OptimizerType::AdamW:
        rule.weight_decay = rounded_constant<T>(config.weight_decay, round);
        [[fallthrough]];
    case OptimizerType::Adam: {
        const T step = rounded_constant<T>(static_cast<double>(t), round);
        const T beta_1 = rounded_constant<T>(config.beta_1, round);
        const T beta_2 = rounded_constant<T>(config.beta_2, round);
        const T beta_1_power = round(static_cast<T>(pow(beta_1, step)));
        const T beta_2_power = round(static_cast<T>(pow(beta_2, step)));
        const T numerator =
            round(rule.lr * round(static_cast<T>(sqrt(round(T(1) - beta_2_power)))));
        rule.alpha = round(numerator / round(T(1) - beta_1_power));
        rule.one_minus_beta_1 = rounded_constant<T>(1.0 - config.beta_1, round);
        rule.one_minus_beta_2 = rounded_constant<T>(1.0 - config.beta_2, round);
        break;
    }
    }
    return rule;
}

// One element: w = weights[i], g = grads[i], slot k = slot_arrays[k][i]. Every intermediate is
// rounded.
template <class T, class Round>
MANTISSA_HOST_DEVICE inline void update_element(const UpdateRule<T>& rule, T& w, T g,
                                                T* const* slot_arrays, std::size_t i, Round round) {
    using std::sqrt;
    switch (rule.type) {
    case OptimizerType::SGD: {
        const T step = round(g * rule.lr);
        if (!rule.has_momentum) {
            w = round(w - step);
            break;
        }
        T& m = slot_arrays[0][i];
        m = round(round(m * rule.momentum) - step);
        if (rule.nesterov)
            w = round(w + round(round(m * rule.momentum) - step));
        else
            w = round(w + m);
        break;
    }
    case OptimizerType::RMSprop: {
        T& v = slot_arrays[0][i];
        v = round(round(rule.rho * v) + round(rule.one_minus_rho * round(g * g)));
        T denominator;
        if (rule.centered) {
            T& a = slot_arrays[rule.average_slot][i];
            a = round(round(rule.rho * a) + round(rule.one_minus_rho * g));
            denominator = round(round(v - round(a * a)) + rule.epsilon);
        } else {
            denominator = round(v + rule.epsilon);
        }
        const T increment = round(round(rule.lr * g) / round(static_cast<T>(sqrt(denominator))));
        if (rule.has_momentum) {
            T& mom = slot_arrays[rule.momentum_slot][i];
            mom = round(round(rule.momentum * mom) + increment);
            w = round(w - mom);
        } else {
            w = round(w - increment);
        }
        break;
    }
    case OptimizerType::AdamW:
        w = round(w - round(round(w * rule.weight_decay) * rule.lr));
        [[fallthrough]];
    case OptimizerType::Adam: {
        T& m = slot_arrays[0][i];
        T& v = slot_arrays[1][i];
        m = round(m + round(round(g - m) * rule.one_minus_beta_1));
        v = round(v + round(round(round(g * g) - v) * rule.one_minus_beta_2));
        const T denominator = round(round(static_cast<T>(sqrt(v))) + rule.epsilon);
        w = round(w - round(round(m * rule.alpha) / denominator));
        break;
    }
    }
}

// The most elements update_chunk takes in one call (its scratch arrays live on the stack).
inline constexpr std::size_t kUpdateChunk = 512;

// Runs op(i) for i in [0, n) in fixed blocks: at -O2 GCC vectorises only loops that need no
// scalar epilogue and no runtime checks, which a constant trip count gives; the tail is scalar.
template <class Op>
inline void for_each_index(std::size_t n, Op op) {
    constexpr std::size_t kBlock = 64;
    std::size_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
        for (std::size_t j = 0; j < kBlock; ++j) op(i + j);
    for (; i < n; ++i) op(i);
}

// The same arithmetic as update_element<float>, one operation at a time over n elements: each
// step is a plain loop over the arrays followed by `round_array(data, n)`, which must round every
// element exactly as the scalar Round does (the CPU engine passes a vectorised round_in_place).
// A scalar functor called between every operation keeps a loop from vectorising; this form
// vectorises both the arithmetic and the rounding, and keeps each operation's operand order, so
// the two paths produce the same bits (tst_optim compares them), except that a result whose two
// operands are both NaN may carry the other NaN's payload: GCC orders the operands of + and *
// as it likes, differently in scalar and vector code. CPU only: not for CUDA, whose
// kernels call update_element per thread. w, g and the slots must not overlap; n <= kUpdateChunk.
template <class RoundArray>
void update_chunk(const UpdateRule<float>& rule, float* w, const float* g,
                  float* const* slot_arrays, std::size_t n, RoundArray round_array) {
    using std::sqrt;
    // Two scratch arrays hold the intermediates; the constants are copied to locals so that
    // stores through the float pointers cannot be assumed to change them mid-loop.
    float a[kUpdateChunk];
    float b[kUpdateChunk];
    const float lr = rule.lr, momentum = rule.momentum, epsilon = rule.epsilon;
    switch (rule.type) {
    case OptimizerType::SGD: {
        for_each_index(n, [&](std::size_t i) { b[i] = g[i] * lr; }); // step
        round_array(b, n);
        if (!rule.has_momentum) {
            for_each_index(n, [&](std::size_t i) { w[i] = w[i] - b[i]; });
            round_array(w, n);
            break;
        }
        float* m = slot_arrays[0];
        for_each_index(n, [&](std::size_t i) { a[i] = m[i] * momentum; });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { m[i] = a[i] - b[i]; });
        round_array(m, n);
        if (rule.nesterov) {
            for_each_index(n, [&](std::size_t i) { a[i] = m[i] * momentum; });
            round_array(a, n);
            for_each_index(n, [&](std::size_t i) { a[i] = a[i] - b[i]; });
            round_array(a, n);
            for_each_index(n, [&](std::size_t i) { w[i] = w[i] + a[i]; });
        } else {
            for_each_index(n, [&](std::size_t i) { w[i] = w[i] + m[i]; });
        }
        round_array(w, n);
        break;
    }
    case OptimizerType::RMSprop: {
        const float rho = rule.rho, one_minus_rho = rule.one_minus_rho;
        float* v = slot_arrays[0];
        for_each_index(n, [&](std::size_t i) { a[i] = rho * v[i]; });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { b[i] = g[i] * g[i]; });
        round_array(b, n);
        for_each_index(n, [&](std::size_t i) { b[i] = one_minus_rho * b[i]; });
        round_array(b, n);
        for_each_index(n, [&](std::size_t i) { v[i] = a[i] + b[i]; });
        round_array(v, n);
        // a = denominator
        if (rule.centered) {
            float* avg = slot_arrays[rule.average_slot];
            for_each_index(n, [&](std::size_t i) { a[i] = rho * avg[i]; });
            round_array(a, n);
            for_each_index(n, [&](std::size_t i) { b[i] = one_minus_rho * g[i]; });
            round_array(b, n);
            for_each_index(n, [&](std::size_t i) { avg[i] = a[i] + b[i]; });
            round_array(avg, n);
            for_each_index(n, [&](std::size_t i) { a[i] = avg[i] * avg[i]; });
            round_array(a, n);
            for_each_index(n, [&](std::size_t i) { a[i] = v[i] - a[i]; });
            round_array(a, n);
            for_each_index(n, [&](std::size_t i) { a[i] = a[i] + epsilon; });
        } else {
            for_each_index(n, [&](std::size_t i) { a[i] = v[i] + epsilon; });
        }
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { a[i] = sqrt(a[i]); });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { b[i] = lr * g[i]; });
        round_array(b, n);
        for_each_index(n, [&](std::size_t i) { b[i] = b[i] / a[i]; }); // increment
        round_array(b, n);
        if (rule.has_momentum) {
            float* mom = slot_arrays[rule.momentum_slot];
            for_each_index(n, [&](std::size_t i) { a[i] = momentum * mom[i]; });
            round_array(a, n);
            for_each_index(n, [&](std::size_t i) { mom[i] = a[i] + b[i]; });
            round_array(mom, n);
            for_each_index(n, [&](std::size_t i) { w[i] = w[i] - mom[i]; });
        } else {
            for_each_index(n, [&](std::size_t i) { w[i] = w[i] - b[i]; });
        }
        round_array(w, n);
        break;
    }
    case OptimizerType::AdamW: {
        const float weight_decay = rule.weight_decay;
        for_each_index(n, [&](std::size_t i) { a[i] = w[i] * weight_decay; });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { a[i] = a[i] * lr; });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { w[i] = w[i] - a[i]; });
        round_array(w, n);
    }
        [[fallthrough]];
    case OptimizerType::Adam: {
        const float one_minus_beta_1 = rule.one_minus_beta_1;
        const float one_minus_beta_2 = rule.one_minus_beta_2, alpha = rule.alpha;
        float* m = slot_arrays[0];
        float* v = slot_arrays[1];
        for_each_index(n, [&](std::size_t i) { a[i] = g[i] - m[i]; });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { a[i] = a[i] * one_minus_beta_1; });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { m[i] = m[i] + a[i]; });
        round_array(m, n);
        for_each_index(n, [&](std::size_t i) { a[i] = g[i] * g[i]; });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { a[i] = a[i] - v[i]; });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { a[i] = a[i] * one_minus_beta_2; });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { v[i] = v[i] + a[i]; });
        round_array(v, n);
        for_each_index(n, [&](std::size_t i) { a[i] = sqrt(v[i]); }); // a = denominator
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { a[i] = a[i] + epsilon; });
        round_array(a, n);
        for_each_index(n, [&](std::size_t i) { b[i] = m[i] * alpha; });
        round_array(b, n);
        for_each_index(n, [&](std::size_t i) { b[i] = b[i] / a[i]; });
        round_array(b, n);
        for_each_index(n, [&](std::size_t i) { w[i] = w[i] - b[i]; });
        round_array(w, n);
        break;
    }
    }
}

// Applies ONE optimizer update to n elements in place. `slot_arrays` holds
// optimizer_slot_count(config) arrays of n elements each, in the slot order above. T is float or
// double.
template <class T, class Round>
void apply_update(const OptimizerConfig& config, T* w, const T* g, T* const* slot_arrays,
                  std::size_t n, std::int64_t t, Round round) {
    const UpdateRule<T> rule = make_update_rule<T>(config, t, round);
    for (std::size_t i = 0; i < n; ++i) update_element(rule, w[i], g[i], slot_arrays, i, round);
}

} // namespace mantissa
