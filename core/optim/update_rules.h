// The optimizer update formulas of three conventions (Keras 3, tf.keras 2.0-2.10, PyTorch 2.x),
// applied elementwise, shared by every backend. `round` runs after every operation the framework
// rounds, so pure 16-bit policies fail (or train) as the framework running in 16 bits does.
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

// w is the weight, g its (unscaled) gradient, t = iterations + 1 (optimizer steps applied so
// far, plus one). r(.) rounds to the variable dtype: identity for float32/float64, nearest-even
// float16/bfloat16 under pure 16-bit policies.
//
// ---- keras: Keras 3 (keras/src/optimizers/{sgd,rmsprop,adam,adamw}.py), also tf.keras from
// TF 2.11. Every operation is a backend op in the variable dtype, so r(.) follows each one.
//   SGD      momentum == 0:  w = w - g*lr
//            momentum != 0:  m = m*momentum - g*lr
//                            w = w + m          (nesterov: w = w + (m*momentum - g*lr))
//   RMSprop  v = rho*v + (1-rho)*g²
//            centered:       a = rho*a + (1-rho)*g;  denom = (v - a²) + epsilon
//            else:           denom = v + epsilon          (epsilon INSIDE the square root)
//            increment = lr*g / sqrt(denom)
//            momentum > 0:   mom = momentum*mom + increment;  w = w - mom
//            else:           w = w - increment
//   Adam     alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
//            m = m + (g - m)*(1-beta_1)
//            v = v + (g² - v)*(1-beta_2)
//            w = w - m*alpha / (sqrt(v) + epsilon)      (epsilon-hat: added before the bias
//                                                         correction, which sits in alpha)
//   AdamW    w = w - (w*weight_decay)*lr, then Adam.
// Constants are rounded as TF converts a Python float: double -> float32 -> the variable dtype
// (RMSprop's epsilon 1e-7 becomes the float16 subnormal 2^-23); 1-rho and 1-beta are computed in
// Python (double) first. t is cast to the variable dtype (float16 holds integers only to 2048).
//
// ---- tf_keras_2: tf.keras in TF 2.0-2.10, optimizer_v2 (tensorflow/python/keras/optimizer_v2/
// rmsprop.py, adam.py, gradient_descent.py, calling the fused kernels of
// tensorflow/core/kernels/training_ops.cc). The kernels are Eigen expressions: one rounding per
// Eigen operation. 1-rho and 1-beta are computed in the variable dtype from the rounded rho, beta.
//   SGD      ApplyGradientDescent / ApplyKerasMomentum: the same operations as keras.
//   RMSprop  momentum == 0 (Python ops in rmsprop.py's _resource_apply_dense):
//              v = rho*v + (1-rho)*g²
//              centered: a = rho*a + (1-rho)*g;  denom = v - a²   else: denom = v
//              w = w - lr*g / (sqrt(denom) + epsilon)    (epsilon OUTSIDE the square root)
//            momentum > 0 (ApplyRMSProp; ApplyCenteredRMSProp when centered):
//              v = v + (g² - v)*(1-rho)
//              centered: a = a + (g - a)*(1-rho);  denom = (v - a²) + epsilon
//              else:     denom = v + epsilon             (epsilon inside, as keras)
//              mom = mom*momentum + g*lr / sqrt(denom);  w = w - mom
//   Adam     ApplyAdam: keras's operations (alpha = lr*sqrt(1-beta_2^t)/(1-beta_1^t) in the dtype).
//   AdamW    not in tf.keras 2.x (validate_optimizer refuses it).
//
// ---- pytorch: torch.optim 2.x, the single-tensor path (torch/optim/sgd.py, rmsprop.py, adam.py,
// adamw.py). A 16-bit tensor op computes in float32 ("opmath") and rounds ONCE, so r(.) follows
// each torch op, not each arithmetic operation; Python scalars reach the kernel as float32
// (double for float64 tensors), and the bias corrections are Python doubles. The intermediate
// float32 arithmetic is written unfused (PyTorch's CPU kernels may fuse a + alpha*b into one FMA,
// which can differ in float32's last bit before the 16-bit rounding).
//   SGD      momentum != 0:  b = r(b*momentum);  b = r(b + g)     (dampening 0; the first step's
//                            b = clone(g) equals b = 0*momentum + g but for the sign of a zero)
//                            d = nesterov ? r(g + momentum*b) : b
//            w = r(w - lr*d)                                       (d = g without momentum)
//   RMSprop  v = r(v*alpha);  v = r(v + (1-alpha)*(g*g))           (addcmul)
//            centered:       a = r(lerp(a, g, 1-alpha));  s = r(sqrt(r(v - a*a)))
//            else:           s = r(sqrt(v))
//            s = r(s + epsilon)                                    (epsilon OUTSIDE the root)
//            momentum > 0:   b = r(b*momentum);  b = r(b + g/s);  w = r(w - lr*b)
//            else:           w = r(w - lr*(g/s))                   (addcdiv)
//   Adam     m = r(lerp(m, g, 1-beta_1))
//            v = r(v*beta_2);  v = r(v + (1-beta_2)*(g*g))
//            s = r(sqrt(v));  s = r(s / sqrt(1-beta_2^t));  s = r(s + epsilon)
//            w = r(w - (lr/(1-beta_1^t))*(m/s))    (epsilon after the bias correction)
//   AdamW    w = r(w*(1 - lr*weight_decay)), then Adam.
//   lerp(a, b, wt) = |wt| < 0.5 ? a + wt*(b - a) : b - (b - a)*(1 - wt)   (ATen's Lerp.h)
//
// Slot order (optimizer_config.cpp): SGD [momentum]; RMSprop velocity, [momentum],
// [average_gradient]; Adam/AdamW m, v. Every convention uses the same slots.

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
    OptimizerConvention convention = OptimizerConvention::Keras;
    bool has_momentum = false; // SGD momentum != 0, RMSprop momentum > 0
    bool nesterov = false;
    bool centered = false;
    int momentum_slot = 0; // RMSprop's momentum slot index (1)
    int average_slot = 0;  // RMSprop's average_gradient slot index (1 or 2)
    T lr{}, momentum{}, rho{}, one_minus_rho{}, epsilon{};
    T one_minus_beta_1{}, one_minus_beta_2{}, alpha{}; // Adam; alpha includes the bias correction
    T weight_decay{};                                  // AdamW
    // pytorch only: beta_2 itself, Adam's per-step lr/(1-beta_1^t) and sqrt(1-beta_2^t), and
    // AdamW's factor 1 - lr*weight_decay (all computed in double, then T)
    T beta_2{}, step_size{}, bias_correction2_sqrt{}, decay_factor{};
};

