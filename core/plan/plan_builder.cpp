// PlanBuilder implementation: tensor bookkeeping, explicit casts, parameters, bytes per category.
// Backward blocks are collected per layer and reversed at the end, so layers emit in order.
#include "core/plan/plan_builder.h"

#include <algorithm>
#include <optional>

#include "core/error.h"
#include "core/numeric/quant_recipe.h"
#include "core/numeric/tensor_quant.h"
#include "core/optim/optimizer_config.h"
#include "core/plan/plan.h" // RunContext: what the bound quantise step reads

namespace mantissa {

PlanBuilder::PlanBuilder(PlanSpec& spec) : m_spec(spec) {
    m_policy = spec.policy;
    // Created first (tensor 0); bind() sizes it to the largest need of the engine it binds to.
    m_spec.workspace = add_tensor("workspace", DType::UInt8, {0}, MemCategory::Workspace);
}

void PlanBuilder::begin_layer(const std::string& name, const Policy& policy) {
    m_layer = name;
    m_policy = policy;
    m_blocks.emplace_back();
}

void PlanBuilder::end_layer() {
    m_layer.clear();
    m_policy = m_spec.policy;
}

TensorId PlanBuilder::add_tensor(const std::string& name, DType dtype, const Shape& shape,
                                 MemCategory category) {
    Tensor tensor;
    tensor.name = name;
    tensor.dtype = dtype;
    tensor.shape = shape;
    tensor.category = category;
    m_spec.tensors.push_back(std::move(tensor));
    m_spec.alias_of.push_back(kNoTensor);
    m_grad.push_back(kNoTensor);
    m_master_of.push_back(kNoTensor);
    m_exact_bf16.push_back(false);
    m_gemm_scale_of.push_back(kNoTensor);
    return static_cast<TensorId>(m_spec.tensors.size() - 1);
}

TensorId PlanBuilder::add_activation(const std::string& name, DType dtype, const Shape& shape,
                                     bool requires_grad) {
    TensorId id = add_tensor(name, dtype, shape, MemCategory::Activations);
    if (requires_grad) {
        TensorId grad = add_tensor("grad(" + name + ")", dtype, shape, MemCategory::Gradients);
        m_grad[static_cast<std::size_t>(id)] = grad;
    }
    return id;
}

TensorId PlanBuilder::alias(TensorId source, const std::string& name, const Shape& shape) {
    const Tensor src = m_spec.tensor(source); // a copy: add_tensor grows the vector
    if (shape_numel(shape) != src.numel())
        throw Error(ErrorKind::Internal, "alias " + name + " changes the element count");
    TensorId id = add_tensor(name, src.dtype, shape, src.category);
    m_spec.alias_of[static_cast<std::size_t>(id)] = source;
    TensorId src_grad = grad_of(source);
    if (src_grad != kNoTensor) {
        TensorId grad = add_tensor("grad(" + name + ")", src.dtype, shape, MemCategory::Gradients);
        m_spec.alias_of[static_cast<std::size_t>(grad)] = src_grad;
        m_grad[static_cast<std::size_t>(id)] = grad;
    }
    return id;
}

TensorId PlanBuilder::grad_of(TensorId id) const {
    return id == kNoTensor ? kNoTensor : m_grad.at(static_cast<std::size_t>(id));
}

TensorId PlanBuilder::cast(TensorId source, DType dtype) {
    const Tensor src = m_spec.tensor(source); // a copy: add_activation grows the vector
    if (src.dtype == dtype) return source;
    bool needs_grad = grad_of(source) != kNoTensor;
    TensorId out = add_activation(src.name + ":" + std::string(dtype_name(dtype)), dtype, src.shape,
                                  needs_grad);
    StepSpec step;
    step.op = "cast " + std::string(dtype_name(src.dtype)) + "→" + std::string(dtype_name(dtype));
    step.inputs = {source};
    step.outputs = {out};
    step.is_cast = true;
    step.flops = 0;
    step.bind = bind_cast(source, out);
    forward(std::move(step));
    if (needs_grad) {
        StepSpec back;
        back.phase = StepPhase::Backward;
        back.op =
            "cast " + std::string(dtype_name(dtype)) + "→" + std::string(dtype_name(src.dtype));
        back.layer = m_layer;
        back.inputs = {grad_of(out)};
        back.outputs = {grad_of(source)};
        back.is_cast = true;
        back.bind = bind_cast(grad_of(out), grad_of(source));
        m_blocks.back().tail.push_back(std::move(back));
    }
    return out;
}

PlanParam PlanBuilder::make_variable(const std::string& full, const Shape& shape,
                                     bool variable_dtype_grad) {
    const bool mixed = m_policy.compute != m_policy.variable;
    PlanParam param;
    param.name = full;
    param.shape = shape;
    param.variable = add_tensor(full, m_policy.variable, shape,
                                mixed ? MemCategory::Master : MemCategory::Weights);
    if (variable_dtype_grad)
        param.grad =
            add_tensor("grad(" + full + ")", m_policy.variable, shape, MemCategory::Gradients);
    const int slots = m_spec.inference_only ? 0 : optimizer_slot_count(m_spec.optimizer);
    for (int slot = 0; slot < slots; ++slot)
        param.optimizer_slots.push_back(
            add_tensor(full + "/" + optimizer_slot_name(m_spec.optimizer, slot), m_policy.variable,
                       shape, MemCategory::Optimizer));
    return param;
}

PlanBuilder::ParamRef PlanBuilder::add_statistics_param(const std::string& name, const Shape& shape,
                                                        double initial) {
    PlanParam param = make_variable(m_layer + "/" + name, shape);
    param.initial = initial;
    const ParamRef ref{param.variable, param.grad};
    m_spec.params.push_back(std::move(param));
    return ref;
}

TensorId PlanBuilder::add_state(const std::string& name, const Shape& shape, double initial) {
    const std::string full = m_layer + "/" + name;
    const bool mixed = m_policy.compute != m_policy.variable;
    const TensorId id = add_tensor(full, m_policy.variable, shape,
                                   mixed ? MemCategory::Master : MemCategory::Weights);
    m_spec.state.push_back({full, id, initial});
    return id;
}

PlanBuilder::ParamRef PlanBuilder::add_param(const std::string& name, const Shape& shape,
                                             std::int64_t fan_in, std::int64_t fan_out) {
    const std::string full = m_layer + "/" + name;
    const bool mixed = m_policy.compute != m_policy.variable;
    // Without gradient reduction the cast back is the optimizer's to do: it widens each
    // compute-dtype element exactly as a cast step would, and unscales it under loss scaling
    // (issue 26: a launch and a float32 copy of every gradient fewer per step).
    const bool optimizer_widens =
        mixed && m_spec.optimizer_reads_compute_gradients && !m_spec.inference_only;
    PlanParam param = make_variable(full, shape, !optimizer_widens);
    param.fan_in = fan_in;
    param.fan_out = fan_out;
    ParamRef ref{param.variable, param.grad};
    if (mixed) {
        // The layer computes with a compute-dtype copy, refreshed every step; its gradient is
        // cast back to the variable dtype for the optimizer (Keras AutoCastVariable semantics).
        ref.value = add_tensor(full + ":" + std::string(dtype_name(m_policy.compute)),
                               m_policy.compute, shape, MemCategory::Weights);
        m_master_of[static_cast<std::size_t>(ref.value)] = param.variable;
        ref.grad = add_tensor("grad(" + full + "):" + std::string(dtype_name(m_policy.compute)),
                              m_policy.compute, shape, MemCategory::Gradients);
        if (m_spec.inference_only) {
            StepSpec step;
            step.op = "cast " + std::string(dtype_name(m_policy.variable)) + "→" +
                      std::string(dtype_name(m_policy.compute));
            step.inputs = {param.variable};
            step.outputs = {ref.value};
            step.is_cast = true;
            step.bind = bind_cast(param.variable, ref.value);
            forward(std::move(step));
        } else {
            // Training: the optimizer's step writes the copy from the value it has just
            // computed, with the cast's one rounding, instead of a cast step re-reading the
            // variable in the next forward (issue 26; describe.cpp's update steps).
            param.compute_copy = ref.value;
        }
        if (optimizer_widens) {
            param.grad = ref.grad;
            m_spec.params.push_back(std::move(param));
            return ref;
        }
        StepSpec back;
        back.phase = StepPhase::Backward;
        back.op = "cast " + std::string(dtype_name(m_policy.compute)) + "→" +
                  std::string(dtype_name(m_policy.variable));
        back.layer = m_layer;
        back.inputs = {ref.grad};
        back.outputs = {param.grad};
        back.is_cast = true;
        back.bind = bind_cast(ref.grad, param.grad);
        m_blocks.back().tail.push_back(std::move(back));
    }
    m_spec.params.push_back(std::move(param));
    return ref;
}

bool PlanBuilder::exact_in_bfloat16(TensorId id) const {
    return id != kNoTensor && m_exact_bf16[static_cast<std::size_t>(id)];
}

TensorId PlanBuilder::gemm_scale_of(TensorId id) const {
    return id == kNoTensor ? kNoTensor : m_gemm_scale_of[static_cast<std::size_t>(id)];
}

namespace {

// A copy under `spec`: NVFP4 leaves its float32 tensor scale to the GEMM or convolution that
// reads it, so the copy holds code · block scale, a bfloat16 value, and a Dense layer's GEMM runs
// on bfloat16 operands (issue 26: NVFP4 ran on float32 SIMT GEMMs, 18x mixed_bfloat16's step on
// an H200), a convolution's on TF32 tensor cores (it ran in float32 FMA).
QuantSpec scale_free_copy_spec(QuantSpec spec) {
    if (spec.scaling == QuantScaling::Block) spec.block.tensor_scale_in_gemm = true;
    return spec;
}

// A quantise call bound to its tensors. args() points into this object: call it where the
// object lives (the step's run closure).
struct BoundQuantCall {
    QuantSpec spec;
    Tensor *src = nullptr, *dst = nullptr, *state = nullptr, *stats = nullptr,
           *gemm_scale = nullptr;
    std::int64_t rows = 0;
    FakeQuantArgs args(const RunContext& ctx) const {
        FakeQuantArgs a;
        a.spec = &spec;
        a.src = src;
        a.dst = dst;
        a.rows = rows;
        a.state = state;
        a.stats = stats;
        a.step = ctx.step;
        a.record = ctx.training;
        a.gemm_scale = gemm_scale;
        return a;
    }
};

// PlanBuilder::QuantCall (a template: the type is PlanBuilder's own) bound to `t`'s tensors.
template <class Call>
BoundQuantCall bind_quant_call(const Call& call, const BoundTensors& t) {
    return {call.spec,         t.ptr(call.source),     t.ptr(call.out), t.ptr(call.state),
            t.ptr(call.stats), t.ptr(call.gemm_scale), call.rows};
}

} // namespace

bool PlanBuilder::every_copy(const std::function<bool(const QuantSpec&)>& holds) const {
    if (!m_policy.quant) return false;
    for (QuantRole role : {QuantRole::Activation, QuantRole::Weight, QuantRole::Gradient}) {
        if (!holds(scale_free_copy_spec(m_policy.quant->spec(role)))) return false;
        const std::optional<QuantSpec> col = m_policy.quant->columnwise(role);
        if (col && !holds(scale_free_copy_spec(*col))) return false;
    }
    return true;
}

bool PlanBuilder::bfloat16_quant_copies() const {
    return m_policy.compute == DType::BFloat16 && every_copy([](const QuantSpec& spec) {
               return quant_copy_dtype_ok(spec, DType::BFloat16);
           });
}

bool PlanBuilder::quant_copies_exact_in_bfloat16() const {
    return every_copy([](const QuantSpec& spec) { return decodes_exactly_in_bfloat16(spec); });
}

TensorId PlanBuilder::quantize_input(TensorId source, QuantRole role, TensorId rowwise,
                                     const QuantView& view) {
    if (!m_policy.quant) return source;
    if (rowwise == kNoTensor)
        return quantize_copy(source, role, m_policy.quant->spec(role), false, view);
    const std::optional<QuantSpec> colwise_spec = m_policy.quant->columnwise(role);
    // An inference plan drops the backward GEMMs that would read a column-wise copy.
    if (!colwise_spec || m_spec.inference_only) return rowwise;
    return quantize_copy(source, role, *colwise_spec, true, view, rowwise);
}

PlanBuilder::GradientCopies PlanBuilder::quantize_gradient(TensorId dz, bool needs_dx,
                                                           const QuantView& view) {
    if (!m_policy.quant) return {dz, dz};
    const std::optional<QuantSpec> colwise_spec = m_policy.quant->columnwise(QuantRole::Gradient);
    if (needs_dx || !colwise_spec || m_spec.inference_only) {
        const TensorId rowwise = quantize_input(dz, QuantRole::Gradient, kNoTensor, view);
        return {rowwise, quantize_input(dz, QuantRole::Gradient, rowwise, view)};
    }
    // No dX reads a row-wise copy (issue 26: conv2d_1's took 4.5 ms of the cnn's nvfp4 step).
    return {kNoTensor, quantize_copy(dz, QuantRole::Gradient, *colwise_spec, true, view)};
}

TensorId PlanBuilder::quantize_copy(TensorId source, QuantRole role, QuantSpec spec,
                                    bool columnwise, const QuantView& view, TensorId rowwise) {
    // NVFP4's Hadamard option transforms runs of 16 rows of a Dense layer's dW inputs (TE applies
    // it to Linear layers' wgrad); a convolution's view keeps its copies untransformed.
    if (view.rows > 0) spec.hadamard = false;
    // The GEMM or convolution that reads the copy applies NVFP4's tensor scale.
    spec = scale_free_copy_spec(spec);
    // TE casts weights from the float32 master, not from a bfloat16 copy (no double rounding).
    if (TensorId master = m_master_of[static_cast<std::size_t>(source)]; master != kNoTensor)
        source = master;
    const Tensor src = m_spec.tensor(source); // a copy: add_tensor grows the vector
    const MemCategory category = quant_category(role);
    const std::string role_name(quant_role_name(role));
    PlanQuant q;
    q.layer = m_layer;
    q.policy = m_policy.name;
    q.role = role;
    q.columnwise = columnwise;
    q.spec = spec;
    // The Hadamard transform mixes runs of 16 rows: a batch that is not a multiple of 16 gets
    // zero rows, kept in the copy (transformed, they are not zero) so that Mᵀ·M = I still holds
    // over the padded batch and the dW GEMM reads both padded copies.
    Shape shape = src.shape;
    std::string padding;
    if (spec.hadamard && !shape.empty() && shape[0] % 16) {
        shape[0] = (shape[0] + 15) / 16 * 16;
        padding = ", rows padded " + std::to_string(src.rows()) + "→" + std::to_string(shape[0]) +
                  " with zeros for the transform";
    }
    const std::string name = src.name + (columnwise ? ":q colwise" : ":q");
    // A convolution's copies (a view) stay float32: its kernels take float32 operands.
    const DType copy_dtype =
        view.rows == 0 && bfloat16_quant_copies() ? DType::BFloat16 : DType::Float32;
    const TensorId out = add_tensor(name, copy_dtype, shape, category);
    m_exact_bf16[static_cast<std::size_t>(out)] = decodes_exactly_in_bfloat16(spec);
    TensorId gemm_scale = kNoTensor;
    if (tensor_scale_in_gemm(spec)) {
        gemm_scale = add_tensor(name + " tensor scale", DType::Float32, {1}, category);
        m_gemm_scale_of[static_cast<std::size_t>(out)] = gemm_scale;
    }
    q.tensor = m_spec.tensor(out).name;
    // Scales, counted in the memory the way a real kernel stores them: one per block, edge
    // blocks padded (784 columns in blocks of 32 are 25 blocks, 800 elements' worth).
    const std::int64_t rows = view.rows > 0 ? view.rows : shape.empty() ? 1 : shape[0];
    const std::int64_t cols = rows == 0 ? 0 : shape_numel(shape) / rows;
    if (rows * cols != shape_numel(shape))
        throw Error(ErrorKind::Internal,
                    "quantize_input: " + std::to_string(rows) + " rows do not divide " + src.name);
    std::int64_t blocks = 1, scale_bytes = 4; // per-tensor FP8: one float32 scale
    if (spec.scaling == QuantScaling::Block) {
        const std::int64_t br = spec.block_rows, bc = spec.block_cols;
        const std::int64_t row_blocks = (rows + br - 1) / br, col_blocks = (cols + bc - 1) / bc;
        blocks = row_blocks * col_blocks;
        scale_bytes = 1;
        if (!view.label.empty())
            padding += ", blocks on " + view.label + " = " + std::to_string(rows) + "×" +
                       std::to_string(cols);
        if (rows % br || cols % bc)
            padding += ", padded " + std::to_string(rows) + "×" + std::to_string(cols) + "→" +
                       std::to_string(row_blocks * br) + "×" + std::to_string(col_blocks * bc);
    }
    add_tensor(name + " scales", DType::UInt8, {blocks * scale_bytes}, category);
    add_quant_state(q, name);
    StepSpec step;
    // "column-wise for dW": the block shape in the description is transposed, and why.
    const std::string usage = !columnwise                 ? std::string()
                              : role == QuantRole::Weight ? std::string(" column-wise for dX")
                                                          : std::string(" column-wise for dW");
    const std::string what = describe_quant_spec(spec) + padding;
    step.op = "quantize " + role_name + usage + ": " + what;
    step.inputs = {source};
    step.outputs = {out};
    if (gemm_scale != kNoTensor) step.outputs.push_back(gemm_scale);
    step.is_cast = true;
    step.training_only = columnwise;
    step.flops = (spec.hadamard ? 12.0 : 4.0) * static_cast<double>(shape_numel(shape));
    const QuantCall call{spec, source, out, q.state, q.stats, gemm_scale, rows};
    m_quant_calls.push_back(call);
    if (rowwise != kNoTensor &&
        join_rowwise_step(rowwise, role, call, step, usage.substr(1) + ": " + what)) {
        m_spec.quant.push_back(std::move(q));
        return out;
    }
    step.bind = [call](const BoundTensors& t) -> StepRun {
        return [bound = bind_quant_call(call, t)](Backend& be, const RunContext& ctx) {
            be.fake_quantize(bound.args(ctx));
        };
    };
    emit_quant_step(std::move(step), std::move(q));
    return out;
}

bool PlanBuilder::join_rowwise_step(TensorId rowwise, QuantRole role, const QuantCall& col,
                                    const StepSpec& step, const std::string& what) {
    const auto call = std::find_if(m_quant_calls.begin(), m_quant_calls.end(),
                                   [&](const QuantCall& c) { return c.out == rowwise; });
    if (call == m_quant_calls.end() || call->source != col.source) return false;
    // The block the copy would run in: emit_quant_step's.
    std::vector<StepSpec>& block = role == QuantRole::Gradient ? m_blocks.back().own : m_forward;
    const auto row = std::find_if(block.begin(), block.end(), [&](const StepSpec& s) {
        return s.is_cast && !s.outputs.empty() && s.outputs.front() == rowwise;
    });
    if (row == block.end()) return false;
    row->op += ", and " + what;
    row->outputs.insert(row->outputs.end(), step.outputs.begin(), step.outputs.end());
    row->flops += step.flops;
    // Both copies in training; an evaluation pass (no backward GEMM) makes the row-wise one.
    row->bind = [rowcall = *call, col](const BoundTensors& t) -> StepRun {
        return [r = bind_quant_call(rowcall, t),
                c = bind_quant_call(col, t)](Backend& be, const RunContext& ctx) {
            if (ctx.training)
                be.fake_quantize_pair(r.args(ctx), c.args(ctx));
            else
                be.fake_quantize(r.args(ctx));
        };
    };
    return true;
}

void PlanBuilder::emit_quant_step(StepSpec step, PlanQuant q) {
    // Activation and weight copies run in the forward block, gradient copies in the layer's
    // backward block, where the gradient exists.
    if (q.role == QuantRole::Gradient)
        backward(std::move(step));
    else
        forward(std::move(step));
    m_spec.quant.push_back(std::move(q));
}

MemCategory PlanBuilder::quant_category(QuantRole role) {
    return role == QuantRole::Activation ? MemCategory::Activations
           : role == QuantRole::Weight   ? MemCategory::Weights
                                         : MemCategory::Gradients;
}

void PlanBuilder::add_quant_state(PlanQuant& q, const std::string& name) {
    if (const std::size_t floats = quant_state_floats(q.spec))
        q.state = add_tensor(name + " amax history", DType::Float32,
                             {static_cast<std::int64_t>(floats)}, MemCategory::Workspace);
    q.stats =
        add_tensor(name + " stats", DType::Float64, {kQuantStatsValues}, MemCategory::Workspace);
}

bool PlanBuilder::fp8_gemm(std::initializer_list<std::int64_t> sizes) const {
    if (!m_spec.fp8_gemm || !m_policy.quant) return false;
    // The FP8 GEMM writes float32 or bfloat16 (the per-tensor recipes compute in bfloat16).
    if (m_policy.compute != DType::BFloat16 && m_policy.compute != DType::Float32) return false;
    for (const QuantSpec* s :
         {&m_policy.quant->activation, &m_policy.quant->weight, &m_policy.quant->gradient})
        if (s->scaling == QuantScaling::Block) return false;
    // Any size: the CUDA engine pads what misses cuBLASLt's multiples of 16 (fp8_gemm.h).
    return std::all_of(sizes.begin(), sizes.end(), [](std::int64_t n) { return n > 0; });
}

PlanBuilder::Fp8Operand PlanBuilder::quantize_fp8(TensorId source, QuantRole role, bool rowwise,
                                                  bool transposed) {
    // TE casts weights from the float32 master, not from a bfloat16 copy (no double rounding).
    if (TensorId master = m_master_of[static_cast<std::size_t>(source)]; master != kNoTensor)
        source = master;
    StepSpec step;
    step.inputs = {source};
    step.is_cast = true;
    return quantize_fp8_within(std::move(step), source, role, rowwise, transposed,
                               [source](const BoundTensors& t) -> Fp8Run {
                                   const Tensor* src = t.ptr(source);
                                   return [src](Backend& be, const RunContext&,
                                                const Fp8QuantArgs& codes) {
                                       Fp8QuantArgs of_src = codes;
                                       of_src.src = src;
                                       be.quantize_fp8(of_src);
                                   };
                               });
}

bool PlanBuilder::fuses_gradient_codes() const {
    return m_policy.quant && m_policy.quant->gradient.scaling == QuantScaling::Delayed;
}

PlanBuilder::Fp8Operand
PlanBuilder::quantize_fp8_within(StepSpec producer, TensorId source, QuantRole role, bool rowwise,
                                 bool transposed,
                                 const std::function<Fp8Run(const BoundTensors&)>& bind) {
    if (!m_policy.quant || (!rowwise && !transposed))
        throw Error(ErrorKind::Internal, "quantize_fp8: no FP8 recipe, or no layout asked for");
    const QuantSpec spec = m_policy.quant->spec(role);
    const Tensor src = m_spec.tensor(source); // a copy: add_tensor grows the vector
    const std::int64_t rows = src.rows(), cols = rows ? src.numel() / rows : 0;
    const DType code =
        spec.element == ElementFormat::Float8E5M2 ? DType::Float8E5M2 : DType::Float8E4M3;
    const MemCategory category = quant_category(role);
    const std::string name = src.name + ":fp8";
    Fp8Operand out;
    if (rowwise) out.codes = add_tensor(name, code, {rows, cols}, category);
    if (transposed) out.codes_t = add_tensor(name + " transposed", code, {cols, rows}, category);
    out.scale_inv = add_tensor(name + " scale_inv", DType::Float32, {1}, category);
    PlanQuant q;
    q.layer = m_layer;
    q.policy = m_policy.name;
    q.role = role;
    q.spec = spec;
    q.fp8_codes = true;
    q.tensor = m_spec.tensor(rowwise ? out.codes : out.codes_t).name;
    add_quant_state(q, name);
    const std::string layouts = rowwise && transposed ? " and transposed" : "";
    const std::string what = "quantize " + std::string(quant_role_name(role)) + " to FP8 codes" +
                             (rowwise ? std::string() : std::string(" transposed")) + layouts +
                             ": " + describe_quant_spec(spec);
    producer.op = producer.op.empty() ? what : producer.op + ", " + what;
    for (TensorId t : {out.codes, out.codes_t, out.scale_inv})
        if (t != kNoTensor) producer.outputs.push_back(t);
    producer.flops += 4.0 * static_cast<double>(src.numel());
    const TensorId state = q.state, stats = q.stats;
    producer.bind = [spec, out, state, stats, bind](const BoundTensors& t) -> StepRun {
        Fp8QuantArgs args;
        args.codes = t.ptr(out.codes);
        args.codes_t = t.ptr(out.codes_t);
        args.scale_inv = t.ptr(out.scale_inv);
        args.state = t.ptr(state);
        args.stats = t.ptr(stats);
        Fp8Run run = bind(t);
        return [spec, args, run](Backend& be, const RunContext& ctx) mutable {
            args.spec = &spec;
            args.record = ctx.training;
            run(be, ctx, args);
        };
    };
    emit_quant_step(std::move(producer), std::move(q));
    return out;
}

void PlanBuilder::forward(StepSpec step) {
    step.phase = StepPhase::Forward;
    if (step.layer.empty()) step.layer = m_layer;
    m_forward.push_back(std::move(step));
}

void PlanBuilder::backward(StepSpec step) {
    if (m_blocks.empty()) throw Error(ErrorKind::Internal, "backward step outside a layer");
    step.phase = StepPhase::Backward;
    step.training_only = true;
    if (step.layer.empty()) step.layer = m_layer;
    m_blocks.back().own.push_back(std::move(step));
}

void PlanBuilder::plan_step(StepSpec step) {
    m_forward.push_back(std::move(step));
}

Workspace workspace_of(const Tensor* workspace) {
    return {workspace->data, workspace->bytes()};
}

std::function<StepRun(const BoundTensors&)> bind_cast(TensorId source, TensorId dest) {
    return [source, dest](const BoundTensors& t) -> StepRun {
        Tensor* in = t.ptr(source);
        Tensor* out = t.ptr(dest);
        return [in, out](Backend& be, const RunContext&) { be.cast(*in, *out); };
    };
}

void PlanBuilder::drop_unread_compute_copies() {
    auto read = [&](TensorId id) {
        auto reads = [id](const StepSpec& s) {
            return std::find(s.inputs.begin(), s.inputs.end(), id) != s.inputs.end();
        };
        if (std::any_of(m_forward.begin(), m_forward.end(), reads)) return true;
        return std::any_of(m_blocks.begin(), m_blocks.end(), [&](const BackwardBlock& b) {
            return std::any_of(b.own.begin(), b.own.end(), reads) ||
                   std::any_of(b.tail.begin(), b.tail.end(), reads);
        });
    };
    for (PlanParam& p : m_spec.params)
        if (p.compute_copy != kNoTensor && !read(p.compute_copy)) p.compute_copy = kNoTensor;
}

void PlanBuilder::finish(std::vector<StepSpec> update_steps) {
    // Step order: forward (incl. loss), each layer's backward block from last layer to first,
    // then the optimizer/loss-scale steps.
    m_spec.steps = std::move(m_forward);
    // An inference plan keeps the forward steps only; its gradient tensors get no memory below
    // (the loss step writes dlogits only when training).
    const bool inference = m_spec.inference_only;
    for (auto block = m_blocks.rbegin(); block != m_blocks.rend() && !inference; ++block) {
        for (StepSpec& step : block->own) m_spec.steps.push_back(std::move(step));
        for (StepSpec& step : block->tail) m_spec.steps.push_back(std::move(step));
    }
    for (StepSpec& step : update_steps) {
        step.phase = StepPhase::Update;
        step.training_only = true;
        m_spec.steps.push_back(std::move(step));
    }

    // Aliases share their source's memory and count no bytes; the workspace counts 0 here.
    MemoryByCategory memory;
    for (std::size_t i = 0; i < m_spec.tensors.size(); ++i)
        if (m_spec.alias_of[i] == kNoTensor &&
            !(inference && m_spec.tensors[i].category == MemCategory::Gradients))
            memory[m_spec.tensors[i].category] += m_spec.tensors[i].bytes();
    m_spec.memory = memory;
}

} // namespace mantissa
