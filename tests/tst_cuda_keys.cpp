// The CUDA engine's host-side logic that runs without a GPU: the cuBLASLt plan key and fusion
// decision, the cuDNN padding test, and the factory's fallback when no GPU is usable.

#include <cstdint>
#include <string>
#include <vector>

#include "core/backend/cuda/conv_algo.h"
#include "core/backend/cuda/conv_filter_taps.h"
#include "core/backend/cuda/conv_key.h"
#include "core/backend/cuda/gemm_key.h"
#include "core/backend/factory/backend_factory.h"
#include "core/error.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::cuda;

namespace {

GemmKey key(DType ab, DType c, bool bias, Activation act, bool pre, std::int64_t n = 64) {
    GemmKey k;
    k.m = 128;
    k.n = n;
    k.k = 256;
    k.ab_dtype = ab;
    k.b_dtype = ab;
    k.c_dtype = c;
    k.has_bias = bias;
    k.bias_dtype = c;
    k.epilogue = act;
    k.has_pre = pre;
    k.pre_dtype = c;
    k.propagate_nan = false; // the fusing case; the NaN-propagating one is tested on its own
    return k;
}

ConvAlgoPerf perf(int algo, ConvMath math, bool deterministic = true, std::size_t memory = 1024,
                  bool ok = true) {
    ConvAlgoPerf p;
    p.algo = algo;
    p.status_ok = ok;
    p.memory = memory;
    p.deterministic = deterministic;
    p.math = math;
    return p;
}

bool has_gpu() {
    return available_devices().size() > 1;
}

} // namespace

class TestCudaKeys {
public:
    void fusion_data() {
        add_column<DType>("ab");
        add_column<DType>("c");
        add_column<bool>("bias");
        add_column<Activation>("act");
        add_column<bool>("pre");
        add_column<std::int64_t>("n");
        add_column<LtEpilogue>("epilogue");
        add_column<bool>("kernel");
        add_column<bool>("acc_in_workspace");
        using A = Activation;
        using E = LtEpilogue;
        const auto F16 = DType::Float16, F32 = DType::Float32, F64 = DType::Float64;
        new_row("fp16 bias+relu fused")
            << F16 << F16 << true << A::Relu << false << 64ll << E::ReluBias << false << false;
        new_row("bf16 bias fused") << DType::BFloat16 << DType::BFloat16 << true << A::Linear
                                   << false << 64ll << E::Bias << false << false;
        new_row("fp32 plain") << F32 << F32 << false << A::Linear << false << 64ll << E::Default
                              << false << false;
        new_row("fp16 gelu with pre: aux")
            << F16 << F16 << true << A::Gelu << true << 64ll << E::GeluAuxBias << false << false;
        new_row("fp16 gelu with pre, n=10: kernel via accumulator")
            << F16 << F16 << true << A::Gelu << true << 10ll << E::Default << true << true;
        new_row("fp16 tanh: kernel via accumulator")
            << F16 << F16 << true << A::Tanh << false << 64ll << E::Default << true << true;
        new_row("fp32 sigmoid: kernel in place")
            << F32 << F32 << true << A::Sigmoid << false << 64ll << E::Default << true << false;
        new_row("fp64 bias: kernel in place (no fp64 epilogues)")
            << F64 << F64 << true << A::Relu << false << 64ll << E::Default << true << false;
        new_row("fp64 plain product")
            << F64 << F64 << false << A::Linear << false << 64ll << E::Default << false << false;
        new_row("fp16 in, fp32 out, fused")
            << F16 << F32 << true << A::Relu << false << 64ll << E::ReluBias << false << false;
        new_row("fp32 in, fp16 out: accumulator")
            << F32 << F16 << false << A::Linear << false << 64ll << E::Default << true << true;
        new_row("softmax epilogue: kernel")
            << F32 << F32 << true << A::Softmax << false << 64ll << E::Default << true << false;
    }
    void fusion() {
        FETCH(DType, ab);
        FETCH(DType, c);
        FETCH(bool, bias);
        FETCH(Activation, act);
        FETCH(bool, pre);
        FETCH(std::int64_t, n);
        FETCH(LtEpilogue, epilogue);
        FETCH(bool, kernel);
        FETCH(bool, acc_in_workspace);
        const GemmFusion f = gemm_fusion(key(ab, c, bias, act, pre, n));
        CHECK_EQ(lt_epilogue_name(f.lt_epilogue), lt_epilogue_name(epilogue));
        CHECK_EQ(f.kernel_epilogue, kernel);
        CHECK_EQ(f.acc_in_workspace, acc_in_workspace);
        CHECK_EQ(f.acc_bytes > 0, acc_in_workspace);
        CHECK_EQ(f.softmax_after, act == Activation::Softmax);
    }

