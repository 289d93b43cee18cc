// CudaBackend's small ops: validation with the CPU engine's rules, then one launch each
// (activations, softmax cross-entropy, pooling, normalization, dropout, histogram, step control,
// optimizer).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "core/backend/cuda/activation.cuh"
#include "core/backend/cuda/bias_grad.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/cuda_state.h"
#include "core/backend/cuda/dropout.cuh"
#include "core/backend/cuda/histogram.cuh"
#include "core/backend/cuda/maxpool.cuh"
#include "core/backend/cuda/norm.cuh"
#include "core/backend/cuda/op_checks.h"
#include "core/backend/cuda/optimizer_update.cuh"
#include "core/backend/cuda/softmax_xent.cuh"
#include "core/backend/cuda/step_control.cuh"
#include "core/backend/dropout_hash.h"
#include "core/backend/histogram.h"
#include "core/error.h"
#include "core/numeric/half.h"
#include "core/optim/update_rules.h"

namespace mantissa {

namespace {

using cuda_checks::describe;
using cuda_checks::require;

// The dtypes the CUDA engine computes in; float8 stays on the CPU engine for now.
void require_float(const Tensor& t, const char* op) {
    require(is_floating(t.dtype),
            std::string(op) + ": tensor " + describe(t) + " must have a floating dtype");
    if (t.dtype == DType::Float8E4M3 || t.dtype == DType::Float8E5M2)
        throw Error(ErrorKind::InvalidArgument,
                    std::string(op) + ": " + describe(t) +
                        ": the CUDA engine has no float8 yet; use the CPU engine (--device cpu)");
}

void require_same_numel(const Tensor& a, const Tensor& b, const char* op) {
    require(a.numel() == b.numel(), std::string(op) + ": tensors " + describe(a) + " and " +
                                        describe(b) + " must have the same number of elements");
}

std::int64_t last_dim(const Tensor& t) {
    return t.shape.empty() ? 1 : t.shape.back();
}

StepScalars* scalars_of(const Tensor& t) {
    require(t.data && t.bytes() >= sizeof(StepScalars),
            "step scalars tensor '" + t.name + "' is smaller than StepScalars");
    return static_cast<StepScalars*>(t.data);
}

cuda::PoolGeom pool_geom(const Pool2dArgs& a) {
    return {a.batch, a.in_h,   a.in_w,   a.channels, a.out_h,
            a.out_w, a.pool_h, a.pool_w, a.stride_h, a.stride_w};
}

void check_rate(double rate, const char* op) {
    if (!(rate >= 0.0 && rate < 1.0))
        throw Error(ErrorKind::InvalidArgument, std::string(op) + ": rate must be in [0, 1) (got " +
                                                    std::to_string(rate) + ")");
}

// A NormArgs tensor of the statistics dtype S (gamma's): given, of dtype S, `count` elements.
void require_stat(const Tensor* t, const char* what, DType s, std::int64_t count, const char* op) {
    require(t != nullptr, std::string(op) + ": " + what + " must be given");
    require(t->dtype == s && t->numel() == count,
            std::string(op) + ": " + what + " " + describe(*t) + " must be " +
                std::string(dtype_name(s)) + " (gamma's dtype) with " + std::to_string(count) +
                " elements");
}

// A (rows, cols) tensor of NormArgs (x, y, dy, dx): any float dtype, rows · cols elements.
void require_rows_cols(const Tensor& t, const NormArgs& args, const char* op) {
    require_float(t, op);
    require(t.numel() == args.rows * args.cols,
            std::string(op) + ": tensor " + describe(t) + " must hold rows x cols = " +
                std::to_string(args.rows) + " x " + std::to_string(args.cols) + " elements");
}

// The checks and fields the four normalization ops share: x, gamma, beta, epsilon, the width the
// kernels' scratch (bias_grad's, lent in stream order) allows.
cuda::NormLaunch norm_launch(const NormArgs& args, const char* op, void* scratch) {
    require(args.x && args.gamma && args.beta,
            std::string(op) + ": x, gamma and beta must be given");
    require(args.rows >= 0 && args.cols >= 0,
            std::string(op) + ": rows and cols must not be negative");
    require_rows_cols(*args.x, args, op);
    require_float(*args.gamma, op);
    const DType s = args.gamma->dtype;
    require_stat(args.gamma, "gamma", s, args.cols, op);
    require_stat(args.beta, "beta", s, args.cols, op);
    if (!(std::isfinite(args.epsilon) && args.epsilon > 0.0))
        throw Error(ErrorKind::InvalidArgument, std::string(op) +
                                                    ": epsilon must be finite and > 0 (got " +
                                                    std::to_string(args.epsilon) + ")");
    const std::int64_t max_cols =
        cuda::norm_max_cols(s == DType::Float64, cuda::kBiasGradScratchBytes);
    if (args.cols > max_cols)
        throw Error(ErrorKind::InvalidArgument,
                    std::string(op) + ": " + describe(*args.x) + " is normalized over " +
                        std::to_string(args.cols) + " columns; the CUDA engine takes at most " +
                        std::to_string(max_cols) + " with " + std::string(dtype_name(s)) +
                        " statistics");
    cuda::NormLaunch a;
    a.rows = args.rows;
    a.cols = args.cols;
    a.valid_rows = args.valid_rows;
    a.epsilon = args.epsilon;
    a.momentum = args.momentum;
    a.training = args.training;
    a.s_dtype = s;
    a.x = args.x->data;
    a.x_dtype = args.x->dtype;
    a.gamma = args.gamma->data;
    a.beta = args.beta->data;
    a.scratch = scratch;
    a.scratch_bytes = cuda::kBiasGradScratchBytes;
    return a;
}

// BatchNormalization's batch: the statistics and sums run over rows < valid_rows.
void require_valid_rows(const NormArgs& args, const char* op) {
    require(args.valid_rows >= 1 && args.valid_rows <= args.rows,
            std::string(op) + ": valid_rows " + std::to_string(args.valid_rows) +
                " is outside [1, " + std::to_string(args.rows) + "]");
}

// The saved statistics a backward pass reads.
void set_stats(cuda::NormLaunch& a, const NormArgs& args, std::int64_t count, const char* op) {
    require_stat(args.mean, "mean", a.s_dtype, count, op);
    require_stat(args.inv_std, "inv_std", a.s_dtype, count, op);
    a.mean = args.mean->data;
    a.inv_std = args.inv_std->data;
}

// A forward's statistics, written where given (the backward needs them; inference may not).
// A forward pass's output y: given, and of x's view.
void set_output(cuda::NormLaunch& a, const NormArgs& args, const char* op) {
    require(args.y != nullptr, std::string(op) + ": y must be given");
    require_rows_cols(*args.y, args, op);
    a.y = args.y->data;
    a.y_dtype = args.y->dtype;
}

void set_optional_stats(cuda::NormLaunch& a, const NormArgs& args, std::int64_t count,
                        const char* op) {
    if (args.mean) {
        require_stat(args.mean, "mean", a.s_dtype, count, op);
        a.mean = args.mean->data;
    }
    if (args.inv_std) {
        require_stat(args.inv_std, "inv_std", a.s_dtype, count, op);
        a.inv_std = args.inv_std->data;
    }
}

void set_grads(cuda::NormLaunch& a, const NormArgs& args, const Tensor& dy, Tensor& dx,
               Tensor& dgamma, Tensor& dbeta, const char* op) {
    require_rows_cols(dy, args, op);
    require_rows_cols(dx, args, op);
    for (const Tensor* g : {&dgamma, &dbeta}) {
        require_float(*g, op);
        require(g->numel() == args.cols, std::string(op) + ": gradient " + describe(*g) +
                                             " must have cols = " + std::to_string(args.cols) +
                                             " elements");
    }
    a.dy = dy.data;
    a.dy_dtype = dy.dtype;
    a.dx = dx.data;
    a.dx_dtype = dx.dtype;
    a.dgamma = dgamma.data;
    a.dgamma_dtype = dgamma.dtype;
    a.dbeta = dbeta.data;
    a.dbeta_dtype = dbeta.dtype;
}

// Host round functors for make_update_rule (the CPU engine's, bit for bit).
struct HostRoundFloat16 {
    float operator()(float x) const { return half_bits_to_float(float_to_half_bits(x)); }
};
struct HostRoundBFloat16 {
    float operator()(float x) const { return bfloat16_bits_to_float(float_to_bfloat16_bits(x)); }
};

template <class T, class Round>
cuda::DeviceRule device_rule(const OptimizerConfig& config, Round round) {
    const UpdateRule<T> r = make_update_rule<T>(config, 1, round); // t-free fields only
    cuda::DeviceRule d;
    d.type = r.type;
    d.convention = r.convention;
    d.has_momentum = r.has_momentum;
    d.nesterov = r.nesterov;
    d.centered = r.centered;
    d.momentum_slot = r.momentum_slot;
    d.average_slot = r.average_slot;
    d.lr = r.lr;
    d.momentum = r.momentum;
    d.rho = r.rho;
    d.one_minus_rho = r.one_minus_rho;
    d.epsilon = r.epsilon;
    d.one_minus_beta_1 = r.one_minus_beta_1;
    d.one_minus_beta_2 = r.one_minus_beta_2;
    d.weight_decay = r.weight_decay;
    d.decay_factor = r.decay_factor;
    d.learning_rate = config.learning_rate;
    d.schedule = config.schedule;
    d.raw_weight_decay = config.weight_decay;
    if (config.convention == OptimizerConvention::PyTorch) {
        d.beta_1 = config.beta_1; // torch.optim's bias corrections use the Python floats
        d.beta_2 = config.beta_2;
    } else {
        d.beta_1 = hyperparameter<T>(config, config.beta_1, round);
        d.beta_2 = hyperparameter<T>(config, config.beta_2, round);
    }
    return d;
}

} // namespace

void CudaBackend::activation_forward(Activation act, const Tensor& x, Tensor& y) {
    const char* op = "activation_forward";
    require_float(x, op);
    require_float(y, op);
    require_same_numel(x, y, op);
    const bool f64 = x.dtype == DType::Float64 || y.dtype == DType::Float64;
    cuda::launch_activation_forward(act, {x.data, x.dtype}, y.data, y.dtype, x.numel(), last_dim(x),
                                    f64, m_impl->stream);
}

void CudaBackend::activation_backward(Activation act, const Tensor& x, const Tensor& y,
                                      const Tensor& dy, Tensor& dx) {
    const char* op = "activation_backward";
    require_float(dy, op);
    require_float(dx, op);
    require_same_numel(dy, dx, op);
    const bool needs_x = act == Activation::Gelu;
    const bool needs_y = act != Activation::Gelu && act != Activation::Linear;
    if (needs_x) {
        require_float(x, op);
        require_same_numel(x, dy, op);
    }
    if (needs_y) {
        require_float(y, op);
        require_same_numel(y, dy, op);
    }
    const bool f64 = dy.dtype == DType::Float64 || dx.dtype == DType::Float64 ||
                     (needs_x && x.dtype == DType::Float64) ||
                     (needs_y && y.dtype == DType::Float64);
    cuda::launch_activation_backward(act, {x.data, x.dtype}, {y.data, y.dtype}, {dy.data, dy.dtype},
                                     dx.data, dx.dtype, dy.numel(), last_dim(dy), f64,
                                     m_impl->stream);
}

void CudaBackend::softmax_cross_entropy(const SoftmaxXentArgs& args) {
    const char* op = "softmax_cross_entropy";
    require(args.logits && args.labels && args.scalars,
            std::string(op) + ": logits, labels and scalars must be given");
    const Tensor& logits = *args.logits;
    require_float(logits, op);
    const std::int64_t rows = logits.rows(), classes = logits.cols();
    require(args.labels->dtype == DType::Int32 && args.labels->numel() == rows,
            std::string(op) + ": labels " + describe(*args.labels) +
                " must be int32 with one entry per row of " + describe(logits));
    require(args.valid_rows >= 0 && args.valid_rows <= rows,
            std::string(op) + ": valid_rows " + std::to_string(args.valid_rows) +
                " is outside [0, " + std::to_string(rows) + "]");
    if (classes > 64)
        throw Error(ErrorKind::InvalidArgument,
                    std::string(op) + ": " + describe(logits) + " has " + std::to_string(classes) +
                        " classes; the CUDA engine's loss handles at most 64 (MNIST has 10)");
    cuda::XentArgs a;
    a.logits = logits.data;
    a.logits_dtype = logits.dtype;
    a.labels = args.labels->as<const std::int32_t>();
    a.rows = rows;
    a.classes = classes;
    a.valid_rows = args.valid_rows;
    for (Tensor* out : {args.probs, args.dlogits})
        if (out) {
            require_float(*out, op);
            require_same_numel(logits, *out, op);
        }
    if (args.probs) {
        a.probs = args.probs->data;
        a.probs_dtype = args.probs->dtype;
    }
    if (args.dlogits) {
        a.dlogits = args.dlogits->data;
        a.dlogits_dtype = args.dlogits->dtype;
    }
    a.scalars = scalars_of(*args.scalars);
    a.scratch = m_impl->xent_scratch;
    cuda::launch_softmax_xent(a, m_impl->stream);
}

void CudaBackend::maxpool_forward(const Pool2dArgs& args, const Tensor& x, Tensor& y,
                                  Tensor& argmax_i32) {
    const char* op = "maxpool_forward";
    require_float(x, op);
    const std::int64_t out_count = args.batch * args.out_h * args.out_w * args.channels;
    require(x.numel() == args.batch * args.in_h * args.in_w * args.channels &&
                y.numel() == out_count && argmax_i32.numel() == out_count,
            std::string(op) + ": tensors " + describe(x) + ", " + describe(y) + ", " +
                describe(argmax_i32) + " do not fit the pooling geometry");
    require(y.dtype == x.dtype && argmax_i32.dtype == DType::Int32,
            std::string(op) + ": expected output of the input's dtype and int32 argmax");
    require(x.numel() <= 2147483647LL,
            std::string(op) + ": the input has more elements than an int32 argmax can index");
    cuda::launch_maxpool_forward(pool_geom(args), x.data, x.dtype, y.data,
                                 argmax_i32.as<std::int32_t>(), m_impl->stream);
}

void CudaBackend::maxpool_backward(const Pool2dArgs& args, const Tensor& dy,
                                   const Tensor& argmax_i32, Tensor& dx) {
    const char* op = "maxpool_backward";
    require_float(dy, op);
    require_float(dx, op);
    const std::int64_t out_count = args.batch * args.out_h * args.out_w * args.channels;
    require(dy.numel() == out_count && argmax_i32.numel() == out_count &&
                dx.numel() == args.batch * args.in_h * args.in_w * args.channels &&
                argmax_i32.dtype == DType::Int32,
            std::string(op) + ": tensors " + describe(dy) + ", " + describe(argmax_i32) + ", " +
                describe(dx) + " do not fit the pooling geometry");
    const bool f64 = dy.dtype == DType::Float64 || dx.dtype == DType::Float64;
    cuda::launch_maxpool_backward(pool_geom(args), dy.data, dy.dtype,
                                  argmax_i32.as<const std::int32_t>(), dx.data, dx.dtype, f64,
                                  m_impl->stream);
}

void CudaBackend::batch_norm_forward(const NormArgs& args) {
    const char* op = "batch_norm_forward";
    cuda::NormLaunch a = norm_launch(args, op, m_impl->bias_scratch);
    set_output(a, args, op);
    require_stat(args.moving_mean, "moving_mean", a.s_dtype, args.cols, op);
    require_stat(args.moving_variance, "moving_variance", a.s_dtype, args.cols, op);
    a.moving_mean = args.moving_mean->data;
    a.moving_variance = args.moving_variance->data;
    // Checked in inference too, as the CPU engine does (cpu_norm.cpp's check_args).
    if (!(args.momentum >= 0.0 && args.momentum < 1.0))
        throw Error(ErrorKind::InvalidArgument, std::string(op) +
                                                    ": momentum must be in [0, 1) (got " +
                                                    std::to_string(args.momentum) + ")");
    require_valid_rows(args, op);
    if (args.training) set_optional_stats(a, args, args.cols, op);
    // inference reads the moving statistics and writes neither mean nor inv_std
    cuda::launch_batch_norm_forward(a, m_impl->stream);
}

void CudaBackend::batch_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx,
                                      Tensor& dgamma, Tensor& dbeta) {
    const char* op = "batch_norm_backward";
    cuda::NormLaunch a = norm_launch(args, op, m_impl->bias_scratch);
    require(args.training, std::string(op) +
                               ": the backward pass needs the training statistics (training is "
                               "false)");
    require_valid_rows(args, op);
    set_stats(a, args, args.cols, op);
    set_grads(a, args, dy, dx, dgamma, dbeta, op);
    cuda::launch_batch_norm_backward(a, m_impl->stream);
}

