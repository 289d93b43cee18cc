// The convolution plan key, its hash, and the padding test for cuDNN (see conv_key.h).
// No CUDA headers here: tests/tst_cuda_keys.cpp runs it on CPU-only machines.
#include "core/backend/cuda/conv_key.h"

#include <functional>

namespace mantissa::cuda {

namespace {

std::int64_t fields(const Conv2dArgs& g, int i) {
    const std::int64_t values[] = {g.batch,    g.in_h,    g.in_w,     g.in_c,     g.out_h,
                                   g.out_w,    g.out_c,   g.kernel_h, g.kernel_w, g.stride_h,
                                   g.stride_w, g.pad_top, g.pad_left};
    return values[i];
}
constexpr int kFields = 13;

} // namespace

bool ConvKey::operator==(const ConvKey& other) const {
    for (int i = 0; i < kFields; ++i)
        if (fields(geometry, i) != fields(other.geometry, i)) return false;
    return dtype == other.dtype && tf32 == other.tf32 && tf32_exact_only == other.tf32_exact_only;
}

std::size_t ConvKeyHash::operator()(const ConvKey& key) const {
    std::size_t seed = static_cast<std::size_t>(key.dtype) * 4 + (key.tf32 ? 1 : 0) +
                       (key.tf32_exact_only ? 2 : 0);
    const std::hash<std::int64_t> h;
    for (int i = 0; i < kFields; ++i)
        seed ^= h(fields(key.geometry, i)) + 0x9E3779B97F4A7C15ull + (seed << 6) + (seed >> 2);
    return seed;
}

ConvKey conv_key(const Conv2dArgs& args, DType dtype, bool tf32) {
    // Operands that hold only bfloat16 values (quantised copies) multiply exactly on TF32.
    const bool float32 = dtype == DType::Float32;
    return {args, dtype, (tf32 || args.exact_in_bfloat16) && float32,
            args.exact_in_bfloat16 && !tf32 && float32};
}

bool cudnn_padding_fits(const Conv2dArgs& g) {
    if (g.stride_h < 1 || g.stride_w < 1 || g.pad_top < 0 || g.pad_left < 0) return false;
    const std::int64_t out_h = (g.in_h + 2 * g.pad_top - g.kernel_h) / g.stride_h + 1;
    const std::int64_t out_w = (g.in_w + 2 * g.pad_left - g.kernel_w) / g.stride_w + 1;
    return out_h == g.out_h && out_w == g.out_w;
}

} // namespace mantissa::cuda
