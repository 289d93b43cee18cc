// Float64Reference: widen, run the CPU engine in float64, round back (see the header).
#include "core/check/float64_reference.h"

#include <deque>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/fp8_gemm.h"
#include "core/numeric/convert.h"
#include "core/numeric/float_format.h"
#include "core/optim/update_rules.h"

namespace mantissa {

namespace {

bool narrower_float(DType dtype) {
    return is_floating(dtype) && dtype != DType::Float64;
}

// The float64 copies of one call's tensors. A tensor seen twice (an in-place op: dx == dy) maps
// to the same copy, so the op sees the aliasing it would see at its own dtype.
class Widened {
public:
    Widened() = default;
    Widened(const Widened&) = delete;
    Widened& operator=(const Widened&) = delete;

    const Tensor& in(const Tensor& t) { return narrower_float(t.dtype) ? copy(t, nullptr) : t; }
    const Tensor* in(const Tensor* t) { return t ? &in(*t) : nullptr; }
    Tensor& out(Tensor& t) { return narrower_float(t.dtype) ? copy(t, &t) : t; }
    Tensor* out(Tensor* t) { return t ? &out(*t) : nullptr; }

    // Rounds every output once to its own dtype.
    void write_back() {
        for (Entry& e : m_entries)
            if (e.target)
                convert_from_double(e.values.data(), e.target->data, e.target->dtype,
                                    e.values.size());
    }

private:
    struct Entry {
        const void* data = nullptr;
        DType dtype = DType::Float32;
        Tensor* target = nullptr; // the original to round back into; nullptr for inputs
        std::vector<double> values;
        Tensor wide;
    };
    Tensor& copy(const Tensor& t, Tensor* target) {
        for (Entry& e : m_entries)
            if (e.data == t.data && e.dtype == t.dtype &&
                e.values.size() == std::size_t(t.numel())) {
                if (target) e.target = target;
                return e.wide;
            }
        Entry& e = m_entries.emplace_back();
        e.data = t.data;
        e.dtype = t.dtype;
        e.target = target;
        e.values.resize(static_cast<std::size_t>(t.numel()));
        convert_to_double(t.data, t.dtype, e.values.data(), e.values.size());
        e.wide = t;
        e.wide.dtype = DType::Float64;
        e.wide.data = e.values.data();
        return e.wide;
    }
    std::deque<Entry> m_entries; // stable addresses
};

// A tensor's description retyped to float64 (no data): for the workspace queries.
Tensor as_float64(const Tensor& t) {
    Tensor out = t;
    if (narrower_float(t.dtype)) out.dtype = DType::Float64;
    out.data = nullptr;
    return out;
}

// One operation computed in float32 and rounded to `dtype`: update_rules.h's Round for emulated
// variables, written with the general encoder rather than the engine's vectorised one.
struct RoundTo {
    DType dtype;
    float operator()(float x) const {
        return static_cast<float>(round_to_dtype(static_cast<double>(x), dtype));
    }
};

} // namespace

Float64Reference::Float64Reference() : m_cpu(std::make_unique<CpuBackend>()) {
    m_info = m_cpu->info();
    m_info.id = "cpu-float64";
    m_info.name = "CPU engine in float64, rounded to each tensor's dtype";
}

Float64Reference::~Float64Reference() = default;

Buffer Float64Reference::allocate(std::size_t bytes) {
    return m_cpu->allocate(bytes);
}
std::size_t Float64Reference::memory_in_use() const {
    return m_cpu->memory_in_use();
}
void Float64Reference::upload(const void* host, Tensor& dst) {
    m_cpu->upload(host, dst);
}
void Float64Reference::download(const Tensor& src, void* host) {
    m_cpu->download(src, host);
}

std::size_t Float64Reference::gemm_workspace_bytes(const GemmArgs& args) const {
    Tensor a = as_float64(*args.a), b = as_float64(*args.b), c = as_float64(*args.c);
    GemmArgs wide = args;
    wide.a = &a;
    wide.b = &b;
    wide.c = &c;
    wide.a_scale = wide.b_scale = nullptr; // applied to the float64 copies (gemm below)
    return m_cpu->gemm_workspace_bytes(wide);
}

std::size_t Float64Reference::conv2d_workspace_bytes(const Conv2dArgs& args, DType dtype) const {
    return m_cpu->conv2d_workspace_bytes(args, narrower_float(dtype) ? DType::Float64 : dtype);
}

void Float64Reference::gather_batch(const Tensor& images_u8, const Tensor& labels_u8,
                                    const Tensor& permutation_i32, std::int64_t offset,
                                    std::int64_t count, const Tensor* position, Tensor& batch,
                                    Tensor& labels_i32) {
    Widened w;
    m_cpu->gather_batch(images_u8, labels_u8, permutation_i32, offset, count, position,
                        w.out(batch), labels_i32);
    w.write_back();
}

void Float64Reference::fill(Tensor& dst, double value) {
    Widened w;
    m_cpu->fill(w.out(dst), value);
    w.write_back();
}

void Float64Reference::cast(const Tensor& src, Tensor& dst) {
    Widened w;
    m_cpu->cast(w.in(src), w.out(dst));
    w.write_back();
}

void Float64Reference::gemm(const GemmArgs& args) {
    if (uses_fp8_gemm(args)) check_fp8_gemm(args);
    if (uses_scaled_gemm(args)) check_scaled_gemm(args);
    Widened w;
    GemmArgs wide = args;
    wide.a = w.in(args.a);
    wide.b = w.in(args.b);
    wide.c = w.out(args.c);
    wide.bias = w.in(args.bias);
    wide.pre_activation = w.out(args.pre_activation);
    // Decode scales applied to the float64 copies: exact (an operand's significand of at most 24
    // bits times the float32 scale's 24 fits in float64's 53), so only the product rounds.
    std::vector<double> scaled[2];
    Tensor scaled_tensor[2];
    auto apply_scale = [&](const Tensor*& operand, const Tensor* scale, int i) {
        if (!scale) return;
        const double s = *scale->as<const float>();
        const auto* v = operand->as<const double>();
        scaled[i].assign(v, v + operand->numel());
        for (double& x : scaled[i]) x *= s;
        scaled_tensor[i] = *operand;
        scaled_tensor[i].data = scaled[i].data();
        operand = &scaled_tensor[i];
    };
    apply_scale(wide.a, args.a_scale, 0);
    apply_scale(wide.b, args.b_scale, 1);
    wide.a_scale = wide.b_scale = nullptr;
    const std::size_t bytes = m_cpu->gemm_workspace_bytes(wide);
    Buffer scratch = m_cpu->allocate(bytes);
    wide.workspace = Workspace{scratch.data(), bytes};
    m_cpu->gemm(wide);
    w.write_back();
}

void Float64Reference::bias_grad(const Tensor& dy, Tensor& db) {
    Widened w;
    m_cpu->bias_grad(w.in(dy), w.out(db));
    w.write_back();
}

void Float64Reference::activation_forward(Activation act, const Tensor& x, Tensor& y) {
    Widened w;
    m_cpu->activation_forward(act, w.in(x), w.out(y));
    w.write_back();
}

void Float64Reference::activation_backward(Activation act, const Tensor& x, const Tensor& y,
                                           const Tensor& dy, Tensor& dx) {
    Widened w;
    m_cpu->activation_backward(act, w.in(x), w.in(y), w.in(dy), w.out(dx));
    w.write_back();
}

void Float64Reference::softmax_cross_entropy(const SoftmaxXentArgs& args) {
    Widened w;
    SoftmaxXentArgs wide = args;
    wide.logits = w.in(args.logits);
    wide.probs = w.out(args.probs);
    wide.dlogits = w.out(args.dlogits);
    m_cpu->softmax_cross_entropy(wide);
    w.write_back();
}

void Float64Reference::conv2d_forward(const Conv2dArgs& args, const Tensor& x, const Tensor& w,
                                      const Tensor* bias, Activation epilogue, Tensor& y,
                                      Tensor* pre_activation, Workspace) {
    Widened t;
    const std::size_t bytes = m_cpu->conv2d_workspace_bytes(args, DType::Float64);
    Buffer scratch = m_cpu->allocate(bytes);
    m_cpu->conv2d_forward(args, t.in(x), t.in(w), t.in(bias), epilogue, t.out(y),
                          t.out(pre_activation), Workspace{scratch.data(), bytes});
    t.write_back();
}

void Float64Reference::conv2d_backward_data(const Conv2dArgs& args, const Tensor& dy,
                                            const Tensor& w, Tensor& dx, Workspace) {
    Widened t;
    const std::size_t bytes = m_cpu->conv2d_workspace_bytes(args, DType::Float64);
    Buffer scratch = m_cpu->allocate(bytes);
    m_cpu->conv2d_backward_data(args, t.in(dy), t.in(w), t.out(dx),
                                Workspace{scratch.data(), bytes});
    t.write_back();
}

void Float64Reference::conv2d_backward_filter(const Conv2dArgs& args, const Tensor& x,
                                              const Tensor& dy, Tensor& dw, Tensor* dbias,
                                              Workspace) {
    Widened t;
    const std::size_t bytes = m_cpu->conv2d_workspace_bytes(args, DType::Float64);
    Buffer scratch = m_cpu->allocate(bytes);
    m_cpu->conv2d_backward_filter(args, t.in(x), t.in(dy), t.out(dw), t.out(dbias),
                                  Workspace{scratch.data(), bytes});
    t.write_back();
}

void Float64Reference::maxpool_forward(const Pool2dArgs& args, const Tensor& x, Tensor& y,
                                       Tensor& argmax_i32) {
    Widened w;
    m_cpu->maxpool_forward(args, w.in(x), w.out(y), argmax_i32);
    w.write_back();
}

void Float64Reference::maxpool_backward(const Pool2dArgs& args, const Tensor& dy,
                                        const Tensor& argmax_i32, Tensor& dx) {
    Widened w;
    m_cpu->maxpool_backward(args, w.in(dy), argmax_i32, w.out(dx));
    w.write_back();
}

// The normalizations in float64: gamma widened to float64 makes float64 the statistics dtype, so
// no intermediate is rounded (the exact formulas), and each output is rounded once.
namespace {
NormArgs widened(const NormArgs& args, Widened& w) {
    NormArgs wide = args;
    wide.x = w.in(args.x);
    wide.gamma = w.in(args.gamma);
    wide.beta = w.in(args.beta);
    wide.y = w.out(args.y);
    wide.mean = w.out(args.mean);
    wide.inv_std = w.out(args.inv_std);
    wide.moving_mean = w.out(args.moving_mean);
    wide.moving_variance = w.out(args.moving_variance);
    return wide;
}
} // namespace

void Float64Reference::batch_norm_forward(const NormArgs& args) {
    Widened w;
    m_cpu->batch_norm_forward(widened(args, w));
    w.write_back();
}

void Float64Reference::batch_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx,
                                           Tensor& dgamma, Tensor& dbeta) {
    Widened w;
    const NormArgs wide = widened(args, w);
    m_cpu->batch_norm_backward(wide, w.in(dy), w.out(dx), w.out(dgamma), w.out(dbeta));
    w.write_back();
}