void CudaBackend::layer_norm_forward(const NormArgs& args) {
    const char* op = "layer_norm_forward";
    cuda::NormLaunch a = norm_launch(args, op, m_impl->bias_scratch);
    set_output(a, args, op);
    set_optional_stats(a, args, args.rows, op);
    cuda::launch_layer_norm_forward(a, m_impl->stream);
}

void CudaBackend::layer_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx,
                                      Tensor& dgamma, Tensor& dbeta) {
    const char* op = "layer_norm_backward";
    cuda::NormLaunch a = norm_launch(args, op, m_impl->bias_scratch);
    set_stats(a, args, args.rows, op);
    set_grads(a, args, dy, dx, dgamma, dbeta, op);
    cuda::launch_layer_norm_backward(a, m_impl->stream);
}

void CudaBackend::dropout_forward(double rate, std::uint64_t seed, const Tensor& x, Tensor& y,
                                  Tensor& mask_u8) {
    const char* op = "dropout_forward";
    check_rate(rate, op);
    require_float(x, op);
    require_float(y, op);
    require_same_numel(x, y, op);
    require_same_numel(x, mask_u8, op);
    require(mask_u8.dtype == DType::UInt8,
            std::string(op) + ": mask " + describe(mask_u8) + " must be uint8");
    cuda::DropoutArgs a{x.data, x.dtype, y.data, y.dtype, mask_u8.as<std::uint8_t>(), x.numel()};
    a.scale = 1.0 / (1.0 - rate);
    a.make_mask = true;
    a.seed = seed;
    a.threshold = dropout_threshold(rate);
    a.f64 = x.dtype == DType::Float64 || y.dtype == DType::Float64;
    cuda::launch_dropout(a, m_impl->stream);
}

