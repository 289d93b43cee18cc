// Dropout's steps: a mask tensor (uint8) kept for backward; evaluation copies x through unchanged.
// The per-step seed mixes the run seed, the layer's name and the global step number.
#include "core/plan/lower/layer_steps.h"

#include "core/nn/dropout.h"
#include "core/plan/plan.h"

namespace mantissa {

namespace {
// FNV-1a: a stable hash of the layer name (std::hash may differ between standard libraries).
std::uint64_t stable_hash(const std::string& text) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
    return h;
}
} // namespace

TensorId dropout_steps(PlanBuilder& b, const Dropout& layer, TensorId input,
                       bool /*fuse_softmax*/) {
    const DType dt = b.policy().compute;
    TensorId x = b.cast(input, dt);
    const Shape shape = b.tensor(x).shape;
    TensorId y = b.add_activation(layer.name() + "/output", dt, shape, true);
    TensorId mask =
        b.add_tensor(layer.name() + "/mask", DType::UInt8, shape, MemCategory::Activations);
    const double rate = layer.spec().rate;
    const std::uint64_t layer_salt = stable_hash(layer.name());
    StepSpec fwd;
    fwd.op = "dropout";
    fwd.inputs = {x};
    fwd.outputs = {y, mask};
    fwd.flops = static_cast<double>(shape_numel(shape));
    fwd.bind = [x, y, mask, rate, layer_salt](const BoundTensors& t) -> StepRun {
        Tensor* X = t.ptr(x);
        Tensor* Y = t.ptr(y);
        Tensor* M = t.ptr(mask);
        return [=](Backend& be, const RunContext& ctx) {
            if (!ctx.training) {
                be.cast(*X, *Y); // same dtype: a copy
                return;
            }
            const std::uint64_t seed =
                ctx.seed * 0x9E3779B97F4A7C15ull ^ layer_salt ^ (ctx.step * 0xBF58476D1CE4E5B9ull);
            be.dropout_forward(rate, seed, *X, *Y, *M);
        };
    };
    b.forward(std::move(fwd));
    if (TensorId dx = b.grad_of(x); dx != kNoTensor) {
        const TensorId dy = b.grad_of(y);
        StepSpec back;
        back.op = "ddropout";
        back.inputs = {dy, mask};
        back.outputs = {dx};
        back.flops = static_cast<double>(shape_numel(shape));
        back.bind = [rate, dy, mask, dx](const BoundTensors& t) -> StepRun {
            Tensor* dY = t.ptr(dy);
            Tensor* M = t.ptr(mask);
            Tensor* dX = t.ptr(dx);
            return [rate, dY, M, dX](Backend& be, const RunContext&) {
                be.dropout_backward(rate, *dY, *M, *dX);
            };
        };
        b.backward(std::move(back));
    }
    return y;
}

} // namespace mantissa