void Float64Reference::layer_norm_forward(const NormArgs& args) {
    Widened w;
    m_cpu->layer_norm_forward(widened(args, w));
    w.write_back();
}

void Float64Reference::layer_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx,
                                           Tensor& dgamma, Tensor& dbeta) {
    Widened w;
    const NormArgs wide = widened(args, w);
    m_cpu->layer_norm_backward(wide, w.in(dy), w.out(dx), w.out(dgamma), w.out(dbeta));
    w.write_back();
}

void Float64Reference::dropout_forward(double rate, std::uint64_t seed, const Tensor& x, Tensor& y,
                                       Tensor& mask_u8) {
    Widened w;
    m_cpu->dropout_forward(rate, seed, w.in(x), w.out(y), mask_u8);
    w.write_back();
}

void Float64Reference::dropout_backward(double rate, const Tensor& dy, const Tensor& mask_u8,
                                        Tensor& dx) {
    Widened w;
    m_cpu->dropout_backward(rate, w.in(dy), mask_u8, w.out(dx));
    w.write_back();
}

// Bins are exponents of the stored values: counted at the tensor's own dtype (float16
// subnormals would move to other bins in float64).
void Float64Reference::exponent_histogram(const Tensor& x, Tensor& counts_i32) {
    m_cpu->exponent_histogram(x, counts_i32);
}