// PyTorch's per-step Adam constants, as torch.optim computes them in Python floats (doubles):
// step_size = lr / (1 - beta_1^t), bias_correction2_sqrt = sqrt(1 - beta_2^t). Shared by the host
// and the CUDA kernel (which knows t only on the device).
template <class T>
MANTISSA_HOST_DEVICE void set_pytorch_adam_step(UpdateRule<T>& rule, double learning_rate,
                                                double beta_1, double beta_2, double t) {
    using std::pow;
    using std::sqrt;
    rule.step_size = static_cast<T>(learning_rate / (1.0 - pow(beta_1, t)));
    rule.bias_correction2_sqrt = static_cast<T>(sqrt(1.0 - pow(beta_2, t)));
}

// The constant as TF builds it from a Python float: float32 first, then the variable dtype.
template <class T, class Round>
T rounded_constant(double value, Round round) {
    if constexpr (sizeof(T) == sizeof(double)) {
        return round(static_cast<T>(value));
    } else {
        return round(static_cast<T>(static_cast<float>(value)));
    }
}

// RMSprop's flags and slot indices (optimizer_config.cpp's order), the same in every convention.
template <class T>
void set_rmsprop_layout(UpdateRule<T>& rule, const OptimizerConfig& config) {
    rule.has_momentum = config.momentum > 0.0;
    rule.centered = config.centered;
    rule.momentum_slot = 1;
    rule.average_slot = rule.has_momentum ? 2 : 1;
}

