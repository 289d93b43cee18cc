// The FP8 GEMM rules (see fp8_gemm.h).
#include "core/backend/fp8_gemm.h"

#include <string>

#include "core/error.h"
#include "core/numeric/tensor_quant.h"

namespace mantissa {

namespace {

[[noreturn]] void refuse(const std::string& rule, const GemmArgs& args,
                         const char* kind = "gemm (FP8): ") {
    std::string what = kind + rule;
    if (args.a && args.b && args.c)
        what += "; got A " + std::string(dtype_name(args.a->dtype)) + shape_str(args.a->shape) +
                (args.transpose_a ? "^T" : "") + " · B " + std::string(dtype_name(args.b->dtype)) +
                shape_str(args.b->shape) + (args.transpose_b ? "^T" : "") + " -> C " +
                std::string(dtype_name(args.c->dtype)) + shape_str(args.c->shape);
    throw Error(ErrorKind::InvalidArgument, what);
}

void check_scale(const Tensor* scale, const char* name, const GemmArgs& args,
                 const char* kind = "gemm (FP8): ") {
    if (!scale) return;
    if (scale->dtype != DType::Float32 || scale->numel() != 1)
        refuse(std::string(name) +
                   " must be a one-element float32 tensor (the decode scale), not " +
                   std::string(dtype_name(scale->dtype)) + shape_str(scale->shape),
               args, kind);
}

} // namespace

bool is_fp8(DType dtype) {
    return dtype == DType::Float8E4M3 || dtype == DType::Float8E5M2;
}

bool fp8_gemm_has_epilogue(const GemmArgs& args) {
    return args.bias || args.pre_activation || args.epilogue != Activation::Linear;
}

bool uses_fp8_gemm(const GemmArgs& args) {
    return (args.a && is_fp8(args.a->dtype)) || (args.b && is_fp8(args.b->dtype));
}

bool uses_scaled_gemm(const GemmArgs& args) {
    return (args.a_scale || args.b_scale) && !uses_fp8_gemm(args);
}

void check_scaled_gemm(const GemmArgs& args) {
    constexpr const char* kind = "gemm (scaled): ";
    if (!args.a || !args.b || !args.c) refuse("A, B and C must all be given", args, kind);
    const DType t = args.a->dtype;
    if (t != args.b->dtype || (t != DType::Float32 && t != DType::Float16 && t != DType::BFloat16))
        refuse("decode scales on 16- or 32-bit operands need A and B in one of float32, float16 "
               "or bfloat16",
               args, kind);
    check_scale(args.a_scale, "a_scale", args, kind);
    check_scale(args.b_scale, "b_scale", args, kind);
    if (args.accumulate)
        refuse("no accumulate (C += ...) with decode scales: the scales would multiply C too", args,
               kind);
}

bool uses_scaled_conv(const Conv2dArgs& args) {
    return args.a_scale || args.b_scale;
}

void check_scaled_conv(const Conv2dArgs& args, const Tensor* dbias, const char* op) {
    for (const Tensor* scale : {args.a_scale, args.b_scale})
        if (scale && (scale->dtype != DType::Float32 || scale->numel() != 1))
            throw Error(ErrorKind::InvalidArgument,
                        std::string(op) + ": '" + scale->name +
                            "' must be a one-element float32 tensor (a tensor scale), not " +
                            std::string(dtype_name(scale->dtype)) + shape_str(scale->shape));
    if (dbias && uses_scaled_conv(args))
        throw Error(ErrorKind::InvalidArgument,
                    std::string(op) + ": no bias gradient with tensor scales (it would sum the "
                                      "unscaled output gradient); run bias_grad on dy itself");
}

void check_fp8_gemm(const GemmArgs& args) {
    if (!args.a || !args.b || !args.c) refuse("A, B and C must all be given", args);
    if (!is_fp8(args.a->dtype) || !is_fp8(args.b->dtype))
        refuse("A and B must both be float8_e4m3 / float8_e5m2 codes when either is", args);
    if (args.a->dtype == DType::Float8E5M2 && args.b->dtype == DType::Float8E5M2)
        refuse("float8_e5m2 · float8_e5m2 is not offered (cuBLASLt has no such kernel); quantise "
               "one side to float8_e4m3",
               args);
    if (args.c->dtype != DType::Float32 && args.c->dtype != DType::BFloat16)
        refuse("C must be float32 or bfloat16", args);
    check_scale(args.a_scale, "a_scale", args);
    check_scale(args.b_scale, "b_scale", args);
    // The epilogue runs after the decode scales, as cuBLASLt's does: act(scale · A·B + bias).
    if (args.epilogue == Activation::Softmax)
        refuse("no softmax epilogue (a row operation): run softmax as its own step", args);
    if (args.accumulate) refuse("no accumulate (C += ...): the FP8 product writes C", args);
}

void check_fp8_gemm_tn(const GemmArgs& args) {
    check_fp8_gemm(args);
    if (args.transpose_a || !args.transpose_b)
        refuse("cuBLASLt's FP8 kernels take only the \"TN\" layout: C (m, n) = A (m, k) · "
               "B (n, k)^T (transpose_a = false, transpose_b = true)",
               args);
    if (args.a->cols() != args.b->cols() || args.c->rows() != args.a->rows() ||
        args.c->cols() != args.b->rows())
        refuse("C (m, n) = A (m, k) · B (n, k)^T: the sizes do not fit", args);
}

Fp8QuantShape check_quantize_fp8(const Fp8QuantArgs& a) {
    auto require = [](bool ok, const std::string& message) {
        if (!ok) throw Error(ErrorKind::Internal, "quantize_fp8: " + message);
    };
    auto describe = [](const Tensor& t) {
        return "'" + t.name + "' " + std::string(dtype_name(t.dtype)) + shape_str(t.shape);
    };
    require(a.spec && a.src && a.scale_inv && a.stats && (a.codes || a.codes_t),
            "missing argument");
    const Tensor& src = *a.src;
    require(is_floating(src.dtype), "tensor " + describe(src) + " must have a floating dtype");
    require(a.spec->scaling != QuantScaling::Block && !a.spec->hadamard,
            "only per-tensor FP8 (current or delayed scaling) makes codes");
    require(a.spec->element == ElementFormat::Float8E4M3 ||
                a.spec->element == ElementFormat::Float8E5M2,
            "the element format must be float8_e4m3 or float8_e5m2");
    const DType code =
        a.spec->element == ElementFormat::Float8E5M2 ? DType::Float8E5M2 : DType::Float8E4M3;
    Fp8QuantShape v;
    v.rows = src.rows();
    v.cols = v.rows ? src.numel() / v.rows : 0;
    if (a.codes)
        require(a.codes->dtype == code && a.codes->rows() == v.rows &&
                    a.codes->numel() == src.numel(),
                "codes " + describe(*a.codes) + " must be " + std::string(dtype_name(code)) +
                    " shaped like " + describe(src));
    if (a.codes_t)
        require(a.codes_t->dtype == code && a.codes_t->rows() == v.cols &&
                    a.codes_t->numel() == src.numel(),
                "codes_t " + describe(*a.codes_t) + " must be " + std::string(dtype_name(code)) +
                    " (" + std::to_string(v.cols) + ", " + std::to_string(v.rows) + ")");
    require(a.scale_inv->dtype == DType::Float32 && a.scale_inv->numel() == 1,
            "scale_inv " + describe(*a.scale_inv) + " must be one float32");
    require(a.stats->dtype == DType::Float64 && a.stats->numel() == kQuantStatsValues,
            "stats " + describe(*a.stats) + " must be float64 (6)");
    const std::size_t state_floats = quant_state_floats(*a.spec);
    require(state_floats == 0 || (a.state && a.state->dtype == DType::Float32 &&
                                  static_cast<std::size_t>(a.state->numel()) == state_floats),
            "delayed scaling needs a float32 state of " + std::to_string(state_floats));
    return v;
}

} // namespace mantissa