void CudaBackend::dropout_backward(double rate, const Tensor& dy, const Tensor& mask_u8,
                                   Tensor& dx) {
    const char* op = "dropout_backward";
    check_rate(rate, op);
    require_float(dy, op);
    require_float(dx, op);
    require_same_numel(dy, dx, op);
    require_same_numel(dy, mask_u8, op);
    require(mask_u8.dtype == DType::UInt8,
            std::string(op) + ": mask " + describe(mask_u8) + " must be uint8");
    cuda::DropoutArgs a{
        dy.data, dy.dtype, dx.data, dx.dtype, static_cast<std::uint8_t*>(mask_u8.data), dy.numel()};
    a.scale = 1.0 / (1.0 - rate);
    a.f64 = dy.dtype == DType::Float64 || dx.dtype == DType::Float64;
    cuda::launch_dropout(a, m_impl->stream);
}

void CudaBackend::exponent_histogram(const Tensor& x, Tensor& counts_i32) {
    require_float(x, "exponent_histogram");
    require(counts_i32.dtype == DType::Int32 && counts_i32.numel() == kHistogramBins,
            "exponent_histogram: counts " + describe(counts_i32) + " must be int32 (" +
                std::to_string(kHistogramBins) + ")");
    cuda::launch_exponent_histogram(x.data, x.dtype, x.numel(), counts_i32.as<std::int32_t>(),
                                    m_impl->stream);
}