// The pytorch convention's constants: a Python float reaching a torch kernel becomes the op's
// math type (float32 for 16-bit and float32 tensors, double for float64), never the 16-bit dtype.
template <class T>
UpdateRule<T> make_pytorch_rule(const OptimizerConfig& config, std::int64_t t) {
    UpdateRule<T> rule;
    rule.type = config.type;
    rule.convention = config.convention;
    rule.lr = static_cast<T>(config.learning_rate);
    rule.epsilon = static_cast<T>(config.epsilon);
    rule.momentum = static_cast<T>(config.momentum);
    rule.has_momentum = config.momentum != 0.0;
    rule.nesterov = config.nesterov;
    switch (config.type) {
    case OptimizerType::SGD:
        break;
    case OptimizerType::RMSprop:
        set_rmsprop_layout(rule, config);
        rule.rho = static_cast<T>(config.rho);
        rule.one_minus_rho = static_cast<T>(1.0 - config.rho);
        break;
    case OptimizerType::AdamW:
        rule.decay_factor = static_cast<T>(1.0 - config.learning_rate * config.weight_decay);
        [[fallthrough]];
    case OptimizerType::Adam:
        rule.has_momentum = false;
        rule.one_minus_beta_1 = static_cast<T>(1.0 - config.beta_1);
        rule.one_minus_beta_2 = static_cast<T>(1.0 - config.beta_2);
        rule.beta_2 = static_cast<T>(config.beta_2);
        set_pytorch_adam_step(rule, config.learning_rate, config.beta_1, config.beta_2,
                              static_cast<double>(t));
        break;
    }
    return rule;
}

// A hyperparameter (learning rate, momentum, rho, beta) in the variable dtype. tf_keras_2 keeps
// them in float32 variables and casts those to the variable dtype (_get_hyper), float64 included;
// the keras convention converts the Python float (rounded_constant). Epsilon is always converted
// from the Python float directly.
template <class T, class Round>
T hyperparameter(const OptimizerConfig& config, double value, Round round) {
    if (config.convention == OptimizerConvention::TfKeras2)
        return round(static_cast<T>(static_cast<float>(value)));
    return rounded_constant<T>(value, round);
}

template <class T, class Round>
UpdateRule<T> make_update_rule(const OptimizerConfig& config, std::int64_t t, Round round) {
    using std::pow;
    using std::sqrt;
    if (config.convention == OptimizerConvention::PyTorch) return make_pytorch_rule<T>(config, t);
    // tf_keras_2's kernels compute 1 - rho and 1 - beta in the variable dtype (T(1) - rho());
    // Keras 3 computes them in Python first.
    const bool tf2 = config.convention == OptimizerConvention::TfKeras2;
    const auto one_minus = [&](double value) {
        return tf2 ? round(T(1) - hyperparameter<T>(config, value, round))
                   : rounded_constant<T>(1.0 - value, round);
    };
    const auto hyper = [&](double value) { return hyperparameter<T>(config, value, round); };
    UpdateRule<T> rule;
    rule.type = config.type;
    rule.convention = config.convention;
    rule.lr = hyper(config.learning_rate);
    rule.epsilon = rounded_constant<T>(config.epsilon, round);
    switch (config.type) {
    case OptimizerType::SGD:
        rule.has_momentum = config.momentum != 0.0;
        rule.nesterov = config.nesterov;
        rule.momentum = hyper(config.momentum);
        break;
    case OptimizerType::RMSprop:
        set_rmsprop_layout(rule, config);
        rule.momentum = hyper(config.momentum);
        rule.rho = hyper(config.rho);
        rule.one_minus_rho = one_minus(config.rho);
        break;
    case OptimizerType::AdamW:
        rule.weight_decay = rounded_constant<T>(config.weight_decay, round);
        [[fallthrough]];
    case OptimizerType::Adam: {
        const T step = rounded_constant<T>(static_cast<double>(t), round);
        const T beta_1 = hyper(config.beta_1);
        const T beta_2 = hyper(config.beta_2);
        const T beta_1_power = round(static_cast<T>(pow(beta_1, step)));
        const T beta_2_power = round(static_cast<T>(pow(beta_2, step)));
        const T numerator =
            round(rule.lr * round(static_cast<T>(sqrt(round(T(1) - beta_2_power)))));
        rule.alpha = round(numerator / round(T(1) - beta_1_power));
        rule.one_minus_beta_1 = one_minus(config.beta_1);
        rule.one_minus_beta_2 = one_minus(config.beta_2);
        break;
    }
    }
    return rule;
}

