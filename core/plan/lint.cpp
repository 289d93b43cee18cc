// Lint rules. Each message says what is wrong, why it matters, and what to change.
// Sizes: the output layer's 10 classes are exempt from the multiple-of-8 hint (MNIST fixes them).
#include "core/plan/lint.h"

namespace mantissa {

namespace {
bool is_16bit(DType dtype) {
    return dtype == DType::Float16 || dtype == DType::BFloat16;
}
} // namespace

std::vector<LintMessage> lint_model(const Model& model, const LossScaleConfig& loss_scale) {
    std::vector<LintMessage> out;
    const std::size_t n = model.size();
    if (n == 0) return out;

    const Layer& last = model.layer(n - 1);
    const Policy& last_policy = model.layer_policy(n - 1);
    if (last.activation() == Activation::Softmax && last_policy.compute != DType::Float32 &&
        last_policy.compute != DType::Float64)
        out.push_back({LintSeverity::Warning, last.name(),
                       "the output softmax computes in " +
                           std::string(dtype_name(last_policy.compute)) +
                           "; Keras recommends float32 (set this layer's dtype to float32): small "
                           "probabilities round to 0 and the loss becomes inf"});
    if (last.activation() != Activation::Softmax)
        out.push_back({LintSeverity::Hint, last.name(),
                       "the model does not end with softmax; the loss applies softmax "
                       "cross-entropy to its outputs (from_logits) in their dtype"});

    for (std::size_t i = 0; i < n; ++i) {
        const Layer& layer = model.layer(i);
        const Policy& policy = model.layer_policy(i);
        if (!is_16bit(policy.compute)) continue;
        std::int64_t size = 0;
        const char* what = "";
        if (layer.spec().type == LayerType::Dense) size = layer.spec().units, what = "units";
        if (layer.spec().type == LayerType::Conv2D) size = layer.spec().filters, what = "filters";
        const bool is_output =
            i + 1 == n || (i + 2 == n && model.layer(n - 1).spec().type == LayerType::Activation);
        if (size > 0 && size % 8 != 0 && !is_output)
            out.push_back({LintSeverity::Hint, layer.name(),
                           std::to_string(size) + " " + what +
                               " is not a multiple of 8: Tensor Cores run 16-bit matrix products "
                               "fastest when sizes are multiples of 8"});
    }

    bool any_float16 = false;
    for (std::size_t i = 0; i < n; ++i)
        any_float16 |= model.layer_policy(i).compute == DType::Float16;
    if (any_float16 && loss_scale.mode == LossScaleMode::None)
        out.push_back({LintSeverity::Warning, "",
                       "float16 compute without loss scaling: small gradients underflow to zero; "
                       "use dynamic loss scaling"});
    return out;
}

} // namespace mantissa
