// Backend: the op set every engine implements (CPU with Eigen, CUDA with cuBLASLt/cuDNN).
// Numerics contract: 16-bit GEMM/conv take 16-bit inputs, accumulate in float32 and round the
// output once; elementwise ops compute in float32 (float64 for float64) and round the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/backend/activation.h"
#include "core/backend/step_scalars.h"
#include "core/error.h"
#include "core/numeric/quant_recipe.h"
#include "core/optim/loss_scale.h"
#include "core/optim/optimizer_config.h"
#include "core/tensor/buffer.h"
#include "core/tensor/tensor.h"

namespace mantissa {

struct DeviceInfo {
    std::string id;   // "cpu", "cuda:0"
    std::string name; // "CPU (Eigen, 2 threads)", "NVIDIA H100 80GB HBM3"
    bool is_gpu = false;
    std::size_t memory_total = 0; // bytes (host RAM for the CPU engine)
};

// Scratch memory handed to an op; carved from the Plan's arena (workspace category).
struct Workspace {
    void* data = nullptr;
    std::size_t bytes = 0;
};

// C (m, n) = epilogue(op(A) · op(B) + bias), A/B/C as 2-D row-major views (Tensor::rows/cols).
// A and B share a dtype; C may differ (it is rounded once to C's dtype).
struct GemmArgs {
    const Tensor* a = nullptr; // (m, k), or (k, m) when transpose_a
    bool transpose_a = false;
    const Tensor* b = nullptr; // (k, n), or (n, k) when transpose_b
    bool transpose_b = false;
    Tensor* c = nullptr;                      // (m, n)
    const Tensor* bias = nullptr;             // (n), added in the accumulation dtype
    Activation epilogue = Activation::Linear; // applied before the single rounding
    Tensor* pre_activation = nullptr; // optional (m, n): the value before the epilogue (for GELU)
    bool accumulate = false;          // C += result instead of C = result
    Workspace workspace;
    // FP8 operands (issue 18): A and B may be float8_e4m3 / float8_e5m2 codes (not both e5m2)
    // when the engine supports_fp8_gemm(); each scale, when given, is a one-element float32
    // tensor on the engine holding the decode scale (scale_inv) its operand's codes are
    // multiplied by (nullptr: 1). C = (a_scale · b_scale) · (A · B), float32 accumulation, one
    // rounding to C (float32 or bfloat16). Rules: core/backend/fp8_gemm.h.
    // The same scales may multiply float32 / float16 / bfloat16 operands' product: NVFP4 copies
    // that leave their float32 tensor scale to the GEMM (BlockQuantConfig::tensor_scale_in_gemm);
    // then no accumulate (rules: fp8_gemm.h, check_scaled_gemm).
    const Tensor* a_scale = nullptr;
    const Tensor* b_scale = nullptr;
    // A and B (float32) hold only bfloat16 values (MX formats' decoded copies; the plan knows):
    // an engine may multiply them in bfloat16 with float32 accumulation, which gives the same
    // products, so only the summation order can differ from a float32 GEMM. Engines may ignore it.
    bool exact_in_bfloat16 = false;
};

// NHWC activations, HWIO filters (Keras layout). Padding is explicit (Keras "valid"/"same").
struct Conv2dArgs {
    std::int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
    std::int64_t out_h = 0, out_w = 0, out_c = 0;
    std::int64_t kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1;
    std::int64_t pad_top = 0, pad_left = 0; // bottom/right padding follows from the sizes
    // Quantised operands (issue 26), as GemmArgs has them: the float32 tensor scales NVFP4
    // copies leave out of their values (BlockQuantConfig::tensor_scale_in_gemm), each a
    // one-element float32 tensor on the engine or nullptr (1). A pass multiplies its sums by
    // (a_scale · b_scale), that product formed first in the sums' type, before the bias and the
    // one rounding. a is the pass's first operand (x forward and for the filter, dy for the
    // data), b its second. No bias gradient comes with scales (it would sum the unscaled dy).
    const Tensor* a_scale = nullptr;
    const Tensor* b_scale = nullptr;
    // The operands (float32) hold only bfloat16 values (MX and NVFP4 copies; the plan knows): an
    // engine may multiply them on TF32 tensor cores, whose products of such values are exact, so
    // only the summation (its order, the tensor cores' float32 accumulation) can differ from a
    // float32 convolution: as for GemmArgs::exact_in_bfloat16, but for an MX block whose scale is
    // under 2^-119, whose subnormal values TF32 may not hold. Engines may ignore it.
    bool exact_in_bfloat16 = false;
};

// Max pooling over NHWC, no padding (Keras "valid").
struct Pool2dArgs {
    std::int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;
    std::int64_t out_h = 0, out_w = 0;
    std::int64_t pool_h = 2, pool_w = 2, stride_h = 2, stride_w = 2;
};

// Batch and layer normalization (issue 29) over a 2-D view (rows, cols) of x, cols the last axis
// (Keras's axis -1: channels or features). BatchNormalization's statistics are per column over
// the rows (N·H·W), LayerNormalization's per row over the columns; gamma and beta are per column
// in both. The statistics dtype S is gamma's (float32 under mixed policies, as Keras computes
// them; a pure 16-bit per-layer policy forces 16-bit statistics). Arithmetic is in A = float32
// (float64 when S is float64) and every intermediate is rounded to S, as a 16-bit tensor library
// evaluates the formulas (sums accumulate in A):
//   mean = S(sum x / n); d = S(x − mean); var = S(sum S(d·d) / n); inv_std = S(1 / sqrt(var + ε));
//   x̂ = S(d · inv_std); y = round_y(γ·x̂ + β).
// With S = float32 every S() is exact and this is the float32 layer.
// Backward (training statistics), in A from the saved mean and inv_std, x̂ recomputed as above:
//   dβ = sum dy, dγ = sum dy·x̂, dx = γ·inv_std / n · (n·dy − dβ − x̂·dγ)   (BatchNormalization)
//   g = dy·γ, dx = inv_std / n · (n·g − sum g − x̂·sum g·x̂)                (LayerNormalization)
// with dγ, dβ rounded to their tensors' dtype, dx to dx's. Batch padding (BatchNormalization):
// rows >= valid_rows take no part in the statistics or the sums and get dx = 0.
struct NormArgs {
    std::int64_t rows = 0, cols = 0;
    std::int64_t valid_rows = 0; // BatchNormalization in training; rows beyond are padding
    double epsilon = 1e-3;
    const Tensor* x = nullptr;     // (rows, cols) view of any float dtype
    const Tensor* gamma = nullptr; // (cols), the statistics dtype S
    const Tensor* beta = nullptr;  // (cols), S
    Tensor* y = nullptr;           // x's shape, any float dtype (forward)
    // The statistics the backward pass reads, S: (cols) for BatchNormalization, (rows) for
    // LayerNormalization. Written by a training forward, read by backward; nullptr in inference.
    Tensor* mean = nullptr;
    Tensor* inv_std = nullptr;
    // BatchNormalization only. training: batch statistics, and the moving ones updated as
    // moving = S(moving·momentum + batch·(1 − momentum)) (var biased, as Keras); inference
    // (training false): mean = moving_mean, inv_std = S(1 / sqrt(moving_variance + ε)).
    bool training = true;
    double momentum = 0.99;
    Tensor* moving_mean = nullptr;     // (cols), S
    Tensor* moving_variance = nullptr; // (cols), S
};

// Fused softmax + cross-entropy, computed in the logits' dtype (float32 math, rounded results).
struct SoftmaxXentArgs {
    const Tensor* logits = nullptr; // (batch, classes)
    const Tensor* labels = nullptr; // (batch) int32
    std::int64_t valid_rows = 0;    // rows >= valid_rows are padding: no loss, zero gradient
    Tensor* probs = nullptr;        // (batch, classes), logits' dtype
    Tensor* dlogits = nullptr;      // (p - onehot) * loss_scale / valid_rows; nullptr in eval
    Tensor* scalars = nullptr; // StepScalars: adds loss_sum, correct, examples; reads loss_scale
};

// Fake quantisation of a GEMM / convolution input (issue 18, the frontier policies): dst (float32,
// or bfloat16 where quant_copy_dtype_ok allows it (MX, NVFP4), src's shape, or more rows under
// spec->hadamard: src's rows, then zeros to a multiple of 16) = src quantised under `spec` over its
// 2-D view and decoded back, exactly as core/numeric/tensor_quant does. `state` (float32,
// quant_state_floats(spec); delayed scaling's amax history) persists across steps; with `record`
// (training) the history is updated and `stats` (float64 x kQuantStatsValues: amax, scale, clipped,
// zeros, count, blocks) written.
inline constexpr int kQuantStatsValues = 6;
struct FakeQuantArgs {
    const QuantSpec* spec = nullptr;
    const Tensor* src = nullptr;
    Tensor* dst = nullptr;
    Tensor* state = nullptr; // nullptr when the spec keeps none
    Tensor* stats = nullptr;
    std::uint64_t step = 0; // varies stochastic rounding from step to step
    bool record = true;
    std::int64_t rows = 0; // rows of the 2-D view (a convolution's N·H·W); 0: dst->rows()
    // spec->block.tensor_scale_in_gemm (NVFP4): one float32 that receives the factor dst's values
    // leave out (nvfp4_gemm_scale of the tensor scale), for GemmArgs::a_scale / b_scale. Written
    // on every call, training or not. Required then, and nullptr otherwise.
    Tensor* gemm_scale = nullptr;
};

// Per-tensor FP8 quantisation into codes for the FP8 GEMM (issue 18, TE's Float8Tensor): src
// (any float dtype, read as rows x cols with rows = its first dimension) cast under `spec`
// (Current or Delayed scaling only) to float8 codes of spec->element, written row-major into
// `codes` (rows x cols) and/or transposed into `codes_t` (cols x rows, TE's column-wise usage:
// the same codes, one scale), with the decode scale 1 / scale in `scale_inv` (float32, one
// element), which GemmArgs::a_scale / b_scale take. code · scale_inv is exactly the value
// fake_quantize writes for that element; `state`, `stats` and `record` as in FakeQuantArgs.
struct Fp8QuantArgs {
    const QuantSpec* spec = nullptr;
    const Tensor* src = nullptr;
    Tensor* codes = nullptr;   // (rows, cols) float8, or nullptr
    Tensor* codes_t = nullptr; // (cols, rows) float8, or nullptr
    Tensor* scale_inv = nullptr;
    Tensor* state = nullptr; // delayed scaling's history; nullptr for current scaling
    Tensor* stats = nullptr;
    bool record = true;
};

// One step's scalars as the readout ring returned them, a step or two after the step ran.
struct StepReadout {
    StepScalars scalars;
    double device_ms = -1.0; // the step's time measured on the device (CUDA events); < 0: none
};

// Slots in the readout ring: a step's slot is free again this many steps later.
inline constexpr int kReadoutSlots = 4;

class Backend {
public:
    virtual ~Backend() = default;

