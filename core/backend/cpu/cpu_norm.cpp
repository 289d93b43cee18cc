// Batch and layer normalization on the CPU (Backend's NormArgs): the statistics in the dtype of
// gamma (S) with float32 arithmetic (float64 when S is float64), every intermediate the contract
// names rounded to S, sums in row order. This is the reference the CUDA kernels are compared
// against in the op-case table, and what the normalization lesson's float16 statistics measure.
#include <cmath>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cpu/cpu_kernels.h"
#include "core/numeric/half.h"

namespace mantissa {

namespace {

// v rounded to the statistics dtype s (round to nearest even), held in the arithmetic type A.
template <class A>
A round_s(A v, DType s) {
    switch (s) {
    case DType::Float16:
        return A(half_bits_to_float(float_to_half_bits(static_cast<float>(v))));
    case DType::BFloat16:
        return A(bfloat16_bits_to_float(float_to_bfloat16_bits(static_cast<float>(v))));
    case DType::Float32:
        return A(static_cast<float>(v));
    default:
        return v;
    }
}

// Per-call scratch of the arithmetic type, reused across calls of a thread (no heap per step).
template <class A>
std::vector<A>& scratch(int slot) {
    thread_local std::vector<A> buffers[8];
    return buffers[slot];
}

template <class A>
A* scratch_of(int slot, std::int64_t count) {
    std::vector<A>& v = scratch<A>(slot);
    if (v.size() < static_cast<std::size_t>(count)) v.resize(static_cast<std::size_t>(count));
    return v.data();
}

void check_args(const NormArgs& a, bool batch_norm, const char* op) {
    auto need = [&](const Tensor* t, std::int64_t numel, const char* what) {
        cpu::require(t != nullptr, std::string(op) + ": " + what + " is missing");
        cpu::require_floating(*t, op);
        cpu::require(t->numel() == numel, std::string(op) + ": " + what + " " + cpu::describe(*t) +
                                              " must have " + std::to_string(numel) + " elements");
    };
    cpu::require(a.rows > 0 && a.cols > 0, std::string(op) + ": empty view");
    cpu::require(a.epsilon > 0.0, std::string(op) + ": epsilon must be > 0");
    need(a.x, a.rows * a.cols, "x");
    need(a.gamma, a.cols, "gamma");
    need(a.beta, a.cols, "beta");
    cpu::require(a.beta->dtype == a.gamma->dtype,
                 std::string(op) + ": gamma and beta must share the statistics dtype");
    if (batch_norm) {
        cpu::require(a.valid_rows > 0 && a.valid_rows <= a.rows,
                     std::string(op) + ": valid_rows must be in [1, rows]");
        cpu::require(a.momentum >= 0.0 && a.momentum < 1.0,
                     std::string(op) + ": momentum must be in [0, 1)");
        need(a.moving_mean, a.cols, "moving_mean");
        need(a.moving_variance, a.cols, "moving_variance");
    }
    const std::int64_t stats = batch_norm ? a.cols : a.rows;
    if (a.mean) need(a.mean, stats, "mean");
    if (a.inv_std) need(a.inv_std, stats, "inv_std");
}

// One row of x as A values.
template <class A>
const A* row_of(const Tensor& t, std::int64_t r, std::int64_t cols, int slot) {
    return cpu::view_or_load<A>(t, r * cols, cols, scratch_of<A>(slot, cols));
}

template <class A>
void load_all(const Tensor& t, A* out) {
    cpu::load<A>(t, 0, out, t.numel());
}

template <class A>
void batch_norm_forward_impl(const NormArgs& a) {
    const DType s = a.gamma->dtype;
    const std::int64_t rows = a.rows, cols = a.cols;
    A* gamma = scratch_of<A>(2, cols);
    A* beta = scratch_of<A>(3, cols);
    A* mean = scratch_of<A>(4, cols);
    A* inv = scratch_of<A>(5, cols);
    load_all(*a.gamma, gamma);
    load_all(*a.beta, beta);
    if (a.training) {
        const std::int64_t n = a.valid_rows;
        A* sum = scratch_of<A>(6, cols);
        std::fill(sum, sum + cols, A(0));
        for (std::int64_t r = 0; r < n; ++r) {
            const A* x = row_of<A>(*a.x, r, cols, 0);
            for (std::int64_t c = 0; c < cols; ++c) sum[c] += x[c];
        }
        for (std::int64_t c = 0; c < cols; ++c) mean[c] = round_s(sum[c] / A(n), s);
        std::fill(sum, sum + cols, A(0));
        for (std::int64_t r = 0; r < n; ++r) {
            const A* x = row_of<A>(*a.x, r, cols, 0);
            for (std::int64_t c = 0; c < cols; ++c) {
                const A d = round_s(x[c] - mean[c], s);
                sum[c] += round_s(d * d, s);
            }
        }
        A* var = scratch_of<A>(7, cols);
        for (std::int64_t c = 0; c < cols; ++c) {
            var[c] = round_s(sum[c] / A(n), s);
            inv[c] = round_s(A(1) / std::sqrt(var[c] + A(a.epsilon)), s);
        }
        // The moving statistics: moving·momentum + batch·(1 − momentum), rounded to S.
        A* moving = sum; // reuse
        const A keep = A(a.momentum), take = A(1.0 - a.momentum);
        load_all(*a.moving_mean, moving);
        for (std::int64_t c = 0; c < cols; ++c)
            moving[c] = round_s(moving[c] * keep + mean[c] * take, s);
        cpu::store(moving, *a.moving_mean, 0, cols);
        load_all(*a.moving_variance, moving);
        for (std::int64_t c = 0; c < cols; ++c)
            moving[c] = round_s(moving[c] * keep + var[c] * take, s);
        cpu::store(moving, *a.moving_variance, 0, cols);
        if (a.mean) cpu::store(mean, *a.mean, 0, cols);
        if (a.inv_std) cpu::store(inv, *a.inv_std, 0, cols);
    } else {
        load_all(*a.moving_mean, mean);
        load_all(*a.moving_variance, inv);
        for (std::int64_t c = 0; c < cols; ++c)
            inv[c] = round_s(A(1) / std::sqrt(inv[c] + A(a.epsilon)), s);
    }
    A* y = scratch_of<A>(1, cols);
    for (std::int64_t r = 0; r < rows; ++r) {
        const A* x = row_of<A>(*a.x, r, cols, 0);
        for (std::int64_t c = 0; c < cols; ++c) {
            const A xhat = round_s(round_s(x[c] - mean[c], s) * inv[c], s);
            y[c] = gamma[c] * xhat + beta[c];
        }
        cpu::store(y, *a.y, r * cols, cols);
    }
}

template <class A>
void batch_norm_backward_impl(const NormArgs& a, const Tensor& dy_t, Tensor& dx_t, Tensor& dgamma,
                              Tensor& dbeta) {
    const DType s = a.gamma->dtype;
    const std::int64_t rows = a.rows, cols = a.cols, n = a.valid_rows;
    A* gamma = scratch_of<A>(2, cols);
    A* mean = scratch_of<A>(3, cols);
    A* inv = scratch_of<A>(4, cols);
    A* db = scratch_of<A>(5, cols);
    A* dg = scratch_of<A>(6, cols);
    load_all(*a.gamma, gamma);
    load_all(*a.mean, mean);
    load_all(*a.inv_std, inv);
    std::fill(db, db + cols, A(0));
    std::fill(dg, dg + cols, A(0));
    for (std::int64_t r = 0; r < n; ++r) {
        const A* x = row_of<A>(*a.x, r, cols, 0);
        const A* dy = row_of<A>(dy_t, r, cols, 1);
        for (std::int64_t c = 0; c < cols; ++c) {
            const A xhat = round_s(round_s(x[c] - mean[c], s) * inv[c], s);
            db[c] += dy[c];
            dg[c] += dy[c] * xhat;
        }
    }
    A* dx = scratch_of<A>(7, cols);
    for (std::int64_t r = 0; r < rows; ++r) {
        if (r >= n) {
            std::fill(dx, dx + cols, A(0));
        } else {
            const A* x = row_of<A>(*a.x, r, cols, 0);
            const A* dy = row_of<A>(dy_t, r, cols, 1);
            for (std::int64_t c = 0; c < cols; ++c) {
                const A xhat = round_s(round_s(x[c] - mean[c], s) * inv[c], s);
                dx[c] = gamma[c] * inv[c] / A(n) * (A(n) * dy[c] - db[c] - xhat * dg[c]);
            }
        }
        cpu::store(dx, dx_t, r * cols, cols);
    }
    cpu::store(dg, dgamma, 0, cols);
    cpu::store(db, dbeta, 0, cols);
}

template <class A>
void layer_norm_forward_impl(const NormArgs& a) {
    const DType s = a.gamma->dtype;
    const std::int64_t rows = a.rows, cols = a.cols;
    A* gamma = scratch_of<A>(2, cols);
    A* beta = scratch_of<A>(3, cols);
    A* y = scratch_of<A>(1, cols);
    A* d = scratch_of<A>(4, cols);
    load_all(*a.gamma, gamma);
    load_all(*a.beta, beta);
    for (std::int64_t r = 0; r < rows; ++r) {
        const A* x = row_of<A>(*a.x, r, cols, 0);
        A sum = 0;
        for (std::int64_t c = 0; c < cols; ++c) sum += x[c];
        const A mean = round_s(sum / A(cols), s);
        A squares = 0;
        for (std::int64_t c = 0; c < cols; ++c) {
            d[c] = round_s(x[c] - mean, s);
            squares += round_s(d[c] * d[c], s);
        }
        const A var = round_s(squares / A(cols), s);
        const A inv = round_s(A(1) / std::sqrt(var + A(a.epsilon)), s);
        for (std::int64_t c = 0; c < cols; ++c) y[c] = gamma[c] * round_s(d[c] * inv, s) + beta[c];
        cpu::store(y, *a.y, r * cols, cols);
        if (a.mean) cpu::store(&mean, *a.mean, r, 1);
        if (a.inv_std) cpu::store(&inv, *a.inv_std, r, 1);
    }
}

template <class A>
void layer_norm_backward_impl(const NormArgs& a, const Tensor& dy_t, Tensor& dx_t, Tensor& dgamma,
                              Tensor& dbeta) {
    const DType s = a.gamma->dtype;
    const std::int64_t rows = a.rows, cols = a.cols;
    A* gamma = scratch_of<A>(2, cols);
    A* dg = scratch_of<A>(3, cols);
    A* db = scratch_of<A>(4, cols);
    A* xhat = scratch_of<A>(5, cols);
    A* dx = scratch_of<A>(6, cols);
    A* mean = scratch_of<A>(7, rows);
    load_all(*a.gamma, gamma);
    load_all(*a.mean, mean);
    std::fill(dg, dg + cols, A(0));
    std::fill(db, db + cols, A(0));
    for (std::int64_t r = 0; r < rows; ++r) {
        const A* x = row_of<A>(*a.x, r, cols, 0);
        const A* dy = row_of<A>(dy_t, r, cols, 1);
        A inv = 0;
        cpu::load<A>(*a.inv_std, r, &inv, 1);
        A sum_g = 0, sum_gx = 0;
        for (std::int64_t c = 0; c < cols; ++c) {
            xhat[c] = round_s(round_s(x[c] - mean[r], s) * inv, s);
            const A g = dy[c] * gamma[c];
            sum_g += g;
            sum_gx += g * xhat[c];
            dg[c] += dy[c] * xhat[c];
            db[c] += dy[c];
        }
        for (std::int64_t c = 0; c < cols; ++c)
            dx[c] = inv / A(cols) * (A(cols) * (dy[c] * gamma[c]) - sum_g - xhat[c] * sum_gx);
        cpu::store(dx, dx_t, r * cols, cols);
    }
    cpu::store(dg, dgamma, 0, cols);
    cpu::store(db, dbeta, 0, cols);
}

void check_backward(const NormArgs& a, const Tensor& dy, const Tensor& dx, const Tensor& dgamma,
                    const Tensor& dbeta, bool batch_norm, const char* op) {
    check_args(a, batch_norm, op);
    cpu::require(a.mean && a.inv_std,
                 std::string(op) + ": needs the statistics the training forward saved");
    cpu::require_floating(dy, op);
    cpu::require_floating(dx, op);
    cpu::require_same_numel(*a.x, dy, op);
    cpu::require_same_numel(*a.x, dx, op);
    cpu::require(dgamma.numel() == a.cols && dbeta.numel() == a.cols,
                 std::string(op) + ": dgamma and dbeta must have one element per column");
}

// The forward checks: the arguments, and an output of x's size.
void check_forward(const NormArgs& a, bool batch_norm, const char* op) {
    check_args(a, batch_norm, op);
    cpu::require(a.y && a.y->numel() == a.x->numel(), std::string(op) + ": y's size");
}

// Calls f(A{}) with the contract's arithmetic type: double when the statistics are float64.
template <class F>
void with_arithmetic(const NormArgs& a, F&& f) {
    if (a.gamma->dtype == DType::Float64)
        f(double{});
    else
        f(float{});
}

} // namespace

void CpuBackend::batch_norm_forward(const NormArgs& args) {
    check_forward(args, true, "batch_norm_forward");
    with_arithmetic(args, [&](auto a) { batch_norm_forward_impl<decltype(a)>(args); });
}

void CpuBackend::batch_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx,
                                     Tensor& dgamma, Tensor& dbeta) {
    check_backward(args, dy, dx, dgamma, dbeta, true, "batch_norm_backward");
    with_arithmetic(
        args, [&](auto a) { batch_norm_backward_impl<decltype(a)>(args, dy, dx, dgamma, dbeta); });
}

void CpuBackend::layer_norm_forward(const NormArgs& args) {
    check_forward(args, false, "layer_norm_forward");
    with_arithmetic(args, [&](auto a) { layer_norm_forward_impl<decltype(a)>(args); });
}

void CpuBackend::layer_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx,
                                     Tensor& dgamma, Tensor& dbeta) {
    check_backward(args, dy, dx, dgamma, dbeta, false, "layer_norm_backward");
    with_arithmetic(
        args, [&](auto a) { layer_norm_backward_impl<decltype(a)>(args, dy, dx, dgamma, dbeta); });
}

} // namespace mantissa
