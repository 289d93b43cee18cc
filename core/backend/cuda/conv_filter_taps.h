// The index arithmetic of the direct backward-filter kernel (conv2d_direct.cu), shared with the
// host so its order and bounds are tested without a GPU (tst_cuda_keys): which weight a block
// owns, which x and dy elements a batch·h·w position pairs for it, and the fixed summation order
// (thread t of kFilterThreads takes positions t, t + kFilterThreads, ...; then a halving tree).
// Plain C++: nvcc sees the functions as __host__ __device__, other compilers as ordinary ones.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define MANTISSA_HOST_DEVICE __host__ __device__
#else
#define MANTISSA_HOST_DEVICE
#endif

namespace mantissa::cuda {

constexpr int kFilterThreads = 256; // threads per weight; a power of two (the tree halves it)

struct FilterWeight { // an HWIO weight's coordinates
    std::int64_t kh = 0, kw = 0, ic = 0, oc = 0;
};

struct FilterTap { // what a position contributes to a weight: x[x_index] * dy[dy_index]
    bool inside = false;
    std::int64_t x_index = 0, dy_index = 0;
};

// G: any geometry with Conv2dArgs' field names (Conv2dArgs on the host, ConvGeom in kernels).
template <class G>
MANTISSA_HOST_DEVICE inline FilterWeight filter_weight(const G& g, std::int64_t e) {
    FilterWeight w;
    w.oc = e % g.out_c;
    std::int64_t rest = e / g.out_c;
    w.ic = rest % g.in_c;
    rest /= g.in_c;
    w.kw = rest % g.kernel_w;
    w.kh = rest / g.kernel_w;
    return w;
}

// Position p runs over batch·out_h·out_w in NHWC order (n, oh, ow).
template <class G>
MANTISSA_HOST_DEVICE inline FilterTap filter_tap(const G& g, const FilterWeight& w,
                                                 std::int64_t p) {
    FilterTap t;
    const std::int64_t ow = p % g.out_w;
    const std::int64_t rest = p / g.out_w;
    const std::int64_t oh = rest % g.out_h, n = rest / g.out_h;
    const std::int64_t ih = oh * g.stride_h + w.kh - g.pad_top;
    const std::int64_t iw = ow * g.stride_w + w.kw - g.pad_left;
    if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) return t;
    t.inside = true;
    t.x_index = ((n * g.in_h + ih) * g.in_w + iw) * g.in_c + w.ic;
    t.dy_index = p * g.out_c + w.oc;
    return t;
}

} // namespace mantissa::cuda