    virtual const DeviceInfo& info() const = 0;

    // --- memory ---
    // Throws Error(OutOfMemory) naming the requested and the free bytes.
    virtual Buffer allocate(std::size_t bytes) = 0;
    virtual std::size_t memory_in_use() const = 0; // bytes held by live Buffers of this backend
    virtual void upload(const void* host, Tensor& dst) = 0;   // dst.bytes() bytes
    virtual void download(const Tensor& src, void* host) = 0; // src.bytes() bytes
    virtual void synchronize() = 0;

    // --- workspace sizes, asked once at compile time ---
    virtual std::size_t gemm_workspace_bytes(const GemmArgs& args) const = 0;
    virtual std::size_t conv2d_workspace_bytes(const Conv2dArgs& args, DType dtype) const = 0;

    // --- data ---
    // batch(r, ...) = images[perm[offset + r]] / 255 in batch's dtype, labels(r) = label as int32,
    // for r < count; rows r >= count repeat the first row (they are masked by valid_rows). With
    // `position` (the plan's StepScalars), offset is its batch_position, read where the scalars
    // live, so a captured step serves every batch position (`offset` is then not used).
    virtual void gather_batch(const Tensor& images_u8, const Tensor& labels_u8,
                              const Tensor& permutation_i32, std::int64_t offset,
                              std::int64_t count, const Tensor* position, Tensor& batch,
                              Tensor& labels_i32) = 0;

