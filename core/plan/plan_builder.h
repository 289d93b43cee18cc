// PlanBuilder: what layer lowerings use to emit their steps into a PlanSpec while it is described.
// It makes casts explicit, creates gradient tensors, and orders each layer's backward block.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/plan/plan_spec.h"

namespace mantissa {

// The 2-D view a quantise step lays its blocks on: a convolution quantises its NHWC input as
// (N·H·W, C), so that blocks run along the reduction (conv2d_steps.cpp).
struct QuantView {
    std::int64_t rows = 0; // rows of the view; 0: Tensor::rows() (the first dimension)
    std::string label;     // named in the plan view, e.g. "N·H·W×C"
};

class PlanBuilder {
public:
    explicit PlanBuilder(PlanSpec& spec);

    PlanSpec& spec() { return m_spec; }
    std::int64_t batch() const { return m_spec.batch_size; }
    const Tensor& tensor(TensorId id) const { return m_spec.tensor(id); }

    // --- layer scope: steps emitted in between are tagged with the layer and use its policy ---
    void begin_layer(const std::string& name, const Policy& policy);
    void end_layer();
    const Policy& policy() const { return m_policy; }
    const std::string& layer() const { return m_layer; }

    // --- tensors ---
    TensorId add_tensor(const std::string& name, DType dtype, const Shape& shape,
                        MemCategory category);
    // A layer output; with `requires_grad` its gradient tensor is created alongside.
    TensorId add_activation(const std::string& name, DType dtype, const Shape& shape,
                            bool requires_grad);
    // A view of `source` with another shape (no bytes); its gradient is a view too.
    TensorId alias(TensorId source, const std::string& name, const Shape& shape);
    TensorId grad_of(TensorId id) const; // kNoTensor when `id` needs no gradient

    // Casts `source` to `dtype` with an explicit step, and the gradient back in the backward
    // block; returns `source` unchanged when the dtypes already match.
    TensorId cast(TensorId source, DType dtype);

    // A trainable variable in the layer policy's variable dtype, plus, under a mixed policy, its
    // compute-dtype copy and the gradient cast back (none under
    // PlanSpec::optimizer_reads_compute_gradients). The layer reads `value` and writes `grad`,
    // both in the compute dtype. A training plan's optimizer writes the copy as it updates the
    // variable (PlanParam::compute_copy); an inference plan casts it in the forward pass.
    struct ParamRef {
        TensorId value = kNoTensor;
        TensorId grad = kNoTensor;
    };
    ParamRef add_param(const std::string& name, const Shape& shape, std::int64_t fan_in,
                       std::int64_t fan_out);
    // A trainable variable the layer reads and whose gradient it writes in the variable dtype
    // itself, with no compute-dtype copy: a normalization layer's gamma and beta, which stay in
    // its statistics dtype (float32 under mixed policies, as Keras keeps them). Every element
    // starts at `initial`.
    ParamRef add_statistics_param(const std::string& name, const Shape& shape, double initial);
    // A non-trainable variable (PlanState) in the variable dtype, starting at `initial`: a
    // BatchNormalization's moving statistics. Its memory counts as the layer's variables.
    TensorId add_state(const std::string& name, const Shape& shape, double initial);