void Float64Reference::begin_step(Tensor& scalars) {
    m_cpu->begin_step(scalars);
}

void Float64Reference::unscale_and_check_finite(std::span<Tensor* const> grads, Tensor& scalars,
                                                std::span<const std::uint8_t> leave_scaled) {
    Widened w;
    std::vector<Tensor*> wide;
    for (Tensor* g : grads) wide.push_back(&w.out(*g));
    // A gradient left scaled is checked in float64 and written back as it was read.
    m_cpu->unscale_and_check_finite(wide, scalars, leave_scaled);
    w.write_back();
}

void Float64Reference::optimizer_update(const OptimizerConfig& config, Tensor& param,
                                        const Tensor& grad, std::span<Tensor* const> slot_tensors,
                                        const Tensor& scalars, bool skip_if_found_inf,
                                        Tensor* compute_copy, bool unscale_grad) {
    if (!is_emulated_float(param.dtype)) {
        Widened w;
        std::vector<Tensor*> slots;
        for (Tensor* s : slot_tensors) slots.push_back(&w.out(*s));
        m_cpu->optimizer_update(config, w.out(param), w.in(grad), slots, scalars, skip_if_found_inf,
                                nullptr, unscale_grad);
        w.write_back();
        // The copy as this reference's own cast writes it (a cast step did, before issue 26).
        if (compute_copy && !(skip_if_found_inf && m_cpu->read_scalars(scalars).found_inf))
            cast(param, *compute_copy);
        return;
    }
    if (compute_copy || unscale_grad)
        throw Error(ErrorKind::Internal, "optimizer_update: a compute copy of, or a gradient "
                                         "unscaled by, a 16/8-bit variable");
    // A 16/8-bit variable: every operation rounded, one element at a time (update_rules.h).
    const StepScalars s = m_cpu->read_scalars(scalars);
    if (skip_if_found_inf && s.found_inf) return;
    const std::size_t n = static_cast<std::size_t>(param.numel());
    auto load = [n](const Tensor& t) {
        std::vector<double> wide(n);
        convert_to_double(t.data, t.dtype, wide.data(), n);
        return std::vector<float>(wide.begin(), wide.end()); // exact: <= 16-bit values
    };
    std::vector<float> w = load(param), g = load(grad);
    std::vector<std::vector<float>> slots;
    std::vector<float*> slot_ptrs;
    for (Tensor* t : slot_tensors) slots.push_back(load(*t));
    for (auto& v : slots) slot_ptrs.push_back(v.data());
    apply_update(optimizer_at_step(config, s.iterations, s.skipped_total), w.data(), g.data(),
                 slot_ptrs.data(), n, s.iterations + 1, RoundTo{param.dtype});
    convert_from_float(w.data(), param.data, param.dtype, n);
    for (std::size_t k = 0; k < slots.size(); ++k)
        convert_from_float(slots[k].data(), slot_tensors[k]->data, slot_tensors[k]->dtype, n);
}

void Float64Reference::finish_step(const LossScaleConfig& config, Tensor& scalars) {
    m_cpu->finish_step(config, scalars);
}
StepScalars Float64Reference::read_scalars(const Tensor& scalars) {
    return m_cpu->read_scalars(scalars);
}
void Float64Reference::write_scalars(const StepScalars& values, Tensor& scalars) {
    m_cpu->write_scalars(values, scalars);
}
void Float64Reference::enqueue_readout(const Tensor& scalars, int slot) {
    m_cpu->enqueue_readout(scalars, slot);
}
StepReadout Float64Reference::read_readout(int slot) {
    return m_cpu->read_readout(slot);
}

} // namespace mantissa
