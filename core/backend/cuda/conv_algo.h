// Which cuDNN algorithms a convolution pass may use and in what order it falls back: the math
// types each dtype accepts, the heuristic's list filtered to what may run, the statuses that send
// a pass on to the next algorithm, and the names last_choice() reports. Plain C++ without CUDA
// types (the enums mirror cuDNN's numbers), so the rules are tested where no GPU or toolkit is.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/numeric/dtype.h"

namespace mantissa::cuda {

enum class ConvPass { Forward, BackwardData, BackwardFilter };

// cudnnMathType_t's values as cudnn_graph.h (cuDNN 9) numbers them, so a static_cast converts.
enum class ConvMath : int { Default = 0, TensorOp = 1, TensorOpAllowConversion = 2, Fma = 3 };

// One entry of cudnnGetConvolution*Algorithm_v7's answer (cudnnConvolution*AlgoPerf_t).
struct ConvAlgoPerf {
    int algo = 0;               // cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
    bool status_ok = false;     // perf.status == CUDNN_STATUS_SUCCESS
    std::size_t memory = 0;     // perf.memory: workspace bytes
    bool deterministic = false; // perf.determinism == CUDNN_DETERMINISTIC
    ConvMath math = ConvMath::Default;
};

// Whether an algorithm with this math type computes what the dtype policy promises:
// - strict float32 (TF32 off): CUDNN_FMA_MATH only; CUDNN_DEFAULT_MATH lets cuDNN use TF32
//   tensor cores on Ampere and later, and TENSOR_OP_MATH asks for them;
// - float32 with TF32: anything but TENSOR_OP_MATH_ALLOW_CONVERSION, which converts float32
//   data down to float16;
// - float16: any (its data is float16 already); bfloat16: not ALLOW_CONVERSION (a bfloat16 value
//   converted to float16 would lose its range);
// - float64 never reaches cuDNN here (the direct kernels run it): nothing is allowed.
bool conv_math_allowed(ConvMath math, DType dtype, bool tf32);

// Whether an algorithm multiplies transformed operands (FFT, FFT_TILING, WINOGRAD,
// WINOGRAD_NONFUSED) rather than the operands themselves (the GEMM-type ones).
bool conv_algo_transforms(ConvPass pass, int algo);

// The heuristic's answers a pass may run, in the heuristic's order (fastest first): status
// SUCCESS, within `workspace_limit`, an allowed math type, and for the backward passes
// deterministic, so a seed gives the same run twice. Empty: the pass runs the direct kernel.
// `tf32_exact_only`: TF32 comes from the operands (Conv2dArgs::exact_in_bfloat16: values TF32
// multiplies exactly), not from the engine's switch, so tensor-core entries of the transform
// algorithms are dropped: their transformed operands are no longer such values and would round
// to TF32's 10 bits. Their FMA entries stay, as under strict float32.
std::vector<ConvAlgoPerf> usable_conv_algos(const std::vector<ConvAlgoPerf>& perf, ConvPass pass,
                                            DType dtype, bool tf32, std::size_t workspace_limit,
                                            bool tf32_exact_only = false);

// Whether a cuDNN status returned by an execution sends the pass on to its next algorithm (and
// at the end of the list to the direct kernel): the NOT_SUPPORTED (3xxx) and EXECUTION_FAILED
// (5xxx) categories of cudnnStatus_t (cudnn_graph.h, CUDNN_STATUS_CATEGORY), as PyTorch's v7
// path moves on. Anything else (bad parameters, allocation failure) is an error to report.
bool conv_status_tries_next(int cudnn_status);

// The workspace a pass's fallback list needs: the largest of its algorithms' (256-byte aligned).
std::size_t conv_algos_workspace(const std::vector<ConvAlgoPerf>& algos);

const char* conv_pass_name(ConvPass pass); // "fwd", "bwd-data", "bwd-filter"
// cuDNN's algorithm name without its prefix: "IMPLICIT_PRECOMP_GEMM", "ALGO_1", "WINOGRAD".
const char* conv_algo_name(ConvPass pass, int algo);
const char* conv_math_name(ConvMath math); // "FMA_MATH", "TENSOR_OP_MATH", ...
// For last_choice(): "cudnn fwd algo IMPLICIT_PRECOMP_GEMM (TENSOR_OP_MATH)", or
// "direct kernel bwd-filter" when the pass runs conv2d_direct.cu.
std::string conv_choice_text(ConvPass pass, const ConvAlgoPerf* algo);

} // namespace mantissa::cuda