    // The retry without cuBLASLt's epilogue always ends in the kernel epilogue.
    void retry_without_lt_epilogue() {
        GemmKey k = key(DType::Float16, DType::Float16, true, Activation::Relu, false);
        k.allow_lt_epilogue = false;
        const GemmFusion f = gemm_fusion(k);
        CHECK_EQ(f.lt_epilogue, LtEpilogue::Default);
        CHECK(f.kernel_epilogue);
        CHECK(f.acc_in_workspace); // a 16-bit C: the float32 product waits in the workspace
        CHECK_EQ(f.acc_bytes, std::size_t(128 * 64 * 4));
    }

    // cuBLASLt's RELU is max(x, 0) (cublasLt.h), which may turn NaN into 0: where NaN must
    // propagate (the default, and pure 16-bit policies) ReLU runs in the kernel epilogue.
    void relu_not_fused_when_nan_must_propagate() {
        GemmKey k = key(DType::Float16, DType::Float16, true, Activation::Relu, false);
        CHECK_EQ(gemm_fusion(k).lt_epilogue, LtEpilogue::ReluBias); // NaN may become 0: fused
        k.propagate_nan = true;
        const GemmFusion f = gemm_fusion(k);
        CHECK_EQ(f.lt_epilogue, LtEpilogue::Default);
        CHECK(f.kernel_epilogue);
        CHECK(f.acc_in_workspace); // relu(acc + bias) rounded once, as the CPU does
        // GELU and plain bias are unaffected.
        k.epilogue = Activation::Gelu;
        CHECK_EQ(gemm_fusion(k).lt_epilogue, LtEpilogue::GeluBias);
        k.epilogue = Activation::Linear;
        CHECK_EQ(gemm_fusion(k).lt_epilogue, LtEpilogue::Bias);
        // The flag is part of the plan's identity, and gemm_key defaults to propagating NaN.
        GemmKey other = k;
        other.propagate_nan = false;
        CHECK(!(other == k));
        CHECK(GemmKeyHash{}(other) != GemmKeyHash{}(k));
        Tensor x{"x", DType::Float16, {4, 8}}, w{"w", DType::Float16, {8, 2}};
        Tensor y{"y", DType::Float16, {4, 2}};
        GemmArgs args;
        args.a = &x;
        args.b = &w;
        args.c = &y;
        CHECK(gemm_key(args, false).propagate_nan);
        CHECK(!gemm_key(args, false, false).propagate_nan);
    }

    // The workspace is sized from the fusion decision alone and reserves the accumulator the
    // retry without cuBLASLt's epilogue needs, so a fused plan that has no algorithm still fits.
    void workspace_reserves_the_fallback_accumulator() {
        const std::size_t scratch = std::size_t{8} << 20;
        const GemmKey fused = key(DType::Float16, DType::Float16, true, Activation::Relu, false);
        CHECK_EQ(gemm_fusion(fused).acc_bytes, std::size_t(0));
        CHECK_EQ(gemm_workspace_need(fused, scratch), std::size_t(128 * 64 * 4) + scratch);
        // A plain float32 product never needs an accumulator, fused or not.
        const GemmKey plain = key(DType::Float32, DType::Float32, false, Activation::Linear, false);
        CHECK_EQ(gemm_workspace_need(plain, scratch), scratch);
        // A kernel epilogue through the accumulator: its own size.
        const GemmKey tanh = key(DType::Float16, DType::Float16, true, Activation::Tanh, false);
        CHECK_EQ(gemm_workspace_need(tanh, 0), std::size_t(128 * 64 * 4));
    }

    // No algorithm for an impossible size is OutOfMemory's message, naming the size and what to
    // do; a size that fits is not (that stays a device error).
    void impossible_size_is_out_of_memory() {
        GemmKey k = key(DType::Float32, DType::Float32, true, Activation::Relu, false);
        k.m = 1000000;
        k.k = 784;
        k.n = 65536;
        const std::size_t h100 = std::size_t{80} << 30;
        const auto message = gemm_too_large(k, h100, "cuda:0");
        CHECK(message.has_value());
        CHECK_MSG(message->find("(1000000 x 784) · (784 x 65536) float32 -> float32") !=
                      std::string::npos,
                  message->c_str());
        CHECK_MSG(message->find("cuda:0") != std::string::npos, message->c_str());
        CHECK_MSG(message->find("Reduce the batch size") != std::string::npos, message->c_str());
        CHECK_MSG(message->find("81920 MiB") != std::string::npos, message->c_str());
        k.m = 8192;
        k.k = 784;
        k.n = 4096;
        CHECK(!gemm_too_large(k, h100, "cuda:0").has_value());
    }

