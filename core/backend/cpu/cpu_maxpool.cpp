// CPU max pooling over NHWC ("valid"), recording each maximum's flat input index for backward.
// The maximum of stored values is itself stored, so forward copies bits; backward rounds once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/tensor/shape.h"

// Loops split over the OpenMP threads only when there is enough work to repay waking them.
#if defined(_OPENMP)
#define MANTISSA_PRAGMA(x) _Pragma(#x)
#define MANTISSA_OMP_FOR_IF(cond) MANTISSA_PRAGMA(omp parallel for schedule(static) if (cond))
#else
#define MANTISSA_OMP_FOR_IF(cond)
#endif

namespace mantissa {
namespace {

using i64 = std::int64_t;

constexpr i64 kParallelMin = 1 << 15; // elements visited before a loop is worth splitting

std::string args_str(const Pool2dArgs& a) {
    return "batch " + std::to_string(a.batch) + ", input " + std::to_string(a.in_h) + "x" +
           std::to_string(a.in_w) + "x" + std::to_string(a.channels) + ", output " +
           std::to_string(a.out_h) + "x" + std::to_string(a.out_w) + ", pool " +
           std::to_string(a.pool_h) + "x" + std::to_string(a.pool_w) + ", stride " +
           std::to_string(a.stride_h) + "x" + std::to_string(a.stride_w);
}

void check_args(const Pool2dArgs& a, const char* op) {
    const bool positive = a.batch > 0 && a.in_h > 0 && a.in_w > 0 && a.channels > 0 &&
                          a.out_h > 0 && a.out_w > 0 && a.pool_h > 0 && a.pool_w > 0 &&
                          a.stride_h > 0 && a.stride_w > 0;
    // "valid": every window lies inside the input.
    if (!positive || (a.out_h - 1) * a.stride_h + a.pool_h > a.in_h ||
        (a.out_w - 1) * a.stride_w + a.pool_w > a.in_w)
        throw Error(ErrorKind::InvalidArgument,
                    std::string(op) +
                        ": sizes must be positive and every window inside the input (" +
                        args_str(a) + ")");
    if (a.batch * a.in_h * a.in_w * a.channels > INT32_MAX)
        throw Error(ErrorKind::InvalidArgument,
                    std::string(op) +
                        ": the input has more elements than an int32 argmax can index (" +
                        args_str(a) + ")");
}

void check_tensor(const Tensor& t, const char* op, const char* role, i64 expected) {
    if (t.data == nullptr)
        throw Error(ErrorKind::Internal,
                    std::string(op) + ": " + role + " '" + t.name + "' has no memory");
    if (t.numel() != expected)
        throw Error(ErrorKind::Shape, std::string(op) + ": " + role + " '" + t.name + "' " +
                                          shape_str(t.shape) + " has " + std::to_string(t.numel()) +
                                          " elements, expected " + std::to_string(expected));
}

// Order keys for the sign-magnitude bit patterns of the emulated formats: comparing keys
// compares values exactly (-0 and +0 tie), without converting. NaN is flagged separately.
struct BitOrder {
    std::uint32_t sign;    // the sign bit
    std::uint32_t max_mag; // magnitudes above this are NaN
};

BitOrder bit_order(DType dtype) {
    switch (dtype) {
    case DType::Float16:
        return {0x8000u, 0x7C00u}; // inf = 0x7C00
    case DType::BFloat16:
        return {0x8000u, 0x7F80u}; // inf = 0x7F80
    case DType::Float8E4M3:
        return {0x80u, 0x7Eu}; // no inf; S.1111.111 is NaN
    case DType::Float8E5M2:
        return {0x80u, 0x7Cu}; // inf = 0x7C
    default:
        break;
    }
    throw Error(ErrorKind::Internal, "maxpool: no bit order for " + std::string(dtype_name(dtype)));
}

// Native floats compare as they are.
template <class S>
struct NativeKey {
    using Key = S;
    Key operator()(S v) const { return v; }
    bool is_nan(S v) const { return std::isnan(v); }
};

// Bit patterns compare through their order key.
template <class S>
struct BitsKey {
    using Key = std::int32_t;
    BitOrder order;
    Key operator()(S bits) const {
        const auto mag = static_cast<std::int32_t>(bits & ~order.sign);
        return (bits & order.sign) ? -mag : mag;
    }
    bool is_nan(S bits) const { return (bits & ~order.sign) > order.max_mag; }
};

// y (batch, out_h, out_w, channels) = window maxima of x (batch, in_h, in_w, channels), scanned
// row by row; the first maximum wins a tie, and a NaN wins over numbers (it propagates, so an
// overflow upstream still reaches the loss).
template <class S, class KeyOf>
void forward(const Pool2dArgs& a, const S* x, S* y, std::int32_t* argmax, KeyOf key_of) {
    const i64 c_count = a.channels;
    MANTISSA_OMP_FOR_IF(a.batch * a.in_h * a.in_w * c_count > kParallelMin)
    for (i64 nh = 0; nh < a.batch * a.out_h; ++nh) {
        const i64 n = nh / a.out_h, oh = nh % a.out_h;
        for (i64 ow = 0; ow < a.out_w; ++ow) {
            S* best = y + (nh * a.out_w + ow) * c_count;
            std::int32_t* best_index = argmax + (nh * a.out_w + ow) * c_count;
            for (i64 ph = 0; ph < a.pool_h; ++ph) {
                for (i64 pw = 0; pw < a.pool_w; ++pw) {
                    const i64 ih = oh * a.stride_h + ph, iw = ow * a.stride_w + pw;
                    const i64 base = ((n * a.in_h + ih) * a.in_w + iw) * c_count;
                    const S* src = x + base;
                    if (ph == 0 && pw == 0) {
                        for (i64 c = 0; c < c_count; ++c) {
                            best[c] = src[c];
                            best_index[c] = static_cast<std::int32_t>(base + c);
                        }
                        continue;
                    }
                    for (i64 c = 0; c < c_count; ++c) {
                        const S v = src[c];
                        const bool take = key_of(v) > key_of(best[c]) ||
                                          (key_of.is_nan(v) && !key_of.is_nan(best[c]));
                        if (take) {
                            best[c] = v;
                            best_index[c] = static_cast<std::int32_t>(base + c);
                        }
                    }
                }
            }
        }
    }
}

// The output windows (oh range, ow range) that contain input position (ih, iw).
struct Cover {
    i64 oh_begin, oh_end, ow_begin, ow_end;
};

Cover cover(const Pool2dArgs& a, i64 ih, i64 iw) {
    auto first = [](i64 i, i64 pool, i64 stride) { // smallest o with o*stride + pool > i
        const i64 d = i - pool + 1;
        return d <= 0 ? i64{0} : (d + stride - 1) / stride;
    };
    return {first(ih, a.pool_h, a.stride_h), std::min(a.out_h, ih / a.stride_h + 1),
            first(iw, a.pool_w, a.stride_w), std::min(a.out_w, iw / a.stride_w + 1)};
}

// dx(i) = the dy of every window whose argmax is i, folded with `add` from `zero` and written by
// `put`. Gathered per input element: no races, and no writes through an untrusted index.
template <class A, class Add, class Put>
void backward_gather(const Pool2dArgs& a, const std::int32_t* argmax, A zero, Add add, Put put) {
    const i64 c_count = a.channels;
    MANTISSA_OMP_FOR_IF(a.batch * a.in_h * a.in_w * c_count > kParallelMin)
    for (i64 nh = 0; nh < a.batch * a.in_h; ++nh) {
        const i64 n = nh / a.in_h, ih = nh % a.in_h;
        for (i64 iw = 0; iw < a.in_w; ++iw) {
            const Cover cv = cover(a, ih, iw);
            const i64 base = (nh * a.in_w + iw) * c_count;
            for (i64 c = 0; c < c_count; ++c) {
                A acc = zero;
                for (i64 oh = cv.oh_begin; oh < cv.oh_end; ++oh)
                    for (i64 ow = cv.ow_begin; ow < cv.ow_end; ++ow) {
                        const i64 o = ((n * a.out_h + oh) * a.out_w + ow) * c_count + c;
                        if (argmax[o] == base + c) acc = add(acc, o);
                    }
                put(base + c, acc);
            }
        }
    }
}

// Windows that do not overlap give each input at most one gradient, already a value of the
// dtype: its bits are copied (no rounding), +0 (all bits clear) elsewhere.
template <class S>
void backward_copy_bits(const Pool2dArgs& a, const std::int32_t* argmax, const S* dy, S* dx) {
    backward_gather(
        a, argmax, S{0}, [dy](S, i64 o) { return dy[o]; }, [dx](i64 i, S bits) { dx[i] = bits; });
}

} // namespace

void CpuBackend::maxpool_forward(const Pool2dArgs& args, const Tensor& x, Tensor& y,
                                 Tensor& argmax_i32) {
    const char* op = "maxpool_forward";
    check_args(args, op);
    const i64 out_count = args.batch * args.out_h * args.out_w * args.channels;
    check_tensor(x, op, "input", args.batch * args.in_h * args.in_w * args.channels);
    check_tensor(y, op, "output", out_count);
    check_tensor(argmax_i32, op, "argmax", out_count);
    if (y.dtype != x.dtype || argmax_i32.dtype != DType::Int32)
        throw Error(
            ErrorKind::InvalidArgument,
            std::string(op) + ": expected output of the input's dtype and int32 argmax, got " +
                std::string(dtype_name(x.dtype)) + " -> " + std::string(dtype_name(y.dtype)) +
                ", " + std::string(dtype_name(argmax_i32.dtype)));
    std::int32_t* argmax = argmax_i32.as<std::int32_t>();
    switch (x.dtype) {
    case DType::Float64:
        forward(args, x.as<const double>(), y.as<double>(), argmax, NativeKey<double>{});
        return;
    case DType::Float32:
        forward(args, x.as<const float>(), y.as<float>(), argmax, NativeKey<float>{});
        return;
    case DType::Float16:
    case DType::BFloat16:
        forward(args, x.as<const std::uint16_t>(), y.as<std::uint16_t>(), argmax,
                BitsKey<std::uint16_t>{bit_order(x.dtype)});
        return;
    case DType::Float8E4M3:
    case DType::Float8E5M2:
        forward(args, x.as<const std::uint8_t>(), y.as<std::uint8_t>(), argmax,
                BitsKey<std::uint8_t>{bit_order(x.dtype)});
        return;
    default:
        break;
    }
    throw Error(ErrorKind::InvalidArgument, std::string(op) + ": " +
                                                std::string(dtype_name(x.dtype)) +
                                                " is not a float dtype");
}

void CpuBackend::maxpool_backward(const Pool2dArgs& args, const Tensor& dy,
                                  const Tensor& argmax_i32, Tensor& dx) {
    const char* op = "maxpool_backward";
    check_args(args, op);
    const i64 out_count = args.batch * args.out_h * args.out_w * args.channels;
    check_tensor(dy, op, "output gradient", out_count);
    check_tensor(argmax_i32, op, "argmax", out_count);
    check_tensor(dx, op, "input gradient", args.batch * args.in_h * args.in_w * args.channels);
    if (dx.dtype != dy.dtype || !is_floating(dy.dtype) || argmax_i32.dtype != DType::Int32)
        throw Error(
            ErrorKind::InvalidArgument,
            std::string(op) + ": expected float gradients of one dtype and int32 argmax, got " +
                std::string(dtype_name(dy.dtype)) + " -> " + std::string(dtype_name(dx.dtype)) +
                ", " + std::string(dtype_name(argmax_i32.dtype)));
    const std::int32_t* argmax = argmax_i32.as<const std::int32_t>();
    const DType dtype = dy.dtype;
    if (dtype == DType::Float64) {
        const double* g = dy.as<const double>();
        double* d = dx.as<double>();
        backward_gather(
            args, argmax, 0.0, [g](double s, i64 o) { return s + g[o]; },
            [d](i64 i, double v) { d[i] = v; });
        return;
    }
    if (dtype == DType::Float32) {
        const float* g = dy.as<const float>();
        float* d = dx.as<float>();
        backward_gather(
            args, argmax, 0.0f, [g](float s, i64 o) { return s + g[o]; },
            [d](i64 i, float v) { d[i] = v; });
        return;
    }
    if (args.stride_h >= args.pool_h && args.stride_w >= args.pool_w) {
        if (dtype_size(dtype) == 2)
            backward_copy_bits(args, argmax, dy.as<const std::uint16_t>(), dx.as<std::uint16_t>());
        else
            backward_copy_bits(args, argmax, dy.as<const std::uint8_t>(), dx.as<std::uint8_t>());
        return;
    }
    // Overlapping windows: sum in float32, round once. Rare, so scalar conversions are fine.
    const std::size_t size = dtype_size(dtype);
    const auto* g = dy.as<const std::byte>();
    auto* d = dx.as<std::byte>();
    backward_gather(
        args, argmax, 0.0f,
        [g, size, dtype](float s, i64 o) {
            float v;
            convert_to_float(g + static_cast<std::size_t>(o) * size, dtype, &v, 1);
            return s + v;
        },
        [d, size, dtype](i64 i, float v) {
            convert_from_float(&v, d + static_cast<std::size_t>(i) * size, dtype, 1);
        });
}

} // namespace mantissa
