// Moving a Plan's variables to and from host memory, with the checks an import needs so that a
// wrong file fails with the tensor's name instead of silently training garbage.
#include "core/plan/plan_weights.h"

#include <set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/plan/plan.h"

namespace mantissa {

namespace {

// True when every value of `from` is a value of `to` (so the conversion loses nothing).
bool converts_exactly(DType from, DType to) {
    if (from == to || to == DType::Float64) return true;
    const bool fp8 = from == DType::Float8E4M3 || from == DType::Float8E5M2;
    if (to == DType::Float32) return from != DType::Float64;
    if (to == DType::Float16 || to == DType::BFloat16) return fp8;
    return false;
}

// What a weights file holds: every trainable variable, then the non-trainable ones (moving
// statistics), each by its plan name.
std::vector<std::pair<std::string, TensorId>> saved_variables(const Plan& plan) {
    std::vector<std::pair<std::string, TensorId>> out;
    for (const PlanParam& p : plan.params) out.emplace_back(p.name, p.variable);
    for (const PlanState& s : plan.state) out.emplace_back(s.name, s.tensor);
    return out;
}

} // namespace

ModelWeights read_model_weights(const Plan& plan, Backend& backend) {
    ModelWeights out;
    backend.synchronize();
    for (const auto& [param_name, id] : saved_variables(plan)) {
        const Tensor& var = plan.tensor(id);
        WeightTensor t;
        t.name = exported_weight_name(param_name);
        t.dtype = var.dtype;
        t.shape = var.shape;
        t.data.resize(var.bytes());
        backend.download(var, t.data.data());
        out.tensors.push_back(std::move(t));
    }
    return out;
}

void load_model_weights(Plan& plan, Backend& backend, const ModelWeights& weights,
                        const std::string& source, const LoadWeightsOptions& options) {
    auto fail = [&](const std::string& what) {
        throw Error(ErrorKind::Config, source + ": " + what);
    };
    std::set<std::string> expected;
    std::vector<WeightTensor> ready; // converted to each variable's dtype, uploaded at the end
    const std::vector<std::pair<std::string, TensorId>> variables = saved_variables(plan);
    for (const auto& [param_name, id] : variables) {
        const Tensor& var = plan.tensor(id);
        const std::string name = exported_weight_name(param_name);
        expected.insert(name);
        const WeightTensor* t = weights.find(name);
        if (!t) {
            std::string have;
            for (const WeightTensor& w : weights.tensors)
                have += (have.empty() ? "" : ", ") + w.name;
            fail("tensor '" + name + "' is missing (the model expects it with shape " +
                 shape_str(var.shape) + "); the file holds: " + (have.empty() ? "nothing" : have) +
                 ". Was it saved from another architecture?");
        }
        if (t->shape != var.shape)
            fail("tensor '" + name + "': expected shape " + shape_str(var.shape) + ", found " +
                 shape_str(t->shape));
        if (!is_floating(t->dtype))
            fail("tensor '" + name + "': expected a floating dtype (the model keeps " +
                 std::string(dtype_name(var.dtype)) + "), found " +
                 std::string(dtype_name(t->dtype)));
        if (!options.allow_rounding && !converts_exactly(t->dtype, var.dtype))
            fail("tensor '" + name + "': expected " + std::string(dtype_name(var.dtype)) +
                 " (the variable dtype of policy '" + plan.policy.name + "'), found " +
                 std::string(dtype_name(t->dtype)) +
                 ", which would round the weights; allow rounding (mantissa-cli: --allow-rounding) "
                 "to load it anyway");
        if (t->data.size() != static_cast<std::size_t>(t->numel()) * dtype_size(t->dtype))
            fail("tensor '" + name + "': holds " + std::to_string(t->data.size()) +
                 " bytes, expected " +
                 std::to_string(static_cast<std::size_t>(t->numel()) * dtype_size(t->dtype)));
        ready.push_back(converted(*t, var.dtype));
    }
    for (const WeightTensor& t : weights.tensors)
        if (!expected.count(t.name)) {
            std::string want;
            for (const std::string& n : expected) want += (want.empty() ? "" : ", ") + n;
            fail("unexpected tensor '" + t.name + "': the model has no such variable (it has " +
                 want + ")");
        }
    for (std::size_t i = 0; i < variables.size(); ++i)
        backend.upload(ready[i].data.data(), plan.tensor(variables[i].second));
    plan.refresh_weight_copies(backend); // the forward reads the copies, not the variables
    backend.synchronize();
}

} // namespace mantissa