    // --- elementwise and GEMM ---
    virtual void fill(Tensor& dst, double value) = 0;
    virtual void cast(const Tensor& src, Tensor& dst) = 0; // one rounding to dst's dtype
    virtual void gemm(const GemmArgs& args) = 0;
    virtual void bias_grad(const Tensor& dy, Tensor& db) = 0; // db(j) = sum_r dy(r, j)
    virtual void activation_forward(Activation act, const Tensor& x, Tensor& y) = 0;
    // dx = dy * act'(.), from the output y (relu, tanh, sigmoid, linear) or the input x (gelu).
    // Except for softmax, dx may be the same tensor as dy (the layers run it in place).
    virtual void activation_backward(Activation act, const Tensor& x, const Tensor& y,
                                     const Tensor& dy, Tensor& dx) = 0;
    // activation_backward, then bias_grad(dx, db): a Dense layer's dZ and bias gradient. An
    // engine may run the two in one pass over dZ (the CUDA engine does for ReLU, tanh and
    // sigmoid), computing the same dZ and the same sums in the same order.
    virtual void activation_backward_bias_grad(Activation act, const Tensor& x, const Tensor& y,
                                               const Tensor& dy, Tensor& dx, Tensor& db) {
        activation_backward(act, x, y, dy, dx);
        bias_grad(dx, db);
    }
    virtual void softmax_cross_entropy(const SoftmaxXentArgs& args) = 0;