void CudaBackend::begin_step(Tensor& scalars) {
    cuda::launch_begin_step(scalars_of(scalars), m_impl->stream);
}

void CudaBackend::unscale_and_check_finite(std::span<Tensor* const> grads, Tensor& scalars,
                                           std::span<const std::uint8_t> leave_scaled) {
    StepScalars* s = scalars_of(scalars);
    require(leave_scaled.empty() || leave_scaled.size() == grads.size(),
            "unscale_and_check_finite: " + std::to_string(leave_scaled.size()) + " flags for " +
                std::to_string(grads.size()) + " gradients");
    cuda::UnscaleList list;
    for (std::size_t i = 0; i < grads.size(); ++i) {
        Tensor* grad = grads[i];
        if (grad->numel() == 0) continue;
        require_float(*grad, "unscale_and_check_finite");
        require(grad->data != nullptr, "gradient '" + grad->name + "' has no memory");
        list.data[list.count] = grad->data;
        list.numel[list.count] = grad->numel();
        list.dtype[list.count] = grad->dtype;
        list.index[list.count] = static_cast<int>(i); // the ledger's bit (nonfinite_bit)
        list.leave_scaled[list.count] = !leave_scaled.empty() && leave_scaled[i] != 0;
        if (++list.count == cuda::kUnscaleTensors) {
            cuda::launch_unscale(list, s, m_impl->stream);
            list.count = 0;
        }
    }
    cuda::launch_unscale(list, s, m_impl->stream);
}

