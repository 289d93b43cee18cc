// CPU convolution (NHWC activations, HWIO filters): im2col into the workspace + one Eigen GEMM.
// Emulated 16/8-bit operands are widened to float32 exactly, computed in float32, rounded once.
// Tensor scales (Conv2dArgs::a_scale, b_scale) multiply a pass's finished sums, before the bias.
#include "core/backend/cpu/eigen.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cpu/cpu_kernels.h"
#include "core/backend/fp8_gemm.h"
#include "core/backend/tensor_scales.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/tensor/shape.h"

// Loops split over the OpenMP threads only when there is enough work to repay waking them.
#if defined(_OPENMP)
#define MANTISSA_PRAGMA(x) _Pragma(#x)
#define MANTISSA_OMP_FOR_IF(cond) MANTISSA_PRAGMA(omp parallel for schedule(static) if (cond))
// Inner loops whose pointers the compiler cannot prove distinct: vectorise them anyway (-O2's
// cheap cost model will not add runtime alias checks). They never alias here.
#define MANTISSA_SIMD MANTISSA_PRAGMA(omp simd)
#else
#define MANTISSA_OMP_FOR_IF(cond)
#define MANTISSA_SIMD _Pragma("GCC ivdep")
#endif

namespace mantissa {
namespace {

using i64 = std::int64_t;

// The batch is processed in chunks whose batch-proportional scratch stays under this, so that a
// batch of 8192 does not need a gigabyte of im2col, and a chunk's im2col is still warm in cache
// when the GEMM reads it. Chunking never changes the rounding: outputs of different images are
// independent, and the filter gradient accumulates over chunks in the compute dtype (float32 for
// emulated dtypes) and is rounded once at the end.
constexpr std::size_t kChunkBudgetBytes = std::size_t{8} << 20;
constexpr std::size_t kAlign = 64;    // each scratch array starts on a cache line
constexpr i64 kParallelMin = 1 << 15; // elements moved before a loop is worth splitting

// The filter gradient sums over all rows (images x pixels). Eigen parallelises a GEMM over its
// output, which for a small (k, out_c) output and a deep sum means threads spin-waiting on each
// other once per depth block; so the rows are cut into this many fixed parts instead, each part
// a single-threaded GEMM into its own partial sum, and the partials are added in order. The
// result therefore does not depend on the number of threads.
constexpr i64 kFilterParts = 2;

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatMap = Eigen::Map<RowMajor<T>>;
template <class T>
using ConstMatMap = Eigen::Map<const RowMajor<T>>;

// The dtype a compute type stores natively: tensors of this dtype are used in place, no copies.
template <class T>
constexpr DType native_dtype = std::is_same_v<T, double> ? DType::Float64 : DType::Float32;

// Sizes derived once from Conv2dArgs; every op uses the same chunking for a given dtype.
struct Geometry {
    Conv2dArgs a;
    i64 k = 0;                 // kernel_h * kernel_w * in_c: the length of one im2col row
    i64 pixels = 0;            // out_h * out_w: im2col rows per image
    i64 in_image = 0;          // in_h * in_w * in_c: elements of one input image
    i64 out_image = 0;         // out_h * out_w * out_c: elements of one output image
    i64 chunk = 0;             // images per chunk
    bool identity_col = false; // 1x1, stride 1, no padding: the input already is the im2col matrix
    bool emulated = false;     // operands are copied to float32 working arrays
    std::size_t elem = 0;      // sizeof the compute type
};

std::string args_str(const Conv2dArgs& a) {
    return "batch " + std::to_string(a.batch) + ", input " + std::to_string(a.in_h) + "x" +
           std::to_string(a.in_w) + "x" + std::to_string(a.in_c) + ", output " +
           std::to_string(a.out_h) + "x" + std::to_string(a.out_w) + "x" + std::to_string(a.out_c) +
           ", kernel " + std::to_string(a.kernel_h) + "x" + std::to_string(a.kernel_w) +
           ", stride " + std::to_string(a.stride_h) + "x" + std::to_string(a.stride_w) +
           ", padding top " + std::to_string(a.pad_top) + " left " + std::to_string(a.pad_left);
}

Geometry make_geometry(const Conv2dArgs& a, DType dtype) {
    if (a.batch < 1 || a.in_h < 1 || a.in_w < 1 || a.in_c < 1 || a.out_h < 1 || a.out_w < 1 ||
        a.out_c < 1 || a.kernel_h < 1 || a.kernel_w < 1 || a.stride_h < 1 || a.stride_w < 1 ||
        a.pad_top < 0 || a.pad_left < 0)
        throw Error(ErrorKind::InvalidArgument,
                    "conv2d: sizes, kernel and stride must be positive and padding non-negative (" +
                        args_str(a) + ")");
    if (!is_floating(dtype))
        throw Error(ErrorKind::InvalidArgument,
                    "conv2d: dtype " + std::string(dtype_name(dtype)) + " is not a floating dtype");
    Geometry g;
    g.a = a;
    g.k = a.kernel_h * a.kernel_w * a.in_c;
    g.pixels = a.out_h * a.out_w;
    g.in_image = a.in_h * a.in_w * a.in_c;
    g.out_image = g.pixels * a.out_c;
    g.identity_col = a.kernel_h == 1 && a.kernel_w == 1 && a.stride_h == 1 && a.stride_w == 1 &&
                     a.pad_top == 0 && a.pad_left == 0 && a.out_h == a.in_h && a.out_w == a.in_w;
    g.emulated = is_emulated_float(dtype);
    g.elem = dtype == DType::Float64 ? sizeof(double) : sizeof(float);
    // Scratch that grows with the chunk: im2col, plus float32 copies of the input and output
    // images when the dtype is emulated.
    const i64 per_image =
        (g.identity_col ? 0 : g.pixels * g.k) + (g.emulated ? g.in_image + g.out_image : 0);
    const i64 per_image_bytes = std::max<i64>(1, per_image * static_cast<i64>(g.elem));
    g.chunk = std::clamp<i64>(static_cast<i64>(kChunkBudgetBytes) / per_image_bytes, 1, a.batch);
    return g;
}

// Hands out aligned arrays from the workspace; with a null base it only measures.
class Carver {
public:
    explicit Carver(void* base) : m_base(static_cast<std::byte*>(base)) {}
    template <class T>
    T* take(i64 count) {
        const std::size_t offset = (m_used + kAlign - 1) / kAlign * kAlign;
        m_used = offset + static_cast<std::size_t>(count) * sizeof(T);
        return m_base ? reinterpret_cast<T*>(m_base + offset) : nullptr;
    }
    std::size_t used() const { return m_used; }

private:
    std::byte* m_base;
    std::size_t m_used = 0;
};

// The scratch arrays of all three ops (they need the same ones, in different roles).
template <class T>
struct Scratch {
    T* col = nullptr;     // (chunk * pixels, k): im2col of the input, or its gradient (dcol)
    T* in = nullptr;      // (chunk, in_h, in_w, in_c): emulated x, or the dx accumulator
    T* out = nullptr;     // (chunk, out_h, out_w, out_c): emulated y accumulator, or dy
    T* weights = nullptr; // (k, out_c): emulated filter, or the dW accumulator
    T* partial = nullptr; // (kFilterParts, k, out_c): per-part filter gradients of one chunk
    T* bias = nullptr;    // (2, out_c): bias in the compute type; dbias accumulator + partial sum
};

template <class T>
Scratch<T> carve(const Geometry& g, Carver& carver) {
    Scratch<T> s;
    if (!g.identity_col) s.col = carver.take<T>(g.chunk * g.pixels * g.k);
    if (g.emulated) {
        s.in = carver.take<T>(g.chunk * g.in_image);
        s.out = carver.take<T>(g.chunk * g.out_image);
        s.weights = carver.take<T>(g.k * g.a.out_c);
    }
    s.partial = carver.take<T>(kFilterParts * g.k * g.a.out_c);
    s.bias = carver.take<T>(2 * g.a.out_c);
    return s;
}

std::size_t workspace_bytes(const Geometry& g) {
    Carver measure(nullptr);
    if (g.elem == sizeof(double))
        carve<double>(g, measure);
    else
        carve<float>(g, measure);
    return measure.used() + kAlign; // + kAlign: the caller's pointer need not be aligned
}

template <class T>
Scratch<T> carve_checked(const Geometry& g, Workspace ws, const char* op) {
    const std::size_t need = workspace_bytes(g);
    if (ws.bytes < need || (need > 0 && ws.data == nullptr))
        throw Error(ErrorKind::Internal,
                    std::string(op) + ": workspace of " + std::to_string(ws.bytes) +
                        " bytes is smaller than the " + std::to_string(need) +
                        " bytes conv2d_workspace_bytes() asks for (" + args_str(g.a) + ")");
    const auto address = reinterpret_cast<std::uintptr_t>(ws.data);
    const std::size_t skip = (kAlign - address % kAlign) % kAlign;
    Carver carver(static_cast<std::byte*>(ws.data) + skip);
    return carve<T>(g, carver);
}

void check_tensor(const Tensor& t, const char* op, const char* role, i64 expected,
                  DType expected_dtype, bool any_float) {
    if (t.data == nullptr && expected > 0)
        throw Error(ErrorKind::Internal,
                    std::string(op) + ": " + role + " '" + t.name + "' has no memory");
    if (t.numel() != expected)
        throw Error(ErrorKind::Shape, std::string(op) + ": " + role + " '" + t.name + "' " +
                                          shape_str(t.shape) + " has " + std::to_string(t.numel()) +
                                          " elements, expected " + std::to_string(expected));
    if (any_float ? !is_floating(t.dtype) : t.dtype != expected_dtype)
        throw Error(ErrorKind::InvalidArgument,
                    std::string(op) + ": " + role + " '" + t.name + "' is " +
                        std::string(dtype_name(t.dtype)) + ", expected " +
                        (any_float ? std::string("a floating dtype")
                                   : std::string(dtype_name(expected_dtype))));
}

// The dtype an op's scratch is laid out for (the dtype conv2d_workspace_bytes() was asked with):
// float64 when the operands are float64; else float32 math, through float32 working copies when
// any operand is stored narrower. Operands may then mix: a quantised layer's convolution reads
// float32 copies of its quantised inputs (issue 18) and writes its bfloat16 output. float64 does
// not mix with the others.
DType work_dtype(const char* op, std::initializer_list<const Tensor*> operands,
                 std::initializer_list<const char*> roles) {
    const bool wide = (*operands.begin())->dtype == DType::Float64;
    DType work = wide ? DType::Float64 : DType::Float32;
    auto role = roles.begin();
    for (const Tensor* t : operands) {
        const char* name = *role++;
        if (!t) continue;
        if (!is_floating(t->dtype) || (t->dtype == DType::Float64) != wide)
            throw Error(ErrorKind::InvalidArgument,
                        std::string(op) + ": " + name + " '" + t->name + "' is " +
                            std::string(dtype_name(t->dtype)) + ", expected " +
                            (wide ? std::string("float64")
                                  : std::string("float32 or an emulated float dtype")) +
                            " like the " + *roles.begin());
        if (t->dtype != work && !wide) work = t->dtype;
    }
    return work;
}

// Large conversions are split over the OpenMP threads; each piece is one bulk call.
constexpr i64 kConvertBlock = 1 << 16;

// dst[0, count) = elements [offset, offset + count) of t, widened exactly to T.
template <class T>
void load(const Tensor& t, i64 offset, i64 count, T* dst) {
    const auto* src = static_cast<const std::byte*>(t.data);
    const std::size_t size = dtype_size(t.dtype);
    const i64 blocks = (count + kConvertBlock - 1) / kConvertBlock;
    MANTISSA_OMP_FOR_IF(blocks > 1)
    for (i64 b = 0; b < blocks; ++b) {
        const i64 begin = b * kConvertBlock;
        const auto n = static_cast<std::size_t>(std::min(kConvertBlock, count - begin));
        const std::byte* from = src + static_cast<std::size_t>(offset + begin) * size;
        if (t.dtype == native_dtype<T>)
            std::memcpy(dst + begin, from, n * sizeof(T));
        else if constexpr (std::is_same_v<T, float>)
            convert_to_float(from, t.dtype, dst + begin, n);
        else
            convert_to_double(from, t.dtype, dst + begin, n);
    }
}

// Elements [offset, offset + count) of t = src rounded once to t's dtype.
template <class T>
void store(const T* src, Tensor& t, i64 offset, i64 count) {
    auto* dst = static_cast<std::byte*>(t.data);
    const std::size_t size = dtype_size(t.dtype);
    const i64 blocks = (count + kConvertBlock - 1) / kConvertBlock;
    MANTISSA_OMP_FOR_IF(blocks > 1)
    for (i64 b = 0; b < blocks; ++b) {
        const i64 begin = b * kConvertBlock;
        const auto n = static_cast<std::size_t>(std::min(kConvertBlock, count - begin));
        std::byte* to = dst + static_cast<std::size_t>(offset + begin) * size;
        if (t.dtype == native_dtype<T>)
            std::memcpy(to, src + begin, n * sizeof(T));
        else if constexpr (std::is_same_v<T, float>)
            convert_from_float(src + begin, to, t.dtype, n);
        else
            convert_from_double(src + begin, to, t.dtype, n);
    }
}

// col (images * pixels, k): row (n, oh, ow) holds x[n, oh*sh - pad_top + i, ow*sw - pad_left + j,
// c] for (i, j, c) in HWI order (the filter's row order), zero where that falls in the padding.
template <class T>
void im2col(const Geometry& g, const T* x /* (images, in_h, in_w, in_c) */, i64 images, T* col) {
    const Conv2dArgs& a = g.a;
    const i64 run = a.kernel_w * a.in_c; // one kernel row: contiguous in x when fully inside
    MANTISSA_OMP_FOR_IF(images * g.pixels * g.k > kParallelMin)
    for (i64 nh = 0; nh < images * a.out_h; ++nh) {
        const i64 n = nh / a.out_h, oh = nh % a.out_h;
        for (i64 ow = 0; ow < a.out_w; ++ow) {
            T* dst = col + (nh * a.out_w + ow) * g.k;
            const i64 iw0 = ow * a.stride_w - a.pad_left;
            const bool w_inside = iw0 >= 0 && iw0 + a.kernel_w <= a.in_w;
            for (i64 i = 0; i < a.kernel_h; ++i, dst += run) {
                const i64 ih = oh * a.stride_h - a.pad_top + i;
                if (ih < 0 || ih >= a.in_h) {
                    std::fill_n(dst, run, T(0));
                    continue;
                }
                const T* src = x + ((n * a.in_h + ih) * a.in_w) * a.in_c;
                if (w_inside) {
                    std::copy_n(src + iw0 * a.in_c, run, dst);
                    continue;
                }
                for (i64 j = 0; j < a.kernel_w; ++j) {
                    const i64 iw = iw0 + j;
                    if (iw < 0 || iw >= a.in_w)
                        std::fill_n(dst + j * a.in_c, a.in_c, T(0));
                    else
                        std::copy_n(src + iw * a.in_c, a.in_c, dst + j * a.in_c);
                }
            }
        }
    }
}

// dx = col2im(dcol): the adjoint of im2col, a scatter-add of every dcol entry to the input
// position it was gathered from. Each image is owned by one thread, so no two threads add
// to the same element and the summation order is fixed.
template <class T>
void col2im(const Geometry& g, const T* dcol /* (images * pixels, k) */, i64 images,
            T* dx /* (images, in_h, in_w, in_c) */) {
    const Conv2dArgs& a = g.a;
    MANTISSA_OMP_FOR_IF(images * g.pixels * g.k > kParallelMin)
    for (i64 n = 0; n < images; ++n) {
        T* image = dx + n * g.in_image;
        std::fill_n(image, g.in_image, T(0));
        for (i64 oh = 0; oh < a.out_h; ++oh) {
            for (i64 ow = 0; ow < a.out_w; ++ow) {
                const T* src = dcol + ((n * a.out_h + oh) * a.out_w + ow) * g.k;
                const i64 iw0 = ow * a.stride_w - a.pad_left;
                for (i64 i = 0; i < a.kernel_h; ++i) {
                    const i64 ih = oh * a.stride_h - a.pad_top + i;
                    if (ih < 0 || ih >= a.in_h) continue;
                    T* row = image + ih * a.in_w * a.in_c;
                    const T* s = src + i * a.kernel_w * a.in_c;
                    for (i64 j = 0; j < a.kernel_w; ++j) {
                        const i64 iw = iw0 + j;
                        if (iw < 0 || iw >= a.in_w) continue;
                        T* d = row + iw * a.in_c;
                        const T* sj = s + j * a.in_c;
                        MANTISSA_SIMD
                        for (i64 c = 0; c < a.in_c; ++c) d[c] += sj[c];
                    }
                }
            }
        }
    }
}

// y (rows, n) = f(y + bias), with the value before f written to pre when asked. One pass, in T;
// the four bias/pre combinations are separate loops so that each vectorises.
template <class T, class F>
void epilogue_loop(T* y, i64 rows, i64 n, const T* bias, T* pre, F f) {
    MANTISSA_OMP_FOR_IF(rows * n > kParallelMin)
    for (i64 r = 0; r < rows; ++r) {
        T* row = y + r * n;
        T* pre_row = pre ? pre + r * n : nullptr;
        if (bias && pre_row) {
            MANTISSA_SIMD
            for (i64 j = 0; j < n; ++j) {
                const T v = row[j] + bias[j];
                pre_row[j] = v;
                row[j] = f(v);
            }
        } else if (bias) {
            MANTISSA_SIMD
            for (i64 j = 0; j < n; ++j) row[j] = f(row[j] + bias[j]);
        } else if (pre_row) {
            MANTISSA_SIMD
            for (i64 j = 0; j < n; ++j) {
                pre_row[j] = row[j];
                row[j] = f(row[j]);
            }
        } else {
            MANTISSA_SIMD
            for (i64 j = 0; j < n; ++j) row[j] = f(row[j]);
        }
    }
}

template <class T>
void epilogue(T* y, i64 rows, i64 n, const T* bias, T* pre, Activation act) {
    switch (act) {
    case Activation::Linear:
        if (bias || pre) epilogue_loop(y, rows, n, bias, pre, [](T v) { return v; });
        return;
    case Activation::Relu: // v < 0 rather than max(v, 0): NaN stays NaN, so overflow is seen
        epilogue_loop(y, rows, n, bias, pre, [](T v) { return v < T(0) ? T(0) : v; });
        return;
    case Activation::Gelu: // tanh approximation, as cuBLASLt's GELU epilogue and the GELU layer
        epilogue_loop(y, rows, n, bias, pre, [](T v) { return cpu::gelu(v); });
        return;
    case Activation::Tanh:
        epilogue_loop(y, rows, n, bias, pre, [](T v) { return std::tanh(v); });
        return;
    case Activation::Sigmoid:
        epilogue_loop(y, rows, n, bias, pre, [](T v) { return cpu::sigmoid(v); });
        return;
    case Activation::Softmax:
        break;
    }
    throw Error(ErrorKind::InvalidArgument,
                std::string("conv2d_forward: '") + activation_name(act) +
                    "' is not a convolution epilogue; use linear, relu, gelu, tanh or sigmoid");
}

// values[0, n) *= scale, when the pass has tensor scales (a NaN scale reaches every value).
template <class T>
void apply_scale(const Conv2dArgs& a, T* values, i64 n) {
    if (!uses_scaled_conv(a)) return;
    const T scale = tensor_scale_product<T>(a.a_scale ? a.a_scale->as<const float>() : nullptr,
                                            a.b_scale ? a.b_scale->as<const float>() : nullptr);
    MANTISSA_SIMD
    for (i64 i = 0; i < n; ++i) values[i] *= scale;
}

template <class T>
void forward(const Geometry& g, const Tensor& x, const Tensor& w, const Tensor* bias,
             Activation act, Tensor& y, Tensor* pre, Workspace ws) {
    const Conv2dArgs& a = g.a;
    const Scratch<T> s = carve_checked<T>(g, ws, "conv2d_forward");
    // (k, out_c): HWIO is already the GEMM's right operand, row-major.
    const T* weights = w.as<const T>();
    if (g.emulated) {
        load(w, 0, g.k * a.out_c, s.weights);
        weights = s.weights;
    }
    const T* bias_values = nullptr; // (out_c), added in the compute type before the epilogue
    if (bias) {
        load(*bias, 0, a.out_c, s.bias);
        bias_values = s.bias;
    }
    for (i64 n0 = 0; n0 < a.batch; n0 += g.chunk) {
        const i64 images = std::min(g.chunk, a.batch - n0);
        const i64 rows = images * g.pixels;
        const T* xs = x.as<const T>() + n0 * g.in_image; // (images, in_h, in_w, in_c)
        if (g.emulated) {
            load(x, n0 * g.in_image, images * g.in_image, s.in);
            xs = s.in;
        }
        const T* col = xs; // (rows, k)
        if (!g.identity_col) {
            im2col(g, xs, images, s.col);
            col = s.col;
        }
        T* ys = g.emulated ? s.out : y.as<T>() + n0 * g.out_image; // (rows, out_c)
        MatMap<T>(ys, rows, a.out_c).noalias() =
            ConstMatMap<T>(col, rows, g.k) * ConstMatMap<T>(weights, g.k, a.out_c);
        apply_scale(a, ys, rows * a.out_c);
        if (!g.emulated) {
            epilogue(ys, rows, a.out_c, bias_values,
                     pre ? pre->as<T>() + n0 * g.out_image : nullptr, act);
            continue;
        }
        if (pre) { // round the pre-activation and the activation from the same float32 value
            epilogue(ys, rows, a.out_c, bias_values, static_cast<T*>(nullptr), Activation::Linear);
            store(ys, *pre, n0 * g.out_image, rows * a.out_c);
            epilogue(ys, rows, a.out_c, static_cast<const T*>(nullptr), static_cast<T*>(nullptr),
                     act);
        } else {
            epilogue(ys, rows, a.out_c, bias_values, static_cast<T*>(nullptr), act);
        }
        store(ys, y, n0 * g.out_image, rows * a.out_c);
    }
}

template <class T>
void backward_data(const Geometry& g, const Tensor& dy, const Tensor& w, Tensor& dx, Workspace ws) {
    const Conv2dArgs& a = g.a;
    const Scratch<T> s = carve_checked<T>(g, ws, "conv2d_backward_data");
    const T* weights = w.as<const T>(); // (k, out_c)
    if (g.emulated) {
        load(w, 0, g.k * a.out_c, s.weights);
        weights = s.weights;
    }
    for (i64 n0 = 0; n0 < a.batch; n0 += g.chunk) {
        const i64 images = std::min(g.chunk, a.batch - n0);
        const i64 rows = images * g.pixels;
        const T* dys = dy.as<const T>() + n0 * g.out_image; // (rows, out_c)
        if (g.emulated) {
            load(dy, n0 * g.out_image, images * g.out_image, s.out);
            dys = s.out;
        }
        T* dxs = g.emulated ? s.in : dx.as<T>() + n0 * g.in_image; // (images, in_h, in_w, in_c)
        // dcol (rows, k) = dy · Wᵀ; for a 1x1 unit-stride filter dcol is dx itself.
        T* dcol = g.identity_col ? dxs : s.col;
        MatMap<T>(dcol, rows, g.k).noalias() =
            ConstMatMap<T>(dys, rows, a.out_c) * ConstMatMap<T>(weights, g.k, a.out_c).transpose();
        if (!g.identity_col) col2im(g, dcol, images, dxs);
        apply_scale(a, dxs, images * g.in_image);
        if (g.emulated) store(dxs, dx, n0 * g.in_image, images * g.in_image);
    }
}

// acc (n) += sum of the rows of m (rows, n), summed in blocks so long columns lose less precision.
template <class T>
void add_row_sums(const T* m, i64 rows, i64 n, T* acc, T* partial) {
    constexpr i64 kBlock = 256;
    for (i64 r0 = 0; r0 < rows; r0 += kBlock) {
        std::fill_n(partial, n, T(0));
        for (i64 r = r0; r < std::min(rows, r0 + kBlock); ++r) {
            const T* row = m + r * n;
            MANTISSA_SIMD
            for (i64 j = 0; j < n; ++j) partial[j] += row[j];
        }
        MANTISSA_SIMD
        for (i64 j = 0; j < n; ++j) acc[j] += partial[j];
    }
}

template <class T>
void backward_filter(const Geometry& g, const Tensor& x, const Tensor& dy, Tensor& dw,
                     Tensor* dbias, Workspace ws) {
    const Conv2dArgs& a = g.a;
    const Scratch<T> s = carve_checked<T>(g, ws, "conv2d_backward_filter");
    T* dw_acc = g.emulated ? s.weights : dw.as<T>(); // (k, out_c), summed over all chunks
    T* db_acc = s.bias;                              // (out_c)
    T* db_partial = s.bias + a.out_c;                // (out_c)
    std::fill_n(db_acc, a.out_c, T(0));
    for (i64 n0 = 0; n0 < a.batch; n0 += g.chunk) {
        const i64 images = std::min(g.chunk, a.batch - n0);
        const i64 rows = images * g.pixels;
        const T* xs = x.as<const T>() + n0 * g.in_image;
        if (g.emulated) {
            load(x, n0 * g.in_image, images * g.in_image, s.in);
            xs = s.in;
        }
        const T* col = xs; // (rows, k)
        if (!g.identity_col) {
            im2col(g, xs, images, s.col);
            col = s.col;
        }
        const T* dys = dy.as<const T>() + n0 * g.out_image; // (rows, out_c)
        if (g.emulated) {
            load(dy, n0 * g.out_image, images * g.out_image, s.out);
            dys = s.out;
        }
        // partial[p] (k, out_c) = colᵀ · dy over part p of the rows; Eigen runs single-threaded
        // inside the parallel loop.
        const i64 kw = g.k * a.out_c;
        MANTISSA_OMP_FOR_IF(rows * (g.k + a.out_c) > kParallelMin)
        for (i64 p = 0; p < kFilterParts; ++p) {
            const i64 r0 = rows * p / kFilterParts, r1 = rows * (p + 1) / kFilterParts;
            MatMap<T>(s.partial + p * kw, g.k, a.out_c).noalias() =
                ConstMatMap<T>(col + r0 * g.k, r1 - r0, g.k).transpose() *
                ConstMatMap<T>(dys + r0 * a.out_c, r1 - r0, a.out_c);
        }
        for (i64 p = 0; p < kFilterParts; ++p) {
            const T* part = s.partial + p * kw;
            if (n0 == 0 && p == 0)
                std::copy_n(part, kw, dw_acc);
            else {
                MANTISSA_SIMD
                for (i64 i = 0; i < kw; ++i) dw_acc[i] += part[i];
            }
        }
        if (dbias) add_row_sums(dys, rows, a.out_c, db_acc, db_partial);
    }
    apply_scale(a, dw_acc, g.k * a.out_c);
    if (g.emulated) store(dw_acc, dw, 0, g.k * a.out_c);
    if (dbias) store(db_acc, *dbias, 0, a.out_c);
}

} // namespace

std::size_t CpuBackend::conv2d_workspace_bytes(const Conv2dArgs& args, DType dtype) const {
    return workspace_bytes(make_geometry(args, dtype));
}

void CpuBackend::conv2d_forward(const Conv2dArgs& args, const Tensor& x, const Tensor& w,
                                const Tensor* bias, Activation epilogue_act, Tensor& y,
                                Tensor* pre_activation, Workspace workspace) {
    const char* op = "conv2d_forward";
    const Geometry g =
        make_geometry(args, work_dtype(op, {&x, &w, &y, pre_activation},
                                       {"input", "filter", "output", "pre-activation"}));
    check_tensor(x, op, "input", args.batch * g.in_image, x.dtype, true);
    check_tensor(w, op, "filter", g.k * args.out_c, x.dtype, true);
    check_tensor(y, op, "output", args.batch * g.out_image, x.dtype, true);
    if (bias) check_tensor(*bias, op, "bias", args.out_c, x.dtype, true);
    if (pre_activation)
        check_tensor(*pre_activation, op, "pre-activation", args.batch * g.out_image, x.dtype,
                     true);
    check_scaled_conv(args, nullptr, op);
    if (x.dtype == DType::Float64)
        forward<double>(g, x, w, bias, epilogue_act, y, pre_activation, workspace);
    else
        forward<float>(g, x, w, bias, epilogue_act, y, pre_activation, workspace);
}

void CpuBackend::conv2d_backward_data(const Conv2dArgs& args, const Tensor& dy, const Tensor& w,
                                      Tensor& dx, Workspace workspace) {
    const char* op = "conv2d_backward_data";
    const Geometry g = make_geometry(
        args, work_dtype(op, {&dy, &w, &dx}, {"output gradient", "filter", "input gradient"}));
    check_tensor(dy, op, "output gradient", args.batch * g.out_image, dy.dtype, true);
    check_tensor(w, op, "filter", g.k * args.out_c, dy.dtype, true);
    check_tensor(dx, op, "input gradient", args.batch * g.in_image, dy.dtype, true);
    check_scaled_conv(args, nullptr, op);
    if (dy.dtype == DType::Float64)
        backward_data<double>(g, dy, w, dx, workspace);
    else
        backward_data<float>(g, dy, w, dx, workspace);
}

void CpuBackend::conv2d_backward_filter(const Conv2dArgs& args, const Tensor& x, const Tensor& dy,
                                        Tensor& dw, Tensor* dbias, Workspace workspace) {
    const char* op = "conv2d_backward_filter";
    const Geometry g = make_geometry(
        args, work_dtype(op, {&x, &dy, &dw}, {"input", "output gradient", "filter gradient"}));
    check_tensor(x, op, "input", args.batch * g.in_image, x.dtype, true);
    check_tensor(dy, op, "output gradient", args.batch * g.out_image, x.dtype, true);
    check_tensor(dw, op, "filter gradient", g.k * args.out_c, x.dtype, true);
    if (dbias) check_tensor(*dbias, op, "bias gradient", args.out_c, x.dtype, true);
    check_scaled_conv(args, dbias, op);
    if (x.dtype == DType::Float64)
        backward_filter<double>(g, x, dy, dw, dbias, workspace);
    else
        backward_filter<float>(g, x, dy, dw, dbias, workspace);
}

} // namespace mantissa
