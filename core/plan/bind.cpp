// bind(): the steps a PlanSpec describes become executable: the engine sizes the workspace, one
// arena is allocated (aliases share their source's bytes), and every step's binder runs once.
#include "core/plan/bind.h"

#include <algorithm>

#include "core/error.h"

namespace mantissa {

namespace {
constexpr std::size_t kAlignment = 256; // cuBLASLt and vector loads like 256-byte alignment

std::size_t align_up(std::size_t bytes) {
    return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}
} // namespace

std::unique_ptr<Plan> bind(PlanSpec description, Backend& backend) {
    auto shared = std::make_shared<const PlanSpec>(std::move(description));
    const PlanSpec& spec = *shared;
    // describe() knows no engine: a quantised layer is refused here, before anything is allocated.
    if (!spec.quant.empty() && !backend.supports_fake_quantize()) {
        const PlanQuant& q = spec.quant.front();
        throw Error(ErrorKind::Config,
                    "layer '" + q.layer + "': policy '" + q.policy + "' runs on the CPU " +
                        "engine for now (" + backend.info().name +
                        " has no quantise kernels yet); use device \"cpu\", or keep this layer " +
                        "in bfloat16 with its dtype");
    }
    for (const PlanQuant& q : spec.quant)
        if (q.spec.hadamard && !backend.supports_hadamard_quantize())
            throw Error(ErrorKind::Config,
                        "layer '" + q.layer + "': recipe.hadamard needs an engine with the " +
                            "Hadamard kernel (" + backend.info().name +
                            " has none; the CPU and CUDA engines have it); use device \"cpu\", " +
                            "or set recipe.hadamard to false");
    for (const PlanQuant& q : spec.quant)
        if (q.fp8_codes && !backend.supports_fp8_gemm())
            throw Error(ErrorKind::Config,
                        "layer '" + q.layer + "': recipe.gemm \"fp8\" needs an engine with FP8 " +
                            "GEMMs (" + backend.info().name +
                            " has none; cuBLASLt's need compute capability 8.9+); set " +
                            "recipe.gemm to \"auto\" or \"fake_quant\"");
    auto plan = std::make_unique<Plan>();
    plan->spec = shared;
    plan->policy = spec.policy;
    plan->batch_size = spec.batch_size;
    plan->optimizer = spec.optimizer;
    plan->inference_only = spec.inference_only;
    plan->loss_scale = spec.loss_scale;
    plan->layers = spec.layers;
    plan->lint = spec.lint;
    plan->param_count = spec.param_count;
    plan->params = spec.params;
    plan->state = spec.state;
    plan->quant = spec.quant;
    plan->input = spec.input;
    plan->labels = spec.labels;
    plan->probs = spec.probs;
    plan->scalars = spec.scalars;
    plan->tensors.assign(spec.tensors.begin(), spec.tensors.end());
    const BoundTensors bound(plan->tensors, spec.workspace);

    // Scratch shared by all steps: the largest need of this engine wins.
    std::size_t workspace = 0;
    for (const StepSpec& step : spec.steps)
        if (step.workspace) workspace = std::max(workspace, step.workspace(backend, bound));
    plan->tensor(spec.workspace).shape = {static_cast<std::int64_t>(workspace)};

    // One arena for everything; aliases share their source's memory and count no bytes. An
    // inference plan gives its gradient tensors no memory (no step writes them).
    auto has_memory = [&](std::size_t i) {
        return spec.alias_of[i] == kNoTensor &&
               !(spec.inference_only && plan->tensors[i].category == MemCategory::Gradients);
    };
    std::size_t total = 0;
    std::vector<std::size_t> offset(plan->tensors.size(), 0);
    MemoryByCategory memory;
    for (std::size_t i = 0; i < plan->tensors.size(); ++i) {
        if (!has_memory(i)) continue;
        const Tensor& t = plan->tensors[i];
        offset[i] = total;
        total += align_up(t.bytes());
        memory[t.category] += t.bytes();
    }
    plan->arena = backend.allocate(std::max<std::size_t>(total, kAlignment));
    auto* base = static_cast<unsigned char*>(plan->arena.data());
    for (std::size_t i = 0; i < plan->tensors.size(); ++i)
        if (has_memory(i)) plan->tensors[i].data = base + offset[i];
    for (std::size_t i = 0; i < plan->tensors.size(); ++i) {
        std::size_t root = i;
        while (spec.alias_of[root] != kNoTensor)
            root = static_cast<std::size_t>(spec.alias_of[root]);
        plan->tensors[i].data = plan->tensors[root].data;
    }
    plan->memory = memory;

    plan->steps.reserve(spec.steps.size());
    for (const StepSpec& s : spec.steps) {
        PlanStep step;
        step.phase = s.phase;
        step.op = s.op;
        step.layer = s.layer;
        step.inputs = s.inputs;
        step.outputs = s.outputs;
        step.flops = s.flops;
        step.is_cast = s.is_cast;
        step.matrix_math = s.matrix_math;
        step.training_only = s.training_only;
        step.checks_finite = s.checks_finite;
        step.run = s.bind(bound);
        plan->steps.push_back(std::move(step));
    }
    return plan;
}

} // namespace mantissa