namespace {

// optimizer_update's kernel arguments, checked as the CPU engine checks its operands.
cuda::UpdateArgs update_args(const OptimizerConfig& config, Tensor& param, const Tensor& grad,
                             std::span<Tensor* const> slot_tensors, const Tensor& scalars,
                             bool skip_if_found_inf, Tensor* compute_copy, bool unscale_grad) {
    const auto fail = [&](const std::string& what) {
        throw Error(ErrorKind::InvalidArgument, std::string("optimizer_update(") +
                                                    optimizer_type_name(config.type) + ", '" +
                                                    param.name + "'): " + what);
    };
    if (static_cast<int>(slot_tensors.size()) != optimizer_slot_count(config) ||
        slot_tensors.size() > 3)
        fail("got " + std::to_string(slot_tensors.size()) + " slots, the optimizer keeps " +
             std::to_string(optimizer_slot_count(config)));
    require_float(param, "optimizer_update");
    require_float(grad, "optimizer_update");
    if (grad.numel() != param.numel()) fail("gradient '" + grad.name + "' has another size");
    cuda::UpdateArgs a;
    a.param = param.data;
    a.param_dtype = param.dtype;
    a.grad = grad.data;
    a.grad_dtype = grad.dtype;
    a.slot_count = static_cast<int>(slot_tensors.size());
    for (int k = 0; k < a.slot_count; ++k) {
        const Tensor& slot = *slot_tensors[static_cast<std::size_t>(k)];
        require_float(slot, "optimizer_update");
        if (slot.numel() != param.numel()) fail("slot '" + slot.name + "' has another size");
        a.slots[k] = slot.data;
        a.slot_dtype[k] = slot.dtype;
    }
    if (compute_copy) {
        require_float(*compute_copy, "optimizer_update");
        if (compute_copy->numel() != param.numel())
            fail("compute copy '" + compute_copy->name + "' has another size");
        if (param.dtype != DType::Float32 && param.dtype != DType::Float64)
            fail("a compute copy needs a float32 or float64 parameter, not " +
                 std::string(dtype_name(param.dtype)));
        a.copy = compute_copy->data;
        a.copy_dtype = compute_copy->dtype;
    }
    if (unscale_grad && param.dtype != DType::Float32 && param.dtype != DType::Float64)
        fail("unscaling the gradient needs a float32 or float64 parameter, not " +
             std::string(dtype_name(param.dtype)));
    a.unscale = unscale_grad;
    a.count = param.numel();
    a.skip_if_found_inf = skip_if_found_inf;
    a.scalars = scalars_of(scalars);
    // The rounding follows the parameter's dtype, as in cpu_step_control.cpp.
    switch (param.dtype) {
    case DType::Float64:
        a.f64 = true;
        a.rule = device_rule<double>(config, NoRounding{});
        break;
    case DType::Float16:
        a.round = cuda::RoundKind::Float16;
        a.rule = device_rule<float>(config, HostRoundFloat16{});
        break;
    case DType::BFloat16:
        a.round = cuda::RoundKind::BFloat16;
        a.rule = device_rule<float>(config, HostRoundBFloat16{});
        break;
    default:
        a.rule = device_rule<float>(config, NoRounding{});
        break;
    }
    return a;
}

} // namespace