    // What last_choice() reports for a GEMM.
    void choice_text() {
        const GemmKey fused = key(DType::Float16, DType::Float16, true, Activation::Relu, false);
        CHECK_EQ(gemm_choice_text(fused, gemm_fusion(fused), 23),
                 std::string("cublasLt epilogue RELU_BIAS algo 23"));
        GemmKey retry = fused;
        retry.allow_lt_epilogue = false;
        CHECK_EQ(gemm_choice_text(retry, gemm_fusion(retry), 7),
                 std::string("cublasLt epilogue DEFAULT algo 7 + kernel epilogue relu+bias "
                             "(accumulator in workspace) (fused algorithm unavailable)"));
        const GemmKey sig = key(DType::Float32, DType::Float32, false, Activation::Sigmoid, false);
        CHECK_EQ(gemm_choice_text(sig, gemm_fusion(sig), 1),
                 std::string("cublasLt epilogue DEFAULT algo 1 + kernel epilogue sigmoid"));
    }

    // 16-bit operands whose rows miss 16 bytes are padded above kPadMinWork (gemm_padding), in
    // each of a 10-unit Dense layer's three products of seed-mlp (batch 8192, 4096 inputs).
    void padding_of_a_ten_unit_layer() {
        GemmKey fwd = key(DType::BFloat16, DType::BFloat16, true, Activation::Linear, false, 10);
        fwd.m = 8192;
        fwd.k = 4096;
        // Forward Y (8192, 10) = X (8192, 4096) · W (4096, 10): W's and C's rows padded.
        GemmFusion f = gemm_fusion(fwd);
        CHECK(f.pad.pad_b && f.pad.pad_c && !f.pad.pad_a);
        CHECK_EQ(f.pad.lt_m, std::int64_t(8192));
        CHECK_EQ(f.pad.lt_n, std::int64_t(16));
        CHECK_EQ(f.pad.lt_k, std::int64_t(4096));
        CHECK_EQ(f.pad.b_bytes, std::size_t(4096 * 16 * 2));
        // A padded C: the bias goes to the kernel epilogue through a float32 accumulator.
        CHECK_EQ(f.lt_epilogue, LtEpilogue::Default);
        CHECK(f.kernel_epilogue && f.acc_in_workspace);
        CHECK_EQ(f.acc_bytes, std::size_t(8192 * 16 * 4));
        CHECK_EQ(gemm_workspace_need(fwd, 100), std::size_t(8192 * 16 * 4 + 4096 * 16 * 2 + 100));
        CHECK_EQ(gemm_choice_text(fwd, f, 5),
                 std::string("cublasLt epilogue DEFAULT algo 5 (padded to 8192 x 4096 · 4096 x 16)"
                             " + kernel epilogue linear+bias (accumulator in workspace)"));
        // dX (8192, 4096) = dY (8192, 10) · W (4096, 10)ᵀ: k padded in both operands, C whole
        // (cuBLASLt writes it, no accumulator).
        GemmKey dx = key(DType::BFloat16, DType::BFloat16, false, Activation::Linear, false, 4096);
        dx.m = 8192;
        dx.k = 10;
        dx.transpose_b = true;
        f = gemm_fusion(dx);
        CHECK(f.pad.pad_a && f.pad.pad_b && !f.pad.pad_c);
        CHECK_EQ(f.pad.lt_k, std::int64_t(16));
        CHECK_EQ(f.pad.a_bytes, std::size_t(8192 * 16 * 2));
        CHECK_EQ(f.pad.b_bytes, std::size_t(4096 * 16 * 2));
        CHECK(!f.kernel_epilogue);
        CHECK_EQ(f.acc_bytes, std::size_t(0));
        // dW (4096, 10) = X (8192, 4096)ᵀ · dY (8192, 10): dY's and C's rows padded.
        GemmKey dw = key(DType::Float16, DType::Float16, false, Activation::Linear, false, 10);
        dw.m = 4096;
        dw.k = 8192;
        dw.transpose_a = true;
        f = gemm_fusion(dw);
        CHECK(!f.pad.pad_a && f.pad.pad_b && f.pad.pad_c);
        CHECK_EQ(f.pad.lt_k, std::int64_t(8192)); // X's rows are 4096 long: k stays
        CHECK_EQ(f.acc_bytes, std::size_t(4096 * 16 * 4));
        // A transposed A whose rows (m) miss 8: m padded, C's extra rows are never read.
        GemmKey tm = dw;
        tm.m = 10;
        tm.k = 1024;
        tm.n = 8192;
        f = gemm_fusion(tm);
        CHECK(f.pad.pad_a && !f.pad.pad_b && f.pad.pad_c);
        CHECK_EQ(f.pad.lt_m, std::int64_t(16));
        CHECK_EQ(f.pad.lt_n, std::int64_t(8192));
        CHECK_EQ(f.pad.a_bytes, std::size_t(1024 * 16 * 2));
    }