    // --- convolution and pooling ---
    // y = epilogue(conv(x, w) + bias); pre_activation optional, as in GemmArgs.
    virtual void conv2d_forward(const Conv2dArgs& args, const Tensor& x, const Tensor& w,
                                const Tensor* bias, Activation epilogue, Tensor& y,
                                Tensor* pre_activation, Workspace workspace) = 0;
    virtual void conv2d_backward_data(const Conv2dArgs& args, const Tensor& dy, const Tensor& w,
                                      Tensor& dx, Workspace workspace) = 0;
    virtual void conv2d_backward_filter(const Conv2dArgs& args, const Tensor& x, const Tensor& dy,
                                        Tensor& dw, Tensor* dbias, Workspace workspace) = 0;
    virtual void maxpool_forward(const Pool2dArgs& args, const Tensor& x, Tensor& y,
                                 Tensor& argmax_i32) = 0;
    virtual void maxpool_backward(const Pool2dArgs& args, const Tensor& dy,
                                  const Tensor& argmax_i32, Tensor& dx) = 0;

    // --- normalization (NormArgs) ---
    virtual void batch_norm_forward(const NormArgs& args) = 0;
    virtual void batch_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx,
                                     Tensor& dgamma, Tensor& dbeta) = 0;
    virtual void layer_norm_forward(const NormArgs& args) = 0;
    virtual void layer_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx,
                                     Tensor& dgamma, Tensor& dbeta) = 0;

    // --- dropout (inverted; the mask is a pure function of (seed, element index)) ---
    virtual void dropout_forward(double rate, std::uint64_t seed, const Tensor& x, Tensor& y,
                                 Tensor& mask_u8) = 0;
    virtual void dropout_backward(double rate, const Tensor& dy, const Tensor& mask_u8,
                                  Tensor& dx) = 0;

    // --- inspection (the teaching lab's gradient histograms) ---
    // counts(bin) += number of elements of x in that bin (core/backend/histogram.h); counts is
    // int32 (kHistogramBins) and is not cleared, so several tensors can add into one histogram.
    virtual void exponent_histogram(const Tensor& x, Tensor& counts_i32) = 0;

    // --- quantised GEMM inputs (the frontier policies) ---
    // Engines without it refuse the policies when a plan is compiled (PlanBuilder asks first).
    virtual bool supports_fake_quantize() const { return false; }
    // NVFP4's random Hadamard transform inside fake_quantize (QuantSpec::hadamard; an output
    // with zero rows padded to a multiple of 16). The CPU and CUDA engines have it; a plan that
    // asks for it on an engine without it is refused at bind, naming the layer and the field.
    virtual bool supports_hadamard_quantize() const { return false; }
    virtual void fake_quantize(const FakeQuantArgs& args) {
        (void)args;
        throw Error(ErrorKind::Config, "quantised policies run on the CPU engine for now");
    }
    // Both copies of one tensor that a layer's GEMMs read (TE quantises both usages at once):
    // `rowwise` for the GEMM reducing along its columns, `columnwise` for the other, with the
    // same src. fake_quantize(rowwise), then fake_quantize(columnwise); an engine may
    // make both in one pass over src (the CUDA engine does for MX's 1×32 and 32×1 blocks, issue
    // 26), with the copies, stats and states of the two calls, bit for bit.
    virtual void fake_quantize_pair(const FakeQuantArgs& rowwise, const FakeQuantArgs& columnwise) {
        fake_quantize(rowwise);
        fake_quantize(columnwise);
    }

    // --- FP8 GEMM operands (GemmArgs::a_scale / b_scale) ---
    // The CPU engine decodes the codes exactly; the CUDA engine runs cuBLASLt's FP8 matmul,
    // which needs compute capability 8.9 or higher (decided when the engine opens).
    virtual bool supports_fp8_gemm() const { return false; }
    // Whether FP8 GEMMs run on FP8 hardware here (FP8 tensor cores), so that a per-tensor FP8
    // recipe's recipe.gemm "auto" lowers its Dense GEMMs onto them; the CPU engine emulates them
    // (recipe.gemm "fp8" asks for that) and says false.
    virtual bool native_fp8_gemm() const { return false; }
    // The quantise step of an FP8 GEMM's operands (Fp8QuantArgs); engines with FP8 GEMMs have it.
    virtual void quantize_fp8(const Fp8QuantArgs& args) {
        (void)args;
        throw Error(ErrorKind::Config, "this engine has no FP8 GEMMs: use recipe.gemm "
                                       "\"fake_quant\"");
    }
    // A Dense layer's backward up to its FP8 GEMMs: activation_backward_bias_grad(act, x, y, dy,
    // dz, db), then quantize_fp8 of dz into codes (codes.src is ignored). An engine may run the
    // three in one pass without storing dZ (the CUDA engine does for ReLU under delayed scaling,
    // TE's fused dbias + cast-transpose), so dz holds dZ or is left as it was: nothing may read
    // it afterwards. The codes, scale, stats and state are quantize_fp8's, bit for bit; db is
    // activation_backward_bias_grad's up to its summation order.
    virtual void activation_backward_bias_grad_fp8(Activation act, const Tensor& x, const Tensor& y,
                                                   const Tensor& dy, Tensor& dz, Tensor& db,
                                                   const Fp8QuantArgs& codes) {
        activation_backward_bias_grad(act, x, y, dy, dz, db);
        Fp8QuantArgs of_dz = codes;
        of_dz.src = &dz;
        quantize_fp8(of_dz);
    }

    // --- the training step's control, all on the device ---
    // Zeroes found_inf, nonfinite_mask, loss_sum, correct and examples.
    virtual void begin_step(Tensor& scalars) = 0;
    // g *= 1 / loss_scale for every gradient; found_inf = 1 if any element is inf or NaN, and
    // nonfinite_mask gets nonfinite_bit(i) for each grads[i] that held one. A gradient that
    // `leave_scaled` marks (empty, or one flag per gradient) is the optimizer's to unscale
    // (optimizer_update's `unscale_grad`): it is not written, and an element counts as non-finite
    // when its float32 value times float32(1 / loss_scale) is, as a float32 gradient cast from
    // it and unscaled would be (issue 26: a mixed layer's 16-bit gradient needs no cast back).
    virtual void unscale_and_check_finite(std::span<Tensor* const> grads, Tensor& scalars,
                                          std::span<const std::uint8_t> leave_scaled = {}) = 0;
    // One optimizer update of `param` from `grad` and its slots (update_rules.h). When
    // `skip_if_found_inf` and scalars.found_inf, nothing is written. t = scalars.iterations + 1.
    // With `compute_copy` (a mixed policy's compute-dtype copy of its master variable, the same
    // shape), the updated parameter is written there too, rounded once as cast() rounds it, so
    // that the next forward reads it with no cast step of its own (issue 26: PyTorch's and
    // Apex's fused optimizers write the low-precision copy the same way); a skipped step leaves
    // it, like the parameter, as it was. A gradient of another dtype than the parameter's is
    // widened exactly; with `unscale_grad` (one unscale_and_check_finite left scaled) each
    // element is then multiplied by float32(1 / loss_scale), the value the unscale would have
    // written into a float32 gradient.
    virtual void optimizer_update(const OptimizerConfig& config, Tensor& param, const Tensor& grad,
                                  std::span<Tensor* const> slot_tensors, const Tensor& scalars,
                                  bool skip_if_found_inf, Tensor* compute_copy = nullptr,
                                  bool unscale_grad = false) = 0;
    // One parameter of optimizer_update_all: what optimizer_update takes for it.
    struct ParamUpdate {
        Tensor* param = nullptr;
        const Tensor* grad = nullptr;
        std::vector<Tensor*> slot_tensors; // not "slots": Qt defines that word away
        Tensor* compute_copy = nullptr;    // none: nullptr
        bool unscale_grad = false;
    };
    // optimizer_update for every parameter of `params`, each with the same arithmetic; an engine
    // may update several in one pass (the CUDA engine: one launch for up to 24 float32 tensors,
    // as PyTorch's fused optimizers and Apex's multi_tensor_apply do; issue 26).
    virtual void optimizer_update_all(const OptimizerConfig& config,
                                      std::span<const ParamUpdate> params, const Tensor& scalars,
                                      bool skip_if_found_inf) {
        for (const ParamUpdate& p : params)
            optimizer_update(config, *p.param, *p.grad, p.slot_tensors, scalars, skip_if_found_inf,
                             p.compute_copy, p.unscale_grad);
    }
    // Ends a step: scale_used, skipped, the next loss scale (next_loss_scale), iterations, and
    // the next batch's position (advance_batch_position).
    virtual void finish_step(const LossScaleConfig& config, Tensor& scalars) = 0;
    // Copies the scalars to the host (the CUDA engine reads a pinned ring buffer instead).
    virtual StepScalars read_scalars(const Tensor& scalars) = 0;
    virtual void write_scalars(const StepScalars& values, Tensor& scalars) = 0;

    // --- step metrics without a host sync inside the step: a ring of kReadoutSlots slots ---
    // How many steps late a caller may read a step's readout (0: read it at once; the CPU engine).
    virtual int readout_lag() const { return 0; }
    // Marks the start of the step whose readout goes to `slot` (CUDA: records an event there).
    virtual void step_started(int slot) { (void)slot; }
    // Enqueues a copy of the scalars into `slot` (0 <= slot < kReadoutSlots) after the step's ops.
    virtual void enqueue_readout(const Tensor& scalars, int slot) = 0;
    // Waits until `slot`'s copy has landed and returns it (with the step's device time if known).
    virtual StepReadout read_readout(int slot) = 0;

    // --- a step timed plan step by plan step (Plan::train_step_timed: profile, the Plan view) ---
    // An engine whose work runs behind the host (the CUDA engine) marks its stream after each plan
    // step instead of being waited for, so the steps run back to back as a training step runs
    // them and each interval is the device's time for one step's work (CUDA events; a wait after
    // each step added the launch and the wait to every step, and let a stream-ordered pool give
    // its memory back between steps). begin_time_marks(n) readies marks 0 … n and says whether the
    // engine has them; mark_time(i) records mark i behind the work enqueued so far;
    // marked_intervals_ms() waits for mark n and returns the n intervals between consecutive
    // marks, in milliseconds. Without marks (the CPU engine, whose calls return with their work
    // done) the plan reads the host's clock around each step.
    virtual bool begin_time_marks(std::size_t intervals) {
        (void)intervals;
        return false;
    }
    virtual void mark_time(std::size_t index) { (void)index; }
    virtual std::vector<double> marked_intervals_ms() { return {}; }

    // TF32 for float32 matmuls and convolutions (tensor cores); the CPU engine stays strict.
    virtual void set_tf32(bool enabled) { (void)enabled; }
    // Whether a NaN must come out of every op as the CPU engine's arithmetic leaves it (on by
    // default). Off lets the CUDA engine fuse cuBLASLt's ReLU, which may turn NaN into 0; the
    // Trainer keeps it on for pure 16-bit policies. The CPU engine always propagates NaN.
    virtual void set_propagate_nan(bool enabled) { (void)enabled; }
    // What the latest GEMM or convolution ran, for the self-test's table, e.g. "cublasLt
    // epilogue RELU_BIAS algo 23" or "cudnn fwd algo IMPLICIT_PRECOMP_GEMM"; empty when the
    // engine has only one way (the CPU engine).
    virtual std::string last_choice() const { return {}; }
    // Forgets it, so an op that chooses nothing reports "" (the self-test's table, per case).
    virtual void clear_last_choice() {}
    // --- CUDA Graphs (the experiment's `graph` flag) ---
    // An engine that captures records the ops enqueued between begin_graph_capture() and
    // end_graph_capture() under (owner, key) without running them; replay_graph() launches them
    // (false: nothing recorded under that key). Graphs hold the owner's tensor addresses: the
    // owner drops them before its memory goes. Engines without graphs: false and no-ops.
    virtual bool captures_graphs() const { return false; }
    virtual void begin_graph_capture() {}
    virtual void end_graph_capture(const void* owner, std::uint64_t key) {
        (void)owner;
        (void)key;
    }
    virtual void abort_graph_capture() noexcept {} // after an op threw during the capture
    virtual bool replay_graph(const void* owner, std::uint64_t key) {
        (void)owner;
        (void)key;
        return false;
    }
    virtual void drop_graphs(const void* owner) noexcept { (void)owner; }
    // Why this engine ignores the graph flag, said once at the start of a run that sets it.
    virtual std::string graph_capture_note() const {
        return "graph: the CPU engine has no CUDA Graphs; the experiment's graph flag has no "
               "effect here";
    }
};

} // namespace mantissa