void CudaBackend::optimizer_update(const OptimizerConfig& config, Tensor& param, const Tensor& grad,
                                   std::span<Tensor* const> slot_tensors, const Tensor& scalars,
                                   bool skip_if_found_inf, Tensor* compute_copy,
                                   bool unscale_grad) {
    cuda::launch_optimizer_update(update_args(config, param, grad, slot_tensors, scalars,
                                              skip_if_found_inf, compute_copy, unscale_grad),
                                  m_impl->stream);
}

void CudaBackend::optimizer_update_all(const OptimizerConfig& config,
                                       std::span<const ParamUpdate> params, const Tensor& scalars,
                                       bool skip_if_found_inf) {
    // The float32 tensors of whole vectors go into multi-tensor launches of up to
    // kMultiUpdateTensors, one list per gradient dtype (float32; bfloat16 or float16 where a
    // mixed layer leaves its gradients for the optimizer to widen) and unscale flag; any other
    // takes its own launch, with the same arithmetic.
    const DType grad_dtypes[] = {DType::Float32, DType::BFloat16, DType::Float16};
    cuda::MultiUpdateArgs multi[2 * std::size(grad_dtypes)];
    for (const ParamUpdate& p : params) {
        const cuda::UpdateArgs a = update_args(config, *p.param, *p.grad, p.slot_tensors, scalars,
                                               skip_if_found_inf, p.compute_copy, p.unscale_grad);
        if (!cuda::multi_update_fits(a)) {
            cuda::launch_optimizer_update(a, m_impl->stream);
            continue;
        }
        const auto dtype_index =
            std::find(std::begin(grad_dtypes), std::end(grad_dtypes), a.grad_dtype) -
            std::begin(grad_dtypes);
        cuda::MultiUpdateArgs& list = multi[2 * dtype_index + (a.unscale ? 1 : 0)];
        cuda::add_multi_update(list, a);
        if (list.tensors == cuda::kMultiUpdateTensors) {
            cuda::launch_optimizer_update_multi(list, m_impl->stream);
            list = cuda::MultiUpdateArgs{};
        }
    }
    for (const cuda::MultiUpdateArgs& list : multi)
        cuda::launch_optimizer_update_multi(list, m_impl->stream);
}

void CudaBackend::finish_step(const LossScaleConfig& config, Tensor& scalars) {
    if (config.mode == LossScaleMode::Auto)
        throw Error(ErrorKind::Internal,
                    "finish_step called with loss-scale mode auto; resolve_loss_scale() it first");
    cuda::DeviceLossScale c;
    c.dynamic = config.mode == LossScaleMode::Dynamic ? 1 : 0;
    c.growth_interval = config.growth_interval;
    c.factor = config.factor;
    c.min = config.min;
    cuda::launch_finish_step(c, scalars_of(scalars), m_impl->stream);
}

} // namespace mantissa