    // Frontier policies (issue 18): a quantise step in front of a GEMM / convolution input, as
    // Transformer Engine places them. Returns `source` unchanged when the layer's policy has no
    // recipe; else a float32 tensor holding the quantised-and-decoded values (so the GEMM runs
    // on them in float32 and accumulates in float32). Activation and Weight steps run in the
    // forward block (a weight is quantised from its float32 master), Gradient steps in the
    // layer's backward block where the call is made. The result has no gradient: layers keep
    // writing the gradients of the unquantised tensors (a straight-through estimator).
    // The step is recorded in PlanSpec::quant; bind() refuses an engine that cannot quantise.
    // With `rowwise` (the copy an earlier call made for the GEMM reducing along the tensor's
    // columns), makes the column-wise copy for the GEMM reducing along its rows (dW = Xᵀ·dZ for
    // X and dZ, dX = dZ·Wᵀ for W; QuantRecipe::columnwise) from the high-precision tensor, or
    // returns `rowwise` when that copy serves both (per-tensor scaling, square tiles, and in an
    // inference plan). The column-wise copy is made by the row-wise copy's step, in training
    // only (TE quantises both usages at once): one pass over the source where the engine can.
    // `view` lays the blocks on another 2-D view than (first dimension, the rest).
    TensorId quantize_input(TensorId source, QuantRole role, TensorId rowwise = kNoTensor,
                            const QuantView& view = {});
    // The two copies of a layer's dZ (quantize_input with QuantRole::Gradient): `rowwise` for
    // dX = dZ·Wᵀ, `columnwise` for dW (the row-wise copy where the recipe has no column-wise
    // one; dZ itself without a recipe). A layer that computes no dX (`needs_dx` false: the
    // first) gets no row-wise copy where the recipe has a column-wise one, as Transformer
    // Engine casts no dgrad input for it (`rowwise` is then kNoTensor).
    struct GradientCopies {
        TensorId rowwise = kNoTensor, columnwise = kNoTensor;
    };
    GradientCopies quantize_gradient(TensorId dz, bool needs_dx, const QuantView& view = {});
    // Whether `id` is a quantised copy whose every value is a bfloat16 value (MX formats, NVFP4
    // without its tensor scale: decodes_exactly_in_bfloat16): a GEMM reading two such copies may
    // multiply in bfloat16.
    bool exact_in_bfloat16(TensorId id) const;
    // The one-float32 tensor holding the factor the GEMM or convolution reading copy `id`
    // multiplies its sum by (GemmArgs / Conv2dArgs::a_scale, b_scale): NVFP4's tensor scale,
    // which the copies leave to the product as Blackwell's NVFP4 GEMM applies it in alpha;
    // kNoTensor for every other copy.
    TensorId gemm_scale_of(TensorId id) const;
    // Whether this layer's quantised copies on its own 2-D view are stored in bfloat16 rather
    // than float32: the layer computes in bfloat16 and every copy its recipe makes (each role,
    // row- and column-wise) is one quant_copy_dtype_ok allows in bfloat16 (MX, NVFP4). Its
    // GEMMs then read bfloat16 operands as mixed_bfloat16's do, with the same products and
    // float32 sums, at half the bytes (issue 26: Hopper has no MX tensor cores).
    bool bfloat16_quant_copies() const;
    // Whether every copy this layer's recipe makes (each role, row- and column-wise) holds
    // bfloat16 values only (decodes_exactly_in_bfloat16, NVFP4 without its tensor scale): a
    // convolution's float32 copies may then multiply on TF32 tensor cores
    // (Conv2dArgs::exact_in_bfloat16). False without a recipe.
    bool quant_copies_exact_in_bfloat16() const;

    // Per-tensor FP8 recipes on FP8 GEMMs (CompileOptions::fp8_gemm): whether a GEMM of these
    // sizes runs on float8 codes in this layer (its policy per-tensor FP8, every size positive;
    // the CUDA engine pads sizes that miss cuBLASLt's multiples of 16).
    bool fp8_gemm(std::initializer_list<std::int64_t> sizes) const;
    // The FP8 GEMM operands of `source` (role as in quantize_input; a weight from its float32
    // master): one quantise step writing its float8 codes row-major (`rowwise`) and/or transposed
    // (`transposed`, (cols, rows): TE's column-wise usage, the same codes) with one decode
    // scale; recorded in PlanSpec::quant with fp8_codes set. Placed like quantize_input's steps.
    struct Fp8Operand {
        TensorId codes = kNoTensor;   // (rows, cols) float8
        TensorId codes_t = kNoTensor; // (cols, rows) float8
        TensorId scale_inv = kNoTensor;
    };
    Fp8Operand quantize_fp8(TensorId source, QuantRole role, bool rowwise, bool transposed);
    // A quantise step's work once its arguments are bound: runs with the codes' arguments (spec,
    // codes, scale, state, stats and record set; src left to the step).
    using Fp8Run = std::function<void(Backend&, const RunContext&, const Fp8QuantArgs&)>;
    // quantize_fp8's copy of `source`, written by `producer`, the step that forms it (its op,
    // inputs, outputs and flops so far; bind returns what it runs), which gets the codes as
    // outputs and is placed and recorded as quantize_fp8's step. For a fused pass that never
    // stores `source` (Backend::activation_backward_bias_grad_fp8).
    Fp8Operand quantize_fp8_within(StepSpec producer, TensorId source, QuantRole role, bool rowwise,
                                   bool transposed,
                                   const std::function<Fp8Run(const BoundTensors&)>& bind);
    // Whether a layer's gradient codes may come from the pass that forms the gradient: its recipe
    // scales gradients by delayed scaling, whose scale is known before the pass (under current
    // scaling the amax must be read first, so dZ is stored and quantised by its own step).
    bool fuses_gradient_codes() const;

