// PlanDigest: what the Plan view shows of a described plan (PlanSpec), as plain values: one row
// per step (op, dtypes, cast or not, bytes, FLOPs), one box per layer, memory by category.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/plan/plan_spec.h"
#include "core/train/experiment.h"

namespace mantissa::ui {

struct PlanStepRow {
    StepPhase phase = StepPhase::Forward;
    std::string layer;   // "dense_1"; empty for plan-level steps
    std::string op;      // "gemm+bias+relu", "cast float32→float16", ...
    std::string inputs;  // the input tensors' dtypes: "float16, float16, float32"
    std::string outputs; // the output tensors' dtypes
    std::string detail;  // tensor names and shapes, for a tooltip
    bool is_cast = false;
    // A cast of a master variable (or of its gradient back to it), or an optimizer step that
    // writes a master's compute copy as it updates it (PlanParam::compute_copy).
    bool weight_cast = false;
    std::size_t bytes = 0; // bytes read + written (distinct tensors)
    double flops = 0;
};

struct PlanLayerBox {
    std::string name, type, detail; // "dense_1", "Dense", "128, relu"
    std::string output_shape;       // "(128)"
    std::string policy;             // "mixed_float16"
    DType compute = DType::Float32;
    DType variable = DType::Float32;
    DType output = DType::Float32;        // its output's dtype (a Flatten keeps its input's)
    std::vector<std::string> input_casts; // "float32→float16", "quantize: nvfp4 …": its casts
    int weight_casts = 0; // its variables' compute copies written each step (master → compute)
    std::int64_t params = 0;
};

struct PlanDigest {
    std::string policy;
    std::int64_t batch_size = 0;
    DType input_dtype = DType::Float32; // the batch as gathered
    DType loss_dtype = DType::Float32;  // the softmax cross-entropy's (the logits')
    std::vector<PlanStepRow> steps;
    std::vector<PlanLayerBox> layers;
    std::vector<LintMessage> lint;
    MemoryByCategory memory; // without the workspace's scratch: the engine decides it at bind
    double flops = 0;        // per training step
    int casts = 0;
    std::int64_t params = 0;
};

PlanDigest digest_plan(const PlanSpec& plan);
// Describes the experiment's model and settings (no backend, no memory) and digests the result.
// Throws Error (Shape, Config, ...) with the message to show.
PlanDigest preview_plan(const Experiment& experiment);

} // namespace mantissa::ui
