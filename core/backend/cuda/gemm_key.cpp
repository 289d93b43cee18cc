// The GEMM plan key, its hash and the fusion decision (see gemm_key.h).
// Kept free of CUDA headers so the decision is tested where no GPU or toolkit exists.
#include "core/backend/cuda/gemm_key.h"

#include <algorithm>
#include <functional>

#include "core/backend/fp8_gemm.h"

namespace mantissa::cuda {

namespace {

bool is_16bit(DType dtype) {
    return dtype == DType::Float16 || dtype == DType::BFloat16;
}

void mix(std::size_t& seed, std::size_t value) {
    seed ^= value + 0x9E3779B97F4A7C15ull + (seed << 6) + (seed >> 2);
}

} // namespace

std::size_t GemmKeyHash::operator()(const GemmKey& key) const {
    std::size_t seed = 0;
    const std::hash<std::int64_t> h;
    mix(seed, h(key.m));
    mix(seed, h(key.n));
    mix(seed, h(key.k));
    mix(seed, static_cast<std::size_t>(key.transpose_a) | (std::size_t(key.transpose_b) << 1) |
                  (std::size_t(key.has_bias) << 2) | (std::size_t(key.has_pre) << 3) |
                  (std::size_t(key.accumulate) << 4) | (std::size_t(key.tf32) << 5) |
                  (std::size_t(key.allow_lt_epilogue) << 6) |
                  (std::size_t(key.propagate_nan) << 7) | (std::size_t(key.fast_bf16) << 8) |
                  (std::size_t(key.scaled) << 9));
    mix(seed, static_cast<std::size_t>(key.ab_dtype) | (std::size_t(key.c_dtype) << 8) |
                  (std::size_t(key.bias_dtype) << 16) | (std::size_t(key.pre_dtype) << 24) |
                  (std::size_t(key.epilogue) << 32) | (std::size_t(key.b_dtype) << 40));
    return seed;
}

GemmKey gemm_key(const GemmArgs& args, bool tf32, bool propagate_nan) {
    GemmKey key;
    const Tensor& a = *args.a;
    const Tensor& b = *args.b;
    key.m = args.transpose_a ? a.cols() : a.rows();
    key.k = args.transpose_a ? a.rows() : a.cols();
    key.n = args.transpose_b ? b.rows() : b.cols();
    key.transpose_a = args.transpose_a;
    key.transpose_b = args.transpose_b;
    key.ab_dtype = a.dtype;
    key.b_dtype = b.dtype;
    key.c_dtype = args.c->dtype;
    key.has_bias = args.bias != nullptr;
    if (args.bias) key.bias_dtype = args.bias->dtype;
    key.epilogue = args.epilogue;
    key.has_pre = args.pre_activation != nullptr;
    if (args.pre_activation) key.pre_dtype = args.pre_activation->dtype;
    key.accumulate = args.accumulate;
    key.tf32 = tf32 && a.dtype == DType::Float32;
    key.fast_bf16 =
        args.exact_in_bfloat16 && a.dtype == DType::Float32 && b.dtype == DType::Float32;
    key.propagate_nan = propagate_nan;
    key.scaled = uses_scaled_gemm(args);
    return key;
}

GemmPadding gemm_padding(const GemmKey& key) {
    GemmPadding none; // the call's own sizes
    none.lt_m = key.m;
    none.lt_n = key.n;
    none.lt_k = key.k;
    const bool applies = is_16bit(key.ab_dtype) && key.b_dtype == key.ab_dtype && !key.accumulate &&
                         key.epilogue != Activation::Softmax && key.m > 0 && key.n > 0 &&
                         key.k > 0 &&
                         double(key.m) * double(key.n) * double(key.k) >= double(kPadMinWork);
    if (!applies) return none;
    auto up8 = [](std::int64_t v) { return (v + 7) / 8 * 8; };
    auto aligned = [](std::int64_t elements) {
        return (static_cast<std::size_t>(elements) * 2 + 255) / 256 * 256;
    };
    // Row lengths (row-major storage): A (m, k) or, transposed, (k, m); B (k, n) or (n, k); C
    // (m, n). A dimension that is some matrix's row length is padded for all of them.
    const bool pad_m = key.transpose_a && key.m % 8 != 0;
    const bool pad_k = (!key.transpose_a || key.transpose_b) && key.k % 8 != 0;
    const bool pad_n = key.n % 8 != 0; // B's rows when not transposed, C's always
    if (!pad_m && !pad_k && !pad_n) return none;
    GemmPadding p;
    p.lt_m = pad_m ? up8(key.m) : key.m;
    p.lt_n = pad_n ? up8(key.n) : key.n;
    p.lt_k = pad_k ? up8(key.k) : key.k;
    p.pad_a = p.lt_m != key.m || p.lt_k != key.k;
    p.pad_b = p.lt_n != key.n || p.lt_k != key.k;
    p.pad_c = p.lt_m != key.m || p.lt_n != key.n;
    p.a_bytes = p.pad_a ? aligned(p.lt_m * p.lt_k) : 0;
    p.b_bytes = p.pad_b ? aligned(p.lt_n * p.lt_k) : 0;
    const std::size_t acc_bytes = p.pad_c ? static_cast<std::size_t>(p.lt_m * p.lt_n) * 4 : 0;
    return p.a_bytes + p.b_bytes + acc_bytes > kPadMaxBytes ? none : p;
}

GemmFusion gemm_fusion(const GemmKey& key) {
    GemmFusion f;
    f.pad = gemm_padding(key);
    f.compute = key.ab_dtype == DType::Float64 ? DType::Float64 : DType::Float32;
    const bool f64 = f.compute == DType::Float64;
    if (f.pad.pad_c) {
        // The padded product goes to a float32 accumulator whose first n columns of the first m
        // rows the kernel epilogue rounds into C, with the bias and activation.
        f.kernel_epilogue = true;
        f.acc_in_workspace = true;
        f.lt_output = f.compute;
        const std::size_t bytes =
            static_cast<std::size_t>(f.pad.lt_m * f.pad.lt_n) * dtype_size(f.compute);
        f.acc_bytes = (bytes + 255) / 256 * 256;
        return f;
    }
    // The type combinations cuBLASLt multiplies (compute 32F / 64F): A = B = C, or 16-bit A/B
    // with a float32 C.
    const bool lt_types = (key.c_dtype == key.ab_dtype &&
                           (key.ab_dtype == DType::Float64 || key.ab_dtype == DType::Float32 ||
                            is_16bit(key.ab_dtype))) ||
                          (is_16bit(key.ab_dtype) && key.c_dtype == DType::Float32);
    const bool needs_epilogue = key.has_bias || key.has_pre || key.epilogue != Activation::Linear;
    // The bias cuBLASLt adds must have C's type (the float32 accumulator holds it exactly).
    const bool bias_ok = !key.has_bias || key.bias_dtype == key.c_dtype;
    // cublasLt.h documents CUBLASLT_EPILOGUE_RELU as "x:=max(x, 0)": a max() may return 0 for a
    // NaN where the CPU engine's x < 0 ? 0 : x keeps it. Where NaN must propagate (pure 16-bit
    // policies, where overflow to inf/NaN is common and no loss scaling skips the step, and the
    // parity checks) ReLU runs in gemm_epilogue.cu instead.
    const bool relu_ok = key.epilogue == Activation::Relu && !key.propagate_nan;
    const bool fusable_act =
        key.epilogue == Activation::Linear || relu_ok || key.epilogue == Activation::Gelu;
    // GELU's aux output (its input after the bias) needs C's dtype and a leading dimension
    // divisible by 8; no other epilogue stores the pre-activation.
    const bool pre_ok = !key.has_pre || (key.epilogue == Activation::Gelu &&
                                         key.pre_dtype == key.c_dtype && key.n % 8 == 0);
    if (lt_types && !f64 && key.allow_lt_epilogue && bias_ok && fusable_act && pre_ok) {
        f.lt_output = key.c_dtype;
        switch (key.epilogue) {
        case Activation::Relu:
            f.lt_epilogue = key.has_bias ? LtEpilogue::ReluBias : LtEpilogue::Relu;
            break;
        case Activation::Gelu:
            if (key.has_pre)
                f.lt_epilogue = key.has_bias ? LtEpilogue::GeluAuxBias : LtEpilogue::GeluAux;
            else
                f.lt_epilogue = key.has_bias ? LtEpilogue::GeluBias : LtEpilogue::Gelu;
            break;
        default:
            f.lt_epilogue = key.has_bias ? LtEpilogue::Bias : LtEpilogue::Default;
            break;
        }
        return f;
    }
    if (lt_types && !needs_epilogue) { // a plain product (float64 included)
        f.lt_output = key.c_dtype;
        return f;
    }
    // The kernel epilogue: the product in the compute type, then one rounding into C. In place
    // when C holds the compute type; else through an accumulator in the workspace.
    f.kernel_epilogue = true;
    f.softmax_after = key.epilogue == Activation::Softmax;
    if (lt_types && key.c_dtype == f.compute) {
        f.lt_output = key.c_dtype;
    } else {
        f.acc_in_workspace = true;
        f.lt_output = f.compute;
        const std::size_t bytes = static_cast<std::size_t>(key.m * key.n) * dtype_size(f.compute);
        f.acc_bytes = (bytes + 255) / 256 * 256;
    }
    return f;
}

const char* lt_epilogue_enum_name(LtEpilogue epilogue) {
    switch (epilogue) {
    case LtEpilogue::Default:
        return "DEFAULT";
    case LtEpilogue::Bias:
        return "BIAS";
    case LtEpilogue::Relu:
        return "RELU";
    case LtEpilogue::ReluBias:
        return "RELU_BIAS";
    case LtEpilogue::Gelu:
        return "GELU";
    case LtEpilogue::GeluBias:
        return "GELU_BIAS";
    case LtEpilogue::GeluAux:
        return "GELU_AUX";
    case LtEpilogue::GeluAuxBias:
        return "GELU_AUX_BIAS";
    }
    return "?";
}

std::size_t gemm_workspace_need(const GemmKey& key, std::size_t lt_scratch) {
    GemmKey plain = key;
    plain.allow_lt_epilogue = false;
    const GemmPadding pad = gemm_padding(key);
    return (key.scaled ? kGemmScalarBytes : 0) +
           std::max(gemm_fusion(key).acc_bytes, gemm_fusion(plain).acc_bytes) + pad.a_bytes +
           pad.b_bytes + lt_scratch;
}

std::string gemm_size_text(const GemmKey& key) {
    return "(" + std::to_string(key.m) + " x " + std::to_string(key.k) + ") · (" +
           std::to_string(key.k) + " x " + std::to_string(key.n) + ") " +
           std::string(dtype_name(key.ab_dtype)) + " -> " + std::string(dtype_name(key.c_dtype));
}

std::optional<std::string> gemm_too_large(const GemmKey& key, std::size_t device_bytes,
                                          const std::string& device) {
    // In double: a size that is impossible may overflow 64-bit products of its dimensions.
    const double m = double(key.m), n = double(key.n), k = double(key.k);
    GemmKey plain = key;
    plain.allow_lt_epilogue = false;
    const GemmPadding pad = gemm_padding(key);
    const double bytes = (m * k + k * n) * double(dtype_size(key.ab_dtype)) +
                         m * n * double(dtype_size(key.c_dtype)) +
                         double(gemm_fusion(plain).acc_bytes) + double(pad.a_bytes) +
                         double(pad.b_bytes);
    if (bytes <= double(device_bytes)) return std::nullopt;
    const auto mib = [](double b) { return std::to_string(static_cast<long long>(b / 1048576.0)); };
    return "gemm " + gemm_size_text(key) + " needs " + mib(bytes) +
           " MiB for its operands alone, more than the " + mib(double(device_bytes)) + " MiB of " +
           device +
           "; cuBLASLt has no algorithm for it. Reduce the batch size or the layer's width";
}

std::string gemm_choice_text(const GemmKey& key, const GemmFusion& fusion, int algo_id) {
    std::string text = "cublasLt epilogue " +
                       std::string(lt_epilogue_enum_name(fusion.lt_epilogue)) + " algo " +
                       std::to_string(algo_id);
    if (key.fast_bf16) text += " (bfloat16 tensor cores: MX operands)";
    if (key.scaled) text += " (decode scales in alpha)";
    if (fusion.pad.any())
        text += " (padded to " + std::to_string(fusion.pad.lt_m) + " x " +
                std::to_string(fusion.pad.lt_k) + " · " + std::to_string(fusion.pad.lt_k) + " x " +
                std::to_string(fusion.pad.lt_n) + ")";
    if (fusion.kernel_epilogue) {
        text += std::string(" + kernel epilogue ") + activation_name(key.epilogue);
        if (key.has_bias) text += "+bias";
        if (fusion.acc_in_workspace) text += " (accumulator in workspace)";
    }
    if (!key.allow_lt_epilogue) text += " (fused algorithm unavailable)";
    return text;
}

const char* lt_epilogue_name(LtEpilogue epilogue) {
    switch (epilogue) {
    case LtEpilogue::Default:
        return "default";
    case LtEpilogue::Bias:
        return "bias";
    case LtEpilogue::Relu:
        return "relu";
    case LtEpilogue::ReluBias:
        return "relu+bias";
    case LtEpilogue::Gelu:
        return "gelu";
    case LtEpilogue::GeluBias:
        return "gelu+bias";
    case LtEpilogue::GeluAux:
        return "gelu_aux";
    case LtEpilogue::GeluAuxBias:
        return "gelu_aux+bias";
    }
    return "?";
}

} // namespace mantissa::cuda