    // Where padding does not apply: small products (mlp-small's 10-unit layer: the launches
    // would cost more), aligned rows, float32 and float64 operands, accumulation into C, the
    // softmax epilogue.
    void padding_not_applied() {
        GemmKey k = key(DType::BFloat16, DType::BFloat16, true, Activation::Linear, false, 10);
        k.m = 128;
        k.k = 128;
        CHECK(!gemm_padding(k).any()); // 128 x 128 x 10, below kPadMinWork
        CHECK_EQ(gemm_padding(k).lt_n, std::int64_t(10));
        k.m = 8192;
        k.k = 4096;
        CHECK(gemm_padding(k).any());
        GemmKey aligned = k;
        aligned.n = 16;
        CHECK(!gemm_padding(aligned).any());
        GemmKey f32 = k;
        f32.ab_dtype = f32.b_dtype = f32.c_dtype = f32.bias_dtype = DType::Float32;
        CHECK(!gemm_padding(f32).any());
        GemmKey f64 = k;
        f64.ab_dtype = f64.b_dtype = f64.c_dtype = f64.bias_dtype = DType::Float64;
        CHECK(!gemm_padding(f64).any());
        GemmKey acc = k;
        acc.has_bias = false;
        acc.accumulate = true;
        CHECK(!gemm_padding(acc).any());
        GemmKey softmax = k;
        softmax.epilogue = Activation::Softmax;
        CHECK(!gemm_padding(softmax).any());
        // A wide C or a wide operand would cost a tensor's worth of workspace (kPadMaxBytes): a
        // 50257-wide C at batch 8192 (a 1.6 GB float32 accumulator), an 8192 x 4100 X.
        GemmKey wide_c = k;
        wide_c.n = 50257;
        wide_c.k = 64;
        CHECK(!gemm_padding(wide_c).any());
        CHECK(!gemm_fusion(wide_c).acc_in_workspace); // bias fused as before
        GemmKey wide_a = k;
        wide_a.has_bias = false;
        wide_a.k = 4100;
        wide_a.n = 4096;
        CHECK(!gemm_padding(wide_a).any());
        // An unpadded key's workspace: the fallback's accumulator only, as before.
        CHECK_EQ(gemm_workspace_need(aligned, 0), std::size_t(8192 * 16 * 4));
    }

    // Strict float32 convolutions take FMA math only (CUDNN_DEFAULT_MATH may use TF32 on
    // Ampere+); nothing float32 takes ALLOW_CONVERSION (float32 data converted to float16).
    void conv_math_rules_data() {
        add_column<DType>("dtype");
        add_column<bool>("tf32");
        add_column<ConvMath>("math");
        add_column<bool>("allowed");
        const auto F32 = DType::Float32, F16 = DType::Float16, BF16 = DType::BFloat16;
        using M = ConvMath;
        new_row("fp32 strict: FMA") << F32 << false << M::Fma << true;
        new_row("fp32 strict: DEFAULT (TF32 on Ampere+)") << F32 << false << M::Default << false;
        new_row("fp32 strict: TENSOR_OP") << F32 << false << M::TensorOp << false;
        new_row("fp32 strict: ALLOW_CONVERSION")
            << F32 << false << M::TensorOpAllowConversion << false;
        new_row("fp32 tf32: TENSOR_OP") << F32 << true << M::TensorOp << true;
        new_row("fp32 tf32: DEFAULT") << F32 << true << M::Default << true;
        new_row("fp32 tf32: FMA") << F32 << true << M::Fma << true;
        new_row("fp32 tf32: ALLOW_CONVERSION")
            << F32 << true << M::TensorOpAllowConversion << false;
        new_row("fp16: TENSOR_OP") << F16 << false << M::TensorOp << true;
        new_row("fp16: ALLOW_CONVERSION") << F16 << false << M::TensorOpAllowConversion << true;
        new_row("bf16: TENSOR_OP") << BF16 << false << M::TensorOp << true;
        new_row("bf16: ALLOW_CONVERSION") << BF16 << false << M::TensorOpAllowConversion << false;
        new_row("fp64: never cuDNN") << DType::Float64 << false << M::Fma << false;
    }
    void conv_math_rules() {
        FETCH(DType, dtype);
        FETCH(bool, tf32);
        FETCH(ConvMath, math);
        FETCH(bool, allowed);
        CHECK_EQ(conv_math_allowed(math, dtype, tf32), allowed);
    }

