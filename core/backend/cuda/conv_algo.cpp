// cuDNN algorithm filtering, fallback statuses and names (see conv_algo.h). No CUDA headers: the
// enum values below are cuDNN 9's (cudnn_ops.h, cudnn_graph.h), checked against the real enums
// by static_asserts in cuda_conv2d.cpp where the headers are available.
#include "core/backend/cuda/conv_algo.h"

#include <algorithm>

namespace mantissa::cuda {

bool conv_math_allowed(ConvMath math, DType dtype, bool tf32) {
    switch (dtype) {
    case DType::Float32:
        if (!tf32) return math == ConvMath::Fma;
        return math != ConvMath::TensorOpAllowConversion;
    case DType::Float16:
        return true;
    case DType::BFloat16:
        return math != ConvMath::TensorOpAllowConversion;
    default:
        return false;
    }
}

bool conv_algo_transforms(ConvPass pass, int algo) {
    switch (pass) {
    case ConvPass::Forward: // FFT, FFT_TILING, WINOGRAD, WINOGRAD_NONFUSED
        return algo >= 4 && algo <= 7;
    case ConvPass::BackwardData: // FFT, FFT_TILING, WINOGRAD, WINOGRAD_NONFUSED
        return algo >= 2 && algo <= 5;
    case ConvPass::BackwardFilter: // FFT, WINOGRAD, WINOGRAD_NONFUSED, FFT_TILING (not ALGO_3)
        return algo == 2 || (algo >= 4 && algo <= 6);
    }
    return true;
}

std::vector<ConvAlgoPerf> usable_conv_algos(const std::vector<ConvAlgoPerf>& perf, ConvPass pass,
                                            DType dtype, bool tf32, std::size_t workspace_limit,
                                            bool tf32_exact_only) {
    std::vector<ConvAlgoPerf> out;
    for (const ConvAlgoPerf& p : perf) {
        if (!p.status_ok || p.memory > workspace_limit || !conv_math_allowed(p.math, dtype, tf32))
            continue;
        if (pass != ConvPass::Forward && !p.deterministic) continue;
        if (tf32_exact_only && p.math != ConvMath::Fma && conv_algo_transforms(pass, p.algo))
            continue;
        // An algorithm listed twice (two math types) stays twice: one may fail where the other
        // runs.
        out.push_back(p);
    }
    return out;
}

bool conv_status_tries_next(int cudnn_status) {
    const int category = cudnn_status / 1000 * 1000; // CUDNN_STATUS_CATEGORY
    return category == 3000 || category == 5000;
}

std::size_t conv_algos_workspace(const std::vector<ConvAlgoPerf>& algos) {
    std::size_t bytes = 0;
    for (const ConvAlgoPerf& a : algos) bytes = std::max(bytes, a.memory);
    return (bytes + 255) / 256 * 256;
}

const char* conv_pass_name(ConvPass pass) {
    switch (pass) {
    case ConvPass::Forward:
        return "fwd";
    case ConvPass::BackwardData:
        return "bwd-data";
    case ConvPass::BackwardFilter:
        return "bwd-filter";
    }
    return "?";
}

const char* conv_algo_name(ConvPass pass, int algo) {
    // cudnnConvolutionFwdAlgo_t, cudnnConvolutionBwdDataAlgo_t, cudnnConvolutionBwdFilterAlgo_t.
    static const char* const fwd[] = {
        "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
        "WINOGRAD",      "WINOGRAD_NONFUSED"};
    static const char* const data[] = {"ALGO_0",     "ALGO_1",   "FFT",
                                       "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    static const char* const filter[] = {
        "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
    const auto pick = [algo](const char* const* names, int count) {
        return algo >= 0 && algo < count ? names[algo] : "?";
    };
    switch (pass) {
    case ConvPass::Forward:
        return pick(fwd, 8);
    case ConvPass::BackwardData:
        return pick(data, 6);
    case ConvPass::BackwardFilter:
        return pick(filter, 7);
    }
    return "?";
}

const char* conv_math_name(ConvMath math) {
    switch (math) {
    case ConvMath::Default:
        return "DEFAULT_MATH";
    case ConvMath::TensorOp:
        return "TENSOR_OP_MATH";
    case ConvMath::TensorOpAllowConversion:
        return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case ConvMath::Fma:
        return "FMA_MATH";
    }
    return "?";
}

std::string conv_choice_text(ConvPass pass, const ConvAlgoPerf* algo) {
    if (!algo) return std::string("direct kernel ") + conv_pass_name(pass);
    return std::string("cudnn ") + conv_pass_name(pass) + " algo " +
           conv_algo_name(pass, algo->algo) + " (" + conv_math_name(algo->math) + ")";
}

} // namespace mantissa::cuda
