// Fused softmax + cross-entropy on the CPU, in the logits' dtype. For 16/8-bit logits it replays
// an op-by-op low-precision softmax, so p can underflow to 0 and the loss become inf (the lesson).
#include <cmath>
#include <limits>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cpu/cpu_kernels.h"

namespace mantissa {

namespace {

struct RowResult {
    double loss = 0.0;
    bool correct = false;
};

// Lowest index wins ties; NaN never wins (it compares false).
template <class T>
std::int64_t argmax(const T* x, std::int64_t n) {
    std::int64_t best = 0;
    for (std::int64_t i = 1; i < n; ++i)
        if (x[i] > x[best]) best = i;
    return best;
}

// float32 / float64: p = softmax(x) in T, loss = log(sum e) - (x_label - max), which stays finite
// where -log(p_label) would underflow: the strict reference the 16-bit path is compared against.
template <class T>
RowResult plain_row(const T* x, std::int64_t n, std::int32_t label, T* p) {
    const T m = x[argmax(x, n)];
    T sum = T(0);
    for (std::int64_t i = 0; i < n; ++i) {
        p[i] = std::exp(x[i] - m);
        sum += p[i];
    }
    const T inv = T(1) / sum;
    for (std::int64_t i = 0; i < n; ++i) p[i] *= inv;
    RowResult r;
    r.loss = static_cast<double>(std::log(sum) - (x[label] - m));
    r.correct = argmax(x, n) == label;
    return r;
}

// 16/8-bit: each stored intermediate is rounded to `dtype`, as a low-precision kernel would:
// e_i = round(exp(x_i - m)), s = round(sum e_i) (summed in float32), p_i = round(e_i / s),
// loss = -log(p_label) in float32 from the rounded p (p = 0 gives +inf).
RowResult emulated_row(const float* x, std::int64_t n, std::int32_t label, float* p, DType dtype) {
    float m = x[0];
    for (std::int64_t i = 1; i < n; ++i) m = std::max(m, x[i]);
    for (std::int64_t i = 0; i < n; ++i) p[i] = std::exp(x[i] - m);
    round_in_place(p, static_cast<std::size_t>(n), dtype);
    float sum = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) sum += p[i];
    round_in_place(&sum, 1, dtype);
    for (std::int64_t i = 0; i < n; ++i) p[i] /= sum;
    round_in_place(p, static_cast<std::size_t>(n), dtype);
    RowResult r;
    r.loss = static_cast<double>(-std::log(p[label]));
    r.correct = argmax(x, n) == label;
    return r;
}

template <class T>
void run(const SoftmaxXentArgs& args, StepScalars& scalars) {
    const Tensor& logits = *args.logits;
    const std::int64_t rows = logits.rows();
    const std::int64_t classes = logits.cols();
    const auto* labels = args.labels->as<const std::int32_t>();
    const bool emulated = is_emulated_float(logits.dtype);
    // d loss_sum*scale/valid / d logits; 0 when there is nothing to average (no valid rows).
    const T grad_scale =
        args.valid_rows > 0 ? static_cast<T>(scalars.loss_scale / double(args.valid_rows)) : T(0);

    const bool fits = classes <= cpu::kChunk;
    T xbuf[cpu::kChunk];
    T pbuf[cpu::kChunk];
    T gbuf[cpu::kChunk];
    T* xs = fits ? xbuf : cpu::scratch_row<T>(static_cast<std::size_t>(classes), 0);
    T* ps = fits ? pbuf : cpu::scratch_row<T>(static_cast<std::size_t>(classes), 1);
    T* gs = fits ? gbuf : cpu::scratch_row<T>(static_cast<std::size_t>(classes), 2);

    double loss_sum = 0.0;
    std::int64_t correct = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t off = r * classes;
        const bool valid = r < args.valid_rows;
        const std::int32_t label = labels[r];
        cpu::require(!valid || (label >= 0 && label < classes),
                     "softmax_cross_entropy: label " + std::to_string(label) + " of row " +
                         std::to_string(r) + " is outside [0, " + std::to_string(classes) + ")");
        const std::int32_t safe_label = label >= 0 && label < classes ? label : 0;
        const T* x = cpu::view_or_load<T>(logits, off, classes, xs);
        RowResult result;
        if constexpr (std::is_same_v<T, float>) {
            if (emulated)
                result = emulated_row(x, classes, safe_label, ps, logits.dtype);
            else
                result = plain_row(x, classes, safe_label, ps);
        } else {
            result = plain_row(x, classes, safe_label, ps);
        }
        if (valid) {
            loss_sum += result.loss;
            correct += result.correct ? 1 : 0;
        }
        if (args.probs) cpu::store(ps, *args.probs, off, classes);
        if (args.dlogits) {
            if (valid) {
                for (std::int64_t i = 0; i < classes; ++i)
                    gs[i] = (ps[i] - (i == label ? T(1) : T(0))) * grad_scale;
            } else {
                std::fill_n(gs, classes, T(0)); // padding rows: no gradient
            }
            cpu::store(gs, *args.dlogits, off, classes);
        }
    }
    scalars.loss_sum += loss_sum;
    scalars.correct += correct;
    scalars.examples += args.valid_rows;
}

} // namespace

void CpuBackend::softmax_cross_entropy(const SoftmaxXentArgs& args) {
    const char* op = "softmax_cross_entropy";
    cpu::require(args.logits && args.labels && args.scalars,
                 std::string(op) + ": logits, labels and scalars must be given");
    const Tensor& logits = *args.logits;
    cpu::require_floating(logits, op);
    const std::int64_t rows = logits.rows();
    cpu::require(args.labels->dtype == DType::Int32 && args.labels->numel() == rows,
                 std::string(op) + ": labels " + cpu::describe(*args.labels) +
                     " must be int32 with one entry per row of " + cpu::describe(logits));
    cpu::require(args.valid_rows >= 0 && args.valid_rows <= rows,
                 std::string(op) + ": valid_rows " + std::to_string(args.valid_rows) +
                     " is outside [0, " + std::to_string(rows) + "]");
    cpu::require(args.scalars->bytes() >= sizeof(StepScalars) && args.scalars->data,
                 std::string(op) + ": scalars " + cpu::describe(*args.scalars) +
                     " is smaller than StepScalars");
    for (Tensor* out : {args.probs, args.dlogits}) {
        if (!out) continue;
        cpu::require_floating(*out, op);
        cpu::require_same_numel(logits, *out, op);
    }
    // The CPU engine's "device memory" is host memory: the scalars are the struct itself.
    auto& scalars = *reinterpret_cast<StepScalars*>(args.scalars->data);
    if (logits.dtype == DType::Float64)
        run<double>(args, scalars);
    else
        run<float>(args, scalars);
}

} // namespace mantissa