    // Each pass keeps, in the heuristic's order, what may run: its fallback list.
    void conv_fallback_order() {
        const std::size_t limit = 64 << 20;
        const std::vector<ConvAlgoPerf> answer = {
            perf(1, ConvMath::TensorOp),                        // TF32 tensor cores
            perf(0, ConvMath::Fma, true, 1024, false),          // status not SUCCESS
            perf(6, ConvMath::Fma, true, std::size_t{1} << 30), // over the workspace limit
            perf(2, ConvMath::Fma, false),                      // non-deterministic
            perf(0, ConvMath::Fma, true, 4096),
            perf(1, ConvMath::Fma, true, 512),
        };
        // Strict float32 forward: FMA entries that ran, non-deterministic ones included.
        auto fwd = usable_conv_algos(answer, ConvPass::Forward, DType::Float32, false, limit);
        CHECK_EQ(fwd.size(), std::size_t(3));
        CHECK_EQ(fwd[0].algo, 2);
        CHECK_EQ(fwd[1].algo, 0);
        CHECK_EQ(fwd[2].algo, 1);
        // Backward passes: deterministic only.
        auto filter =
            usable_conv_algos(answer, ConvPass::BackwardFilter, DType::Float32, false, limit);
        CHECK_EQ(filter.size(), std::size_t(2));
        CHECK_EQ(filter[0].algo, 0);
        CHECK_EQ(filter[1].algo, 1);
        // The workspace covers every algorithm a failure may fall to.
        CHECK_EQ(conv_algos_workspace(filter), std::size_t(4096));
        // With TF32 the tensor-core entry comes first.
        auto tf32 = usable_conv_algos(answer, ConvPass::BackwardData, DType::Float32, true, limit);
        CHECK_EQ(tf32.front().math, ConvMath::TensorOp);
        // TF32 granted by exact operands only: a transform algorithm keeps its FMA entry, not
        // its tensor-core one (its transformed operands would round to TF32); the GEMM-type
        // tensor-core entries stay, in order.
        const std::vector<ConvAlgoPerf> mixed = {
            perf(6, ConvMath::TensorOp), // WINOGRAD on TF32: dropped
            perf(1, ConvMath::TensorOp), // IMPLICIT_PRECOMP_GEMM on TF32
            perf(6, ConvMath::Fma),      // WINOGRAD in float32
            perf(4, ConvMath::Default),  // FFT, cuDNN's choice of math: dropped
        };
        auto exact = usable_conv_algos(mixed, ConvPass::Forward, DType::Float32, true, limit, true);
        CHECK_EQ(exact.size(), std::size_t(2));
        CHECK(exact[0].algo == 1 && exact[0].math == ConvMath::TensorOp);
        CHECK(exact[1].algo == 6 && exact[1].math == ConvMath::Fma);
        CHECK_EQ(usable_conv_algos(mixed, ConvPass::Forward, DType::Float32, true, limit).size(),
                 std::size_t(4)); // the user's TF32: all of them
        CHECK(conv_algo_transforms(ConvPass::BackwardFilter, 2) &&
              !conv_algo_transforms(ConvPass::BackwardFilter, 3) &&
              conv_algo_transforms(ConvPass::BackwardData, 5) &&
              !conv_algo_transforms(ConvPass::BackwardData, 1) &&
              !conv_algo_transforms(ConvPass::Forward, 3));
        // Nothing usable: the pass runs the direct kernel (an empty list), the others do not
        // care.
        CHECK(usable_conv_algos({perf(0, ConvMath::TensorOp)}, ConvPass::Forward, DType::Float32,
                                false, limit)
                  .empty());
    }