    // --- steps ---
    void forward(StepSpec step);
    void backward(StepSpec step);  // the layer's own backward steps, in execution order
    void plan_step(StepSpec step); // plan-level steps (data, loss, optimizer), in order

    // Forgets the compute copies (PlanParam::compute_copy) that no step emitted so far reads, so
    // that the optimizer does not write them: call it after the layers, before the updates.
    void drop_unread_compute_copies();

    // Orders the steps (forward, reversed backward blocks, updates) and counts the bytes per
    // category (the workspace's scratch is decided at bind).
    void finish(std::vector<StepSpec> update_steps);

private:
    static MemCategory quant_category(QuantRole role);
    // The variable and its optimizer slots in the variable dtype, and its gradient there unless
    // `variable_dtype_grad` is false (add_param's part shared with add_statistics_param).
    PlanParam make_variable(const std::string& full, const Shape& shape,
                            bool variable_dtype_grad = true);
    // A quantise step's persistent state (delayed scaling's history) and stats tensors.
    void add_quant_state(PlanQuant& q, const std::string& name);
    // Places a quantise step by its role and records it in PlanSpec::quant.
    void emit_quant_step(StepSpec step, PlanQuant q);
    // Whether `holds` is true of every copy the layer's recipe makes (each role, row- and
    // column-wise, NVFP4's tensor scale left to the product); false without a recipe.
    bool every_copy(const std::function<bool(const QuantSpec&)>& holds) const;
    // quantize_input's copy under `spec` (row- or column-wise, as the recipe says). A
    // column-wise copy with `rowwise` (the row-wise copy of the same source) joins that copy's
    // step, which then makes both in one call (Backend::fake_quantize_pair; issue 26).
    TensorId quantize_copy(TensorId source, QuantRole role, QuantSpec spec, bool columnwise,
                           const QuantView& view, TensorId rowwise = kNoTensor);
    // What a quantise step passes the engine, by tensor id: kept so that a column-wise copy can
    // join the step of the row-wise copy of the same source.
    struct QuantCall {
        QuantSpec spec;
        TensorId source = kNoTensor, out = kNoTensor, state = kNoTensor, stats = kNoTensor,
                 gemm_scale = kNoTensor;
        std::int64_t rows = 0; // the 2-D view's rows
    };
    // Makes `step` (the column-wise copy `col`) part of the step that writes `rowwise`; false
    // where no such step is in the block the copy would run in.
    bool join_rowwise_step(TensorId rowwise, QuantRole role, const QuantCall& col,
                           const StepSpec& step, const std::string& what);
    struct BackwardBlock {
        std::vector<StepSpec> own;  // the layer's steps
        std::vector<StepSpec> tail; // gradient casts, run after the layer's steps
    };

    PlanSpec& m_spec;
    Policy m_policy;
    std::string m_layer;
    std::vector<TensorId> m_grad;          // tensor id -> gradient id
    std::vector<TensorId> m_master_of;     // compute-dtype weight copy -> its float32 master
    std::vector<bool> m_exact_bf16;        // tensor id -> a quantised copy exact in bfloat16
    std::vector<TensorId> m_gemm_scale_of; // tensor id -> its tensor scale for the GEMM
    std::vector<StepSpec> m_forward;
    std::vector<BackwardBlock> m_blocks;
    std::vector<QuantCall> m_quant_calls; // every quantise step's, in the order made
};

// The bound workspace as a backend op takes it (call inside run(), when the arena exists).
Workspace workspace_of(const Tensor* workspace);

// A step's binder for a cast of `source` into `dest` (same shape).
std::function<StepRun(const BoundTensors&)> bind_cast(TensorId source, TensorId dest);

} // namespace mantissa