// One element under the keras convention: w = weights[i], g = grads[i], slot k =
// slot_arrays[k][i]. Every intermediate is rounded.
template <class T, class Round>
MANTISSA_HOST_DEVICE inline void keras_update(const UpdateRule<T>& rule, T& w, T g,
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

// tf_keras_2's RMSprop (its SGD and Adam are keras's operations).
template <class T, class Round>
MANTISSA_HOST_DEVICE inline void tf_keras_2_rmsprop(const UpdateRule<T>& rule, T& w, T g,
                                                    T* const* slot_arrays, std::size_t i,
                                                    Round round) {
    using std::sqrt;
    T& v = slot_arrays[0][i];
    if (!rule.has_momentum) {
        // rms_t = rho * rms + one_minus_rho * square(grad); var - lr_t * grad / (sqrt + epsilon)
        v = round(round(rule.rho * v) + round(rule.one_minus_rho * round(g * g)));
        T denominator = v;
        if (rule.centered) {
            T& a = slot_arrays[rule.average_slot][i];
            a = round(round(rule.rho * a) + round(rule.one_minus_rho * g));
            denominator = round(v - round(a * a));
        }
        const T root = round(static_cast<T>(sqrt(denominator)));
        w = round(w - round(round(rule.lr * g) / round(root + rule.epsilon)));
        return;
    }
    // ApplyRMSProp / ApplyCenteredRMSProp: ms += (grad.square() - ms) * (1 - rho), ...
    v = round(v + round(round(round(g * g) - v) * rule.one_minus_rho));
    T denominator;
    if (rule.centered) {
        T& a = slot_arrays[rule.average_slot][i];
        a = round(a + round(round(g - a) * rule.one_minus_rho));
        denominator = round(round(v - round(a * a)) + rule.epsilon);
    } else {
        denominator = round(v + rule.epsilon);
    }
    T& mom = slot_arrays[rule.momentum_slot][i];
    const T increment = round(round(g * rule.lr) / round(static_cast<T>(sqrt(denominator))));
    mom = round(round(mom * rule.momentum) + increment);
    w = round(w - mom);
}

// ATen's lerp (aten/src/ATen/native/Lerp.h), in the op's math type.
template <class T>
MANTISSA_HOST_DEVICE inline T torch_lerp(T self, T end, T weight) {
    const T magnitude = weight < T(0) ? -weight : weight;
    return magnitude < T(0.5) ? self + weight * (end - self) : end - (end - self) * (T(1) - weight);
}

// One element under the pytorch convention: round once per torch op (see the table above).
template <class T, class Round>
MANTISSA_HOST_DEVICE inline void pytorch_update(const UpdateRule<T>& rule, T& w, T g,
                                                T* const* slot_arrays, std::size_t i, Round round) {
    using std::sqrt;
    switch (rule.type) {
    case OptimizerType::SGD: {
        T direction = g;
        if (rule.has_momentum) {
            T& b = slot_arrays[0][i];
            b = round(b * rule.momentum); // buf.mul_(momentum)
            b = round(b + g);             // .add_(grad, alpha=1 - dampening)
            direction = rule.nesterov ? round(g + rule.momentum * b) : b;
        }
        w = round(w - rule.lr * direction); // param.add_(grad, alpha=-lr)
        break;
    }
    case OptimizerType::RMSprop: {
        T& v = slot_arrays[0][i];
        v = round(v * rule.rho);                     // square_avg.mul_(alpha)
        v = round(v + rule.one_minus_rho * (g * g)); // .addcmul_(grad, grad, value=1-alpha)
        T s;
        if (rule.centered) {
            T& a = slot_arrays[rule.average_slot][i];
            a = round(torch_lerp(a, g, rule.one_minus_rho));   // grad_avg.lerp_(grad, 1-alpha)
            s = round(static_cast<T>(sqrt(round(v - a * a)))); // addcmul(value=-1).sqrt_()
        } else {
            s = round(static_cast<T>(sqrt(v))); // square_avg.sqrt()
        }
        s = round(s + rule.epsilon); // .add_(eps)
        if (rule.has_momentum) {
            T& b = slot_arrays[rule.momentum_slot][i];
            b = round(b * rule.momentum); // buf.mul_(momentum)
            b = round(b + g / s);         // .addcdiv_(grad, avg)
            w = round(w - rule.lr * b);   // param.add_(buf, alpha=-lr)
        } else {
            w = round(w - rule.lr * (g / s)); // param.addcdiv_(grad, avg, value=-lr)
        }
        break;
    }
    case OptimizerType::AdamW:
        w = round(w * rule.decay_factor); // param.mul_(1 - lr * weight_decay)
        [[fallthrough]];
    case OptimizerType::Adam: {
        T& m = slot_arrays[0][i];
        T& v = slot_arrays[1][i];
        m = round(torch_lerp(m, g, rule.one_minus_beta_1)); // exp_avg.lerp_(grad, 1-beta1)
        v = round(v * rule.beta_2);                         // exp_avg_sq.mul_(beta2)
        v = round(v + rule.one_minus_beta_2 * (g * g));     // .addcmul_(grad, grad, 1-beta2)
        T s = round(static_cast<T>(sqrt(v)));               // exp_avg_sq.sqrt()
        s = round(s / rule.bias_correction2_sqrt);          // / bias_correction2_sqrt
        s = round(s + rule.epsilon);                        // .add_(eps)
        w = round(w - rule.step_size * (m / s)); // param.addcdiv_(exp_avg, denom, -step_size)
        break;
    }
    }
}

// One element: w = weights[i], g = grads[i], slot k = slot_arrays[k][i], by the rule's convention.
template <class T, class Round>
MANTISSA_HOST_DEVICE inline void update_element(const UpdateRule<T>& rule, T& w, T g,
                                                T* const* slot_arrays, std::size_t i, Round round) {
    switch (rule.convention) {
    case OptimizerConvention::Keras:
        keras_update(rule, w, g, slot_arrays, i, round);
        return;
    case OptimizerConvention::TfKeras2:
        if (rule.type == OptimizerType::RMSprop)
            tf_keras_2_rmsprop(rule, w, g, slot_arrays, i, round);
        else
            keras_update(rule, w, g, slot_arrays, i, round);
        return;
    case OptimizerConvention::PyTorch:
        pytorch_update(rule, w, g, slot_arrays, i, round);
        return;
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
// Keras's operations only (update_chunk_supported); the others go element by element.
inline bool update_chunk_supported(const UpdateRule<float>& rule) {
    return rule.convention == OptimizerConvention::Keras ||
           (rule.convention == OptimizerConvention::TfKeras2 &&
            rule.type != OptimizerType::RMSprop);
}
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