    // NOT_SUPPORTED (3xxx) and EXECUTION_FAILED (5xxx) move on; other statuses are errors.
    void conv_statuses_that_try_next() {
        CHECK(conv_status_tries_next(3000));  // CUDNN_STATUS_NOT_SUPPORTED
        CHECK(conv_status_tries_next(3002));  // CUDNN_STATUS_NOT_SUPPORTED_SHAPE
        CHECK(conv_status_tries_next(5000));  // CUDNN_STATUS_EXECUTION_FAILED
        CHECK(conv_status_tries_next(5003));  // CUDNN_STATUS_EXECUTION_FAILED_CUDART
        CHECK(!conv_status_tries_next(0));    // SUCCESS
        CHECK(!conv_status_tries_next(2000)); // BAD_PARAM
        CHECK(!conv_status_tries_next(4000)); // INTERNAL_ERROR
    }

    void conv_choice_names() {
        const ConvAlgoPerf precomp = perf(1, ConvMath::TensorOp);
        CHECK_EQ(conv_choice_text(ConvPass::Forward, &precomp),
                 std::string("cudnn fwd algo IMPLICIT_PRECOMP_GEMM (TENSOR_OP_MATH)"));
        const ConvAlgoPerf tiling = perf(6, ConvMath::Fma);
        CHECK_EQ(conv_choice_text(ConvPass::BackwardFilter, &tiling),
                 std::string("cudnn bwd-filter algo FFT_TILING (FMA_MATH)"));
        CHECK_EQ(conv_choice_text(ConvPass::BackwardData, nullptr),
                 std::string("direct kernel bwd-data"));
        CHECK_EQ(std::string(conv_algo_name(ConvPass::BackwardData, 9)), std::string("?"));
    }

    // The direct backward-filter kernel's taps, summed in its order (strided per thread, then a
    // halving tree), give the plain definition's dw. Small integers keep every sum exact, so
    // only the index arithmetic can make them differ.
    void direct_filter_taps_match_the_definition_data() {
        add_column<std::int64_t>("stride");
        add_column<std::int64_t>("pad");
        add_column<std::int64_t>("kernel");
        new_row("valid 3x3") << 1ll << 0ll << 3ll;
        new_row("same 3x3") << 1ll << 1ll << 3ll;
        new_row("stride 2, pad 1, 4x4") << 2ll << 1ll << 4ll;
    }
    void direct_filter_taps_match_the_definition() {
        FETCH(std::int64_t, stride);
        FETCH(std::int64_t, pad);
        FETCH(std::int64_t, kernel);
        Conv2dArgs g;
        g.batch = 3;
        g.in_h = 7;
        g.in_w = 6;
        g.in_c = 2;
        g.out_c = 3;
        g.kernel_h = g.kernel_w = kernel;
        g.stride_h = g.stride_w = stride;
        g.pad_top = g.pad_left = pad;
        g.out_h = (g.in_h + 2 * pad - kernel) / stride + 1;
        g.out_w = (g.in_w + 2 * pad - kernel) / stride + 1;
        std::vector<double> x(std::size_t(g.batch * g.in_h * g.in_w * g.in_c));
        std::vector<double> dy(std::size_t(g.batch * g.out_h * g.out_w * g.out_c));
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(int(i * 7 % 11) - 5);
        for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = double(int(i * 5 % 9) - 4);
        const std::int64_t weights = g.kernel_h * g.kernel_w * g.in_c * g.out_c;
        const std::int64_t positions = g.batch * g.out_h * g.out_w;
        for (std::int64_t e = 0; e < weights; ++e) {
            // As the kernel: per-thread strided partial sums, then the halving tree.
            const FilterWeight w = filter_weight(g, e);
            std::vector<double> partial(kFilterThreads, 0.0);
            for (int t = 0; t < kFilterThreads; ++t)
                for (std::int64_t p = t; p < positions; p += kFilterThreads) {
                    const FilterTap tap = filter_tap(g, w, p);
                    if (tap.inside)
                        partial[t] += x[std::size_t(tap.x_index)] * dy[std::size_t(tap.dy_index)];
                }
            for (int half = kFilterThreads / 2; half > 0; half /= 2)
                for (int t = 0; t < half; ++t) partial[t] += partial[t + half];
            // The definition, HWIO: dw[kh][kw][ic][oc] = sum x[n][ih][iw][ic] * dy[n][oh][ow][oc].
            const std::int64_t oc = e % g.out_c, ic = e / g.out_c % g.in_c;
            const std::int64_t kw = e / (g.out_c * g.in_c) % g.kernel_w;
            const std::int64_t kh = e / (g.out_c * g.in_c * g.kernel_w);
            double expected = 0;
            for (std::int64_t n = 0; n < g.batch; ++n)
                for (std::int64_t oh = 0; oh < g.out_h; ++oh)
                    for (std::int64_t ow = 0; ow < g.out_w; ++ow) {
                        const std::int64_t ih = oh * stride + kh - pad, iw = ow * stride + kw - pad;
                        if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
                        expected +=
                            x[std::size_t(((n * g.in_h + ih) * g.in_w + iw) * g.in_c + ic)] *
                            dy[std::size_t(((n * g.out_h + oh) * g.out_w + ow) * g.out_c + oc)];
                    }
            CHECK_EQ(partial[0], expected);
        }
    }

