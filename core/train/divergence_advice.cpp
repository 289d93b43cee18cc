// Divergence advice: a fixed order of remedies (loss scaling, master weights, the softmax's dtype,
// bfloat16's range, the learning rate), each offered only when the run lacked it.
#include "core/train/divergence_advice.h"

#include <iomanip>
#include <sstream>
#include <vector>

#include "core/numeric/dtype.h"
#include "core/numeric/policy.h"
#include "core/optim/loss_scale.h"
#include "core/optim/optimizer_config.h"

namespace mantissa {

namespace {

bool is_16_bit(DType t) {
    return t == DType::Float16 || t == DType::BFloat16;
}

// Whether the model's final softmax computes in 16 bits (its own dtype, else the global policy).
bool softmax_in_16_bits(const Experiment& e, const Policy& global) {
    if (e.model.layers.empty()) return false;
    const LayerSpec& last = e.model.layers.back();
    if (last.activation != Activation::Softmax) return false;
    const Policy policy = last.dtype ? policy_from_name(*last.dtype) : global;
    return is_16_bit(policy.compute);
}

std::string number(double v) {
    std::ostringstream out;
    out << std::setprecision(10) << v; // 16777216, not 1.67772e+07
    return out.str();
}

// "a, b or c"
std::string join_or(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
        out += items[i];
    }
    return out;
}

} // namespace

std::string divergence_advice(const Experiment& e) {
    const Policy policy = policy_from_name(e.policy);
    const LossScaleConfig scale = resolve_loss_scale(e.loss_scale, policy);
    const bool f16 = policy.compute == DType::Float16;
    const bool low_compute = is_16_bit(policy.compute);
    const bool pure_16 = is_16_bit(policy.variable);

    std::string used = "It used " + e.policy;
    if (f16 && scale.mode == LossScaleMode::Dynamic)
        used += " with dynamic loss scaling";
    else if (f16 && scale.mode == LossScaleMode::Fixed)
        used += " with a fixed loss scale of " + number(scale.initial);
    else if (f16)
        used += " without loss scaling";
    used += ".";

    std::vector<std::string> tries;
    if (f16 && scale.mode == LossScaleMode::None)
        tries.push_back("dynamic loss scaling (Settings › Loss scaling)");
    else if (f16 && scale.mode == LossScaleMode::Fixed)
        tries.push_back("dynamic loss scaling, which lowers the scale when gradients overflow");
    if (pure_16)
        tries.push_back("mixed_" + std::string(dtype_name(policy.compute)) +
                        " (float32 master weights and optimizer state)");
    if (pure_16 && rmsprop_epsilon_outside_root(e.optimizer))
        tries.push_back(std::string("the keras optimizer convention (this run's ") +
                        optimizer_convention_name(e.optimizer.convention) +
                        " RMSprop adds epsilon after the square root: a velocity that underflows "
                        "to 0 leaves the update lr*g/epsilon)");
    if (softmax_in_16_bits(e, policy)) tries.push_back("the final softmax in float32 (its dtype)");
    if (f16 && !pure_16) tries.push_back("mixed_bfloat16 (float32's range in 16 bits)");
    tries.push_back("a lower learning rate (now " + number(e.optimizer.learning_rate) + ")");

    std::string out = used;
    if (!low_compute) out += " In " + e.policy + " the precision is not the cause.";
    return out + " Try " + join_or(tries) + ".";
}

} // namespace mantissa