    void key_identity() {
        const GemmKey a = key(DType::Float16, DType::Float16, true, Activation::Relu, false);
        GemmKey b = a;
        CHECK(a == b);
        CHECK_EQ(GemmKeyHash{}(a), GemmKeyHash{}(b));
        b.m = 129;
        CHECK(!(a == b));
        CHECK(GemmKeyHash{}(a) != GemmKeyHash{}(b));
        b = a;
        b.c_dtype = DType::Float32;
        CHECK(!(a == b));
        b = a;
        b.tf32 = true;
        CHECK(!(a == b));
        b = a;
        b.fast_bf16 = true;
        CHECK(!(a == b));
        CHECK(GemmKeyHash{}(a) != GemmKeyHash{}(b));
    }

    // gemm_key reads shapes as the CPU engine does and keeps TF32 only for float32 operands.
    void key_from_args() {
        Tensor x{"x", DType::Float16, {32, 100}}, w{"w", DType::Float16, {10, 100}};
        Tensor y{"y", DType::Float16, {32, 10}};
        GemmArgs args;
        args.a = &x;
        args.b = &w;
        args.transpose_b = true;
        args.c = &y;
        const GemmKey k = gemm_key(args, true);
        CHECK_EQ(k.m, 32);
        CHECK_EQ(k.k, 100);
        CHECK_EQ(k.n, 10);
        CHECK(!k.tf32);
        x.dtype = w.dtype = y.dtype = DType::Float32;
        CHECK(gemm_key(args, true).tf32);
        // MX operands: bfloat16 tensor cores for float32 A and B only.
        CHECK(!gemm_key(args, false).fast_bf16);
        args.exact_in_bfloat16 = true;
        CHECK(gemm_key(args, false).fast_bf16);
        CHECK(
            contains(gemm_choice_text(gemm_key(args, false), gemm_fusion(gemm_key(args, false)), 7),
                     "bfloat16 tensor cores"));
        x.dtype = w.dtype = DType::BFloat16;
        CHECK(!gemm_key(args, false).fast_bf16); // already 16-bit: nothing to convert
        // NVFP4's tensor scales: a device alpha in the workspace's first bytes, its own plan.
        Tensor scale{"scale", DType::Float32, {1}};
        const GemmKey plain = gemm_key(args, false);
        args.a_scale = &scale;
        const GemmKey scaled = gemm_key(args, false);
        CHECK(scaled.scaled && !plain.scaled);
        CHECK(!(scaled == plain));
        CHECK_EQ(gemm_workspace_need(scaled, 4096),
                 gemm_workspace_need(plain, 4096) + kGemmScalarBytes);
        CHECK(contains(gemm_choice_text(scaled, gemm_fusion(scaled), 7), "decode scales in alpha"));
    }

    void cudnn_padding_data() {
        add_column<std::int64_t>("in");
        add_column<std::int64_t>("kernel");
        add_column<std::int64_t>("stride");
        add_column<std::int64_t>("pad_top");
        add_column<std::int64_t>("out");
        add_column<bool>("fits");
        new_row("valid 3x3") << 28ll << 3ll << 1ll << 0ll << 26ll << true;
        new_row("same 3x3 (symmetric)") << 28ll << 3ll << 1ll << 1ll << 28ll << true;
        new_row("same 4x4 (one more row below)") << 28ll << 4ll << 1ll << 1ll << 28ll << false;
        new_row("same 3x3 stride 2 (pad below only)") << 28ll << 3ll << 2ll << 0ll << 14ll << false;
        new_row("valid 2x2 stride 2") << 28ll << 2ll << 2ll << 0ll << 14ll << true;
    }
    void cudnn_padding() {
        FETCH(std::int64_t, in);
        FETCH(std::int64_t, kernel);
        FETCH(std::int64_t, stride);
        FETCH(std::int64_t, pad_top);
        FETCH(std::int64_t, out);
        FETCH(bool, fits);
        Conv2dArgs g;
        g.batch = 2;
        g.in_h = g.in_w = in;
        g.in_c = 1;
        g.out_h = g.out_w = out;
        g.out_c = 8;
        g.kernel_h = g.kernel_w = kernel;
        g.stride_h = g.stride_w = stride;
        g.pad_top = g.pad_left = pad_top;
        CHECK_EQ(cudnn_padding_fits(g), fits);
    }

    void conv_key_identity() {
        Conv2dArgs g;
        g.batch = 4;
        g.in_h = g.in_w = 28;
        g.out_h = g.out_w = 26;
        const ConvKey a = conv_key(g, DType::Float32, true);
        CHECK(a.tf32);
        CHECK(!conv_key(g, DType::Float16, true).tf32); // TF32 means nothing for 16-bit data
        ConvKey b = a;
        CHECK(a == b);
        CHECK_EQ(ConvKeyHash{}(a), ConvKeyHash{}(b));
        b.geometry.batch = 5;
        CHECK(!(a == b));
        // Quantised copies holding bfloat16 values only multiply exactly on TF32 tensor cores,
        // with the engine's TF32 switch off (strict float32 policies stay on FMA); the scales
        // are per call, not per plan.
        Conv2dArgs exact = g;
        exact.exact_in_bfloat16 = true;
        CHECK(conv_key(exact, DType::Float32, false).tf32);
        CHECK(conv_key(exact, DType::Float32, false).tf32_exact_only);
        CHECK(!conv_key(exact, DType::Float32, true).tf32_exact_only); // the user asked for TF32
        CHECK(!conv_key(g, DType::Float32, false).tf32);
        CHECK(!conv_key(exact, DType::Float16, false).tf32);
        const Tensor scale;
        exact.a_scale = exact.b_scale = &scale;
        CHECK(!(conv_key(exact, DType::Float32, false) == conv_key(g, DType::Float32, true)));
        CHECK(conv_key(exact, DType::Float32, false) == conv_key(exact, DType::Float32, false));
        CHECK(conv_key(exact, DType::Float32, true) == conv_key(g, DType::Float32, true));
    }

    // Without a usable GPU: auto falls back to the CPU and says so; cuda fails clearly.
    void factory_without_gpu() {
        if (has_gpu()) SKIP_TEST("a GPU is present: the fallback cannot be observed here");
        BackendChoice choice = create_backend("auto");
        CHECK(choice.backend);
        CHECK_EQ(choice.backend->info().id, std::string("cpu"));
        CHECK_MSG(choice.note.find("no usable GPU") != std::string::npos, choice.note.c_str());
        CHECK_MSG(choice.note.find("using the CPU engine") != std::string::npos,
                  choice.note.c_str());
        for (const char* device : {"cuda", "cuda:0", "cuda:3"}) {
            try {
                create_backend(device);
                FAIL_TEST("create_backend(cuda) succeeded without a GPU");
            } catch (const Error& err) {
                CHECK_EQ(err.kind(), ErrorKind::Device);
                const std::string message = err.what();
                CHECK_MSG(message.find(device) != std::string::npos, err.what());
                CHECK_MSG(message.find("--device cpu") != std::string::npos, err.what());
            }
        }
    }

    void factory_rejects_bad_device_strings() {
        for (const char* device : {"gpu", "cuda:", "cuda:x", "cuda:-1", "CPU"}) {
            try {
                create_backend(device);
                FAIL_TEST(device);
            } catch (const Error& err) {
                CHECK_EQ(err.kind(), ErrorKind::InvalidArgument);
            }
        }
    }
};

MANTISSA_TEST_MAIN(TestCudaKeys, fusion, retry_without_lt_epilogue,
                   relu_not_fused_when_nan_must_propagate,
                   workspace_reserves_the_fallback_accumulator, impossible_size_is_out_of_memory,
                   choice_text, padding_of_a_ten_unit_layer, padding_not_applied, conv_math_rules,
                   conv_fallback_order, conv_statuses_that_try_next, conv_choice_names,
                   direct_filter_taps_match_the_definition, key_identity, key_from_args,
                   cudnn_padding, conv_key_identity, factory_without_gpu,
                   factory_rejects_bad_device_strings)
