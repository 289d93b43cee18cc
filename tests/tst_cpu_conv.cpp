// Parity tests for the CPU engine's Conv2D and MaxPool2D against naive direct loops in double.
// Emulated dtypes must equal the exact result rounded once (within 1 ulp); float64 is FD-checked.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "tests/unit/files.h"
#include "tests/unit/format.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using i64 = std::int64_t;

namespace {

// A broken test helper (not a failed check): stop here, as qFatal did.
[[noreturn]] void fatal(const char* message) {
    std::fprintf(stderr, "FATAL: %s\n", message);
    std::abort();
}

// --- An independent model of the float formats (nothing here uses the engine's numerics) ---

struct Format {
    int mantissa_bits;
    int min_exponent; // exponent of the smallest normal
    int exponent_bias;
    int exponent_bits;
};

Format format_of(DType d) {
    switch (d) {
    case DType::Float64:
        return {52, -1022, 1023, 11};
    case DType::Float32:
        return {23, -126, 127, 8};
    case DType::Float16:
        return {10, -14, 15, 5};
    case DType::BFloat16:
        return {7, -126, 127, 8};
    case DType::Float8E4M3:
        return {3, -6, 7, 4};
    case DType::Float8E5M2:
        return {2, -14, 15, 5};
    default:
        break;
    }
    fatal("not a float dtype");
    return {};
}

// The distance between neighbours of dtype around v (the subnormal spacing below min normal).
double ulp(double v, DType d) {
    const Format f = format_of(d);
    const int e = v == 0 ? f.min_exponent : std::max(std::ilogb(v), f.min_exponent);
    return std::ldexp(1.0, e - f.mantissa_bits);
}

// Nearest value of dtype, ties to even (the default rounding mode of nearbyint). No overflow:
// the tests keep values far inside every range.
double round_ref(double v, DType d) {
    if (d == DType::Float64 || v == 0 || !std::isfinite(v)) return v;
    const double q = ulp(v, d);
    return std::nearbyint(v / q) * q;
}

// Decodes an 8-bit pattern by the OCP formulas (NaN and inf patterns are never generated).
double decode_fp8(std::uint8_t bits, DType d) {
    const Format f = format_of(d);
    const int sign = bits >> 7;
    const int e = (bits >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
    const int m = bits & ((1 << f.mantissa_bits) - 1);
    const double mag =
        e == 0 ? std::ldexp(m, f.min_exponent - f.mantissa_bits)
               : std::ldexp((1 << f.mantissa_bits) + m, e - f.exponent_bias - f.mantissa_bits);
    return sign ? -mag : mag;
}

bool is_special_fp8(std::uint8_t bits, DType d) {
    const std::uint8_t mag = bits & 0x7F;
    return d == DType::Float8E4M3 ? mag == 0x7F : mag >= 0x7C;
}

// value -> bits of an 8-bit format, built from decode_fp8. Negative values (and -0) are keyed
// as -|v| - 1e9 so that -0 and +0 get different keys.
const std::map<double, std::uint8_t>& fp8_encoding(DType d) {
    static const auto build = [](DType dtype) {
        std::map<double, std::uint8_t> m;
        for (int b = 0; b < 256; ++b) {
            const auto bits = static_cast<std::uint8_t>(b);
            if (is_special_fp8(bits, dtype)) continue;
            const double v = decode_fp8(bits, dtype);
            m[std::signbit(v) ? -std::abs(v) - 1e9 : v] = bits;
        }
        return m;
    };
    static const auto e4m3 = build(DType::Float8E4M3), e5m2 = build(DType::Float8E5M2);
    return d == DType::Float8E4M3 ? e4m3 : e5m2;
}

// IEEE binary16 by hand rather than _Float16, which clang before 15 lacks on x86 (the sanitizer
// and fuzz builds use clang 14); independent of core's converters, like decode_fp8 above.
double half_to_double(std::uint16_t bits) {
    const int e = (bits >> 10) & 0x1F;
    const int m = bits & 0x3FF;
    double mag = e == 0    ? std::ldexp(m, -24)
                 : e == 31 ? (m ? std::nan("") : HUGE_VAL)
                           : std::ldexp(1024 + m, e - 25);
    return (bits & 0x8000) ? -mag : mag;
}

// `v` must be exactly representable in binary16 (the callers only store such values).
std::uint16_t exact_double_to_half(double v) {
    const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    const double a = std::abs(v);
    if (a == 0) return sign;
    if (std::isinf(a)) return sign | 0x7C00;
    if (std::isnan(a)) return 0x7E00;
    int exp = 0;
    std::frexp(a, &exp); // a = f * 2^exp, f in [0.5, 1)
    if (exp - 1 < -14)   // subnormal: a = m * 2^-24
        return sign | static_cast<std::uint16_t>(std::ldexp(a, 24));
    const int m = static_cast<int>(std::ldexp(a, 11 - exp)) - 1024; // 10 mantissa bits
    return sign | static_cast<std::uint16_t>(((exp - 1 + 15) << 10) | m);
}

// A tensor in host memory with exact get/set of values of its dtype.
struct HostTensor {
    std::vector<std::uint64_t> storage; // 8-byte aligned backing store
    Tensor t;

    HostTensor(DType dtype, Shape shape, std::string name) {
        t.name = std::move(name);
        t.dtype = dtype;
        t.shape = std::move(shape);
        storage.assign(t.bytes() / 8 + 1, 0);
        t.data = storage.data();
    }
    i64 size() const { return t.numel(); }
    unsigned char* at(i64 i) const {
        return static_cast<unsigned char*>(t.data) + i * static_cast<i64>(dtype_size(t.dtype));
    }

    double get(i64 i) const {
        switch (t.dtype) {
        case DType::Float64: {
            double v;
            std::memcpy(&v, at(i), 8);
            return v;
        }
        case DType::Float32: {
            float v;
            std::memcpy(&v, at(i), 4);
            return v;
        }
        case DType::Float16: {
            std::uint16_t h;
            std::memcpy(&h, at(i), 2);
            return half_to_double(h);
        }
        case DType::BFloat16: {
            std::uint16_t b;
            std::memcpy(&b, at(i), 2);
            const std::uint32_t bits = std::uint32_t{b} << 16;
            float v;
            std::memcpy(&v, &bits, 4);
            return v;
        }
        case DType::Float8E4M3:
        case DType::Float8E5M2:
            return decode_fp8(*at(i), t.dtype);
        default:
            break;
        }
        fatal("get: not a float dtype");
        return 0;
    }

    // `v` must be exactly representable (QVERIFY'd by the caller through get()).
    void set(i64 i, double v) {
        switch (t.dtype) {
        case DType::Float64:
            std::memcpy(at(i), &v, 8);
            return;
        case DType::Float32: {
            const float f = static_cast<float>(v);
            std::memcpy(at(i), &f, 4);
            return;
        }
        case DType::Float16: {
            const std::uint16_t h = exact_double_to_half(v);
            std::memcpy(at(i), &h, 2);
            return;
        }
        case DType::BFloat16: {
            const float f = static_cast<float>(v);
            std::uint32_t bits;
            std::memcpy(&bits, &f, 4);
            const std::uint16_t b = static_cast<std::uint16_t>(bits >> 16);
            std::memcpy(at(i), &b, 2);
            return;
        }
        case DType::Float8E4M3:
        case DType::Float8E5M2: {
            const auto& table = fp8_encoding(t.dtype);
            const auto found = table.find(std::signbit(v) ? -std::abs(v) - 1e9 : v);
            if (found != table.end()) {
                *at(i) = found->second;
                return;
            }
            fatal("set: value not representable in fp8");
        }
        default:
            break;
        }
        fatal("set: not a float dtype");
    }

    std::vector<double> values() const {
        std::vector<double> v(static_cast<std::size_t>(size()));
        for (i64 i = 0; i < size(); ++i) v[i] = get(i);
        return v;
    }
};

// Uniform values in [lo, hi), rounded to the tensor's dtype so that they are exact operands.
void fill_random(HostTensor& h, std::mt19937_64& rng, double lo, double hi) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (i64 i = 0; i < h.size(); ++i) h.set(i, round_ref(dist(rng), h.t.dtype));
}

DType dtype_named(const std::string& name) {
    return dtype_from_name(name);
}

const char* const kConvDtypes[] = {"float64",  "float32",     "float16",
                                   "bfloat16", "float8_e4m3", "float8_e5m2"};

// --- Convolution geometries ---

struct ConvCase {
    const char* name;
    i64 batch, in_h, in_w, in_c, out_c, kernel_h, kernel_w, stride_h, stride_w;
    bool same; // Keras "same" padding, else "valid"
};

const ConvCase kConvCases[] = {
    {"1ch_3x3_valid_b1", 1, 7, 6, 1, 4, 3, 3, 1, 1, false},
    {"3ch_3x3_same_b3", 3, 6, 7, 3, 5, 3, 3, 1, 1, true},
    {"3ch_5x5_s2_same_b3", 3, 9, 8, 3, 4, 5, 5, 2, 2, true},
    {"1ch_2x3_s2_valid_odd_b3", 3, 7, 9, 1, 3, 2, 3, 2, 2, false},
    {"3ch_2x3_s1x2_same_b1", 1, 5, 8, 3, 2, 2, 3, 1, 2, true},
    {"3ch_5x5_valid_odd_b3", 3, 9, 11, 3, 3, 5, 5, 1, 1, false},
    {"3ch_1x1_b3", 3, 4, 5, 3, 6, 1, 1, 1, 1, false},
    // Large enough images that the batch is processed in several chunks (see workspace test).
    {"16ch_3x3_same_chunked_b9", 9, 48, 48, 16, 4, 3, 3, 1, 1, true},
};

Conv2dArgs conv_args(const ConvCase& c) {
    Conv2dArgs a;
    a.batch = c.batch;
    a.in_h = c.in_h;
    a.in_w = c.in_w;
    a.in_c = c.in_c;
    a.out_c = c.out_c;
    a.kernel_h = c.kernel_h;
    a.kernel_w = c.kernel_w;
    a.stride_h = c.stride_h;
    a.stride_w = c.stride_w;
    if (c.same) { // Keras: out = ceil(in / stride), the smaller half of the padding on top/left
        a.out_h = (c.in_h + c.stride_h - 1) / c.stride_h;
        a.out_w = (c.in_w + c.stride_w - 1) / c.stride_w;
        a.pad_top = std::max<i64>((a.out_h - 1) * c.stride_h + c.kernel_h - c.in_h, 0) / 2;
        a.pad_left = std::max<i64>((a.out_w - 1) * c.stride_w + c.kernel_w - c.in_w, 0) / 2;
    } else {
        a.out_h = (c.in_h - c.kernel_h) / c.stride_h + 1;
        a.out_w = (c.in_w - c.kernel_w) / c.stride_w + 1;
    }
    return a;
}

// An exact result and what bounds its float32 accumulation error: the sum of |terms| and count.
struct Ref {
    std::vector<double> value, abs_sum;
    i64 terms = 0;
};

// Direct loops over every (output, kernel tap) pair; `visit(x_index, w_index, y_index)`.
template <class F>
void for_each_tap(const Conv2dArgs& a, F visit) {
    for (i64 n = 0; n < a.batch; ++n)
        for (i64 oh = 0; oh < a.out_h; ++oh)
            for (i64 ow = 0; ow < a.out_w; ++ow)
                for (i64 i = 0; i < a.kernel_h; ++i)
                    for (i64 j = 0; j < a.kernel_w; ++j) {
                        const i64 ih = oh * a.stride_h - a.pad_top + i;
                        const i64 iw = ow * a.stride_w - a.pad_left + j;
                        if (ih < 0 || ih >= a.in_h || iw < 0 || iw >= a.in_w) continue;
                        for (i64 c = 0; c < a.in_c; ++c)
                            for (i64 o = 0; o < a.out_c; ++o)
                                visit(((n * a.in_h + ih) * a.in_w + iw) * a.in_c + c,
                                      ((i * a.kernel_w + j) * a.in_c + c) * a.out_c + o,
                                      ((n * a.out_h + oh) * a.out_w + ow) * a.out_c + o);
                    }
}

i64 x_count(const Conv2dArgs& a) {
    return a.batch * a.in_h * a.in_w * a.in_c;
}
i64 y_count(const Conv2dArgs& a) {
    return a.batch * a.out_h * a.out_w * a.out_c;
}
i64 w_count(const Conv2dArgs& a) {
    return a.kernel_h * a.kernel_w * a.in_c * a.out_c;
}

Ref ref_forward(const Conv2dArgs& a, const std::vector<double>& x, const std::vector<double>& w,
                const std::vector<double>& bias) {
    Ref r;
    r.value.assign(y_count(a), 0.0);
    r.abs_sum.assign(y_count(a), 0.0);
    for_each_tap(a, [&](i64 xi, i64 wi, i64 yi) {
        r.value[yi] += x[xi] * w[wi];
        r.abs_sum[yi] += std::abs(x[xi] * w[wi]);
    });
    for (i64 i = 0; i < y_count(a); ++i) {
        r.value[i] += bias[i % a.out_c];
        r.abs_sum[i] += std::abs(bias[i % a.out_c]);
    }
    r.terms = a.kernel_h * a.kernel_w * a.in_c + 1;
    return r;
}

Ref ref_backward_data(const Conv2dArgs& a, const std::vector<double>& dy,
                      const std::vector<double>& w) {
    Ref r;
    r.value.assign(x_count(a), 0.0);
    r.abs_sum.assign(x_count(a), 0.0);
    for_each_tap(a, [&](i64 xi, i64 wi, i64 yi) {
        r.value[xi] += dy[yi] * w[wi];
        r.abs_sum[xi] += std::abs(dy[yi] * w[wi]);
    });
    r.terms = a.kernel_h * a.kernel_w * a.out_c;
    return r;
}

Ref ref_backward_filter(const Conv2dArgs& a, const std::vector<double>& x,
                        const std::vector<double>& dy) {
    Ref r;
    r.value.assign(w_count(a), 0.0);
    r.abs_sum.assign(w_count(a), 0.0);
    for_each_tap(a, [&](i64 xi, i64 wi, i64 yi) {
        r.value[wi] += x[xi] * dy[yi];
        r.abs_sum[wi] += std::abs(x[xi] * dy[yi]);
    });
    r.terms = a.batch * a.out_h * a.out_w;
    return r;
}

Ref ref_bias_grad(const Conv2dArgs& a, const std::vector<double>& dy) {
    Ref r;
    r.value.assign(a.out_c, 0.0);
    r.abs_sum.assign(a.out_c, 0.0);
    for (i64 i = 0; i < y_count(a); ++i) {
        r.value[i % a.out_c] += dy[i];
        r.abs_sum[i % a.out_c] += std::abs(dy[i]);
    }
    r.terms = a.batch * a.out_h * a.out_w;
    return r;
}

// Each element of `got` must be the exact value f(ref) rounded once to got's dtype, give or
// take 1 ulp of that dtype (the float32 sum may sit on the other side of a rounding boundary)
// plus the float32 accumulation error (8·sqrt(terms)·u·Σ|terms|, u = 2^-24; 2^-53 in float64).
// float32 outputs may also be off by a relative 1e-5.
template <class F>
bool matches(const HostTensor& got, const Ref& ref, F f, double f_slope, std::string& why) {
    const DType d = got.t.dtype;
    const double u = d == DType::Float64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
    for (i64 i = 0; i < got.size(); ++i) {
        const double exact = f(ref.value[i]);
        const double expected = round_ref(exact, d);
        const double acc = 8.0 * std::sqrt(double(ref.terms)) * u * ref.abs_sum[i] * f_slope;
        double tol = ulp(expected, d) + acc;
        if (d == DType::Float32) tol = std::max(tol, 1e-5 * std::abs(expected));
        const double v = got.get(i);
        if (!(std::abs(v - expected) <= tol)) {
            why =
                (arg_text(got.t.name) + "[" + arg_text(i) + "]: got " + format("%.17g", double(v)) +
                 ", expected " + format("%.17g", double(expected)) + " (exact " +
                 format("%.17g", double(exact)) + "), tolerance " + format("%.3g", double(tol)));
            return false;
        }
    }
    return true;
}

bool matches(const HostTensor& got, const Ref& ref, std::string& why) {
    return matches(
        got, ref, [](double v) { return v; }, 1.0, why);
}

std::vector<unsigned char> workspace_for(const CpuBackend& be, const Conv2dArgs& a, DType d) {
    return std::vector<unsigned char>(be.conv2d_workspace_bytes(a, d));
}

Workspace as_workspace(std::vector<unsigned char>& v) {
    return {v.data(), v.size()};
}

// The operands of one convolution in one dtype, with random exact values.
struct ConvOperands {
    Conv2dArgs a;
    HostTensor x, w, bias, dy;
    ConvOperands(const Conv2dArgs& args, DType d, std::uint64_t seed)
        : a(args), x(d, {args.batch, args.in_h, args.in_w, args.in_c}, "x"),
          w(d, {args.kernel_h, args.kernel_w, args.in_c, args.out_c}, "w"),
          bias(d, {args.out_c}, "bias"),
          dy(d, {args.batch, args.out_h, args.out_w, args.out_c}, "dy") {
        std::mt19937_64 rng(seed);
        fill_random(x, rng, -1.0, 1.0);
        fill_random(w, rng, -0.5, 0.5);
        fill_random(bias, rng, -0.5, 0.5);
        fill_random(dy, rng, -1.0, 1.0);
    }
};

// --- Max pooling ---

struct PoolCase {
    const char* name;
    i64 batch, in_h, in_w, channels, pool_h, pool_w, stride_h, stride_w;
};

const PoolCase kPoolCases[] = {
    {"2x2_s2_odd", 2, 5, 7, 3, 2, 2, 2, 2},
    {"3x3_s2_overlap", 1, 7, 7, 2, 3, 3, 2, 2},
    {"2x3_s1x2_overlap", 2, 5, 8, 3, 2, 3, 1, 2},
    {"3x2_s3x2", 1, 9, 6, 4, 3, 2, 3, 2},
};

Pool2dArgs pool_args(const PoolCase& c) {
    Pool2dArgs a;
    a.batch = c.batch;
    a.in_h = c.in_h;
    a.in_w = c.in_w;
    a.channels = c.channels;
    a.pool_h = c.pool_h;
    a.pool_w = c.pool_w;
    a.stride_h = c.stride_h;
    a.stride_w = c.stride_w;
    a.out_h = (c.in_h - c.pool_h) / c.stride_h + 1;
    a.out_w = (c.in_w - c.pool_w) / c.stride_w + 1;
    return a;
}

// Reference argmax: scan each window row by row, the first strict maximum wins.
std::vector<i64> ref_argmax(const Pool2dArgs& a, const std::vector<double>& x) {
    std::vector<i64> out;
    for (i64 n = 0; n < a.batch; ++n)
        for (i64 oh = 0; oh < a.out_h; ++oh)
            for (i64 ow = 0; ow < a.out_w; ++ow)
                for (i64 c = 0; c < a.channels; ++c) {
                    i64 best = -1;
                    for (i64 ph = 0; ph < a.pool_h; ++ph)
                        for (i64 pw = 0; pw < a.pool_w; ++pw) {
                            const i64 ih = oh * a.stride_h + ph, iw = ow * a.stride_w + pw;
                            const i64 idx = ((n * a.in_h + ih) * a.in_w + iw) * a.channels + c;
                            if (best < 0 || x[idx] > x[best]) best = idx;
                        }
                    out.push_back(best);
                }
    return out;
}

} // namespace

class TestCpuConv {

private:
    CpuBackend m_backend;

    static void conv_table() {
        add_column<std::string>("dtype");
        add_column<int>("geometry");
        for (const char* dtype : kConvDtypes)
            for (int g = 0; g < int(std::size(kConvCases)); ++g)
                new_row(arg_text(dtype) + "/" + arg_text(kConvCases[g].name))
                    << std::string(dtype) << g;
    }

public:
    void forward_data() { conv_table(); }
    // y = relu(conv(x, w) + bias), with the pre-activation, both rounded once from the exact sum.
    void forward() {
        FETCH(std::string, dtype);
        FETCH(int, geometry);
        const DType d = dtype_named(dtype);
        ConvOperands op(conv_args(kConvCases[geometry]), d, 1000 + geometry);
        HostTensor y(d, op.dy.t.shape, "y"), pre(d, op.dy.t.shape, "pre_activation");
        auto ws = workspace_for(m_backend, op.a, d);
        m_backend.conv2d_forward(op.a, op.x.t, op.w.t, &op.bias.t, Activation::Relu, y.t, &pre.t,
                                 as_workspace(ws));
        const Ref ref = ref_forward(op.a, op.x.values(), op.w.values(), op.bias.values());
        std::string why;
        CHECK_MSG(matches(pre, ref, why), why);
        CHECK_MSG(matches(
                      y, ref, [](double v) { return v < 0 ? 0.0 : v; }, 1.0, why),
                  why);
    }

    void forward_epilogues_data() {
        add_column<std::string>("dtype");
        add_column<int>("activation");
        for (const char* dtype : {"float64", "float32", "float16", "bfloat16"})
            for (Activation act :
                 {Activation::Linear, Activation::Gelu, Activation::Tanh, Activation::Sigmoid})
                new_row(arg_text(dtype) + "/" + arg_text(activation_name(act)))
                    << std::string(dtype) << int(act);
    }
    // The other epilogues, computed on the unrounded sum (1-Lipschitz or close: slope 1.2 covers
    // GELU), without bias or pre-activation.
    void forward_epilogues() {
        FETCH(std::string, dtype);
        FETCH(int, activation);
        const DType d = dtype_named(dtype);
        const auto act = static_cast<Activation>(activation);
        ConvOperands op(conv_args(kConvCases[2]), d, 77);
        HostTensor y(d, op.dy.t.shape, "y");
        auto ws = workspace_for(m_backend, op.a, d);
        m_backend.conv2d_forward(op.a, op.x.t, op.w.t, nullptr, act, y.t, nullptr,
                                 as_workspace(ws));
        Ref ref =
            ref_forward(op.a, op.x.values(), op.w.values(), std::vector<double>(op.a.out_c, 0.0));
        auto f = [act](double v) {
            switch (act) {
            case Activation::Gelu:
                return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
            case Activation::Tanh:
                return std::tanh(v);
            case Activation::Sigmoid:
                return 1 / (1 + std::exp(-v));
            default:
                return v;
            }
        };
        // float32's own tanh/exp add a few float32 ulps: 4·2^-24 relative, folded into Σ|terms|.
        for (std::size_t i = 0; i < ref.abs_sum.size(); ++i)
            ref.abs_sum[i] += 4.0 * std::abs(f(ref.value[i]));
        std::string why;
        CHECK_MSG(matches(y, ref, f, 1.2, why), why);
    }

    void backward_input_data() { conv_table(); }
    void backward_input() {
        FETCH(std::string, dtype);
        FETCH(int, geometry);
        const DType d = dtype_named(dtype);
        ConvOperands op(conv_args(kConvCases[geometry]), d, 2000 + geometry);
        HostTensor dx(d, op.x.t.shape, "dx");
        auto ws = workspace_for(m_backend, op.a, d);
        m_backend.conv2d_backward_data(op.a, op.dy.t, op.w.t, dx.t, as_workspace(ws));
        std::string why;
        CHECK_MSG(matches(dx, ref_backward_data(op.a, op.dy.values(), op.w.values()), why), why);
    }

    void backward_filter_data() { conv_table(); }
    void backward_filter() {
        FETCH(std::string, dtype);
        FETCH(int, geometry);
        const DType d = dtype_named(dtype);
        ConvOperands op(conv_args(kConvCases[geometry]), d, 3000 + geometry);
        HostTensor dw(d, op.w.t.shape, "dw"), dbias(d, {op.a.out_c}, "dbias");
        auto ws = workspace_for(m_backend, op.a, d);
        m_backend.conv2d_backward_filter(op.a, op.x.t, op.dy.t, dw.t, &dbias.t, as_workspace(ws));
        std::string why;
        CHECK_MSG(matches(dw, ref_backward_filter(op.a, op.x.values(), op.dy.values()), why), why);
        CHECK_MSG(matches(dbias, ref_bias_grad(op.a, op.dy.values()), why), why);
        // Without dbias the filter gradient is the same.
        HostTensor dw2(d, op.w.t.shape, "dw");
        m_backend.conv2d_backward_filter(op.a, op.x.t, op.dy.t, dw2.t, nullptr, as_workspace(ws));
        CHECK_EQ(std::memcmp(dw.t.data, dw2.t.data, dw.t.bytes()), 0);
    }

    void gradients_are_finite_differences_data() {
        add_column<int>("geometry");
        for (int g = 0; g < int(std::size(kConvCases)) - 1; ++g) // the chunked case is slow here
            new_row(kConvCases[g].name) << g;
    }
    // float64: backward_data and backward_filter are the gradients of L = Σ y·r, y = conv + bias,
    // checked by central differences of the forward op itself (L is linear in each variable, so
    // the difference quotient is exact up to rounding).
    void gradients_are_finite_differences() {
        FETCH(int, geometry);
        const DType d = DType::Float64;
        ConvOperands op(conv_args(kConvCases[geometry]), d, 4000 + geometry);
        HostTensor& r = op.dy; // the random weights of the scalar L
        HostTensor y(d, r.t.shape, "y"), dx(d, op.x.t.shape, "dx"), dw(d, op.w.t.shape, "dw"),
            db(d, {op.a.out_c}, "dbias");
        auto ws = workspace_for(m_backend, op.a, d);
        auto loss = [&] {
            m_backend.conv2d_forward(op.a, op.x.t, op.w.t, &op.bias.t, Activation::Linear, y.t,
                                     nullptr, as_workspace(ws));
            double sum = 0;
            for (i64 i = 0; i < y.size(); ++i) sum += y.get(i) * r.get(i);
            return sum;
        };
        m_backend.conv2d_backward_data(op.a, r.t, op.w.t, dx.t, as_workspace(ws));
        m_backend.conv2d_backward_filter(op.a, op.x.t, r.t, dw.t, &db.t, as_workspace(ws));
        std::mt19937_64 rng(5);
        const std::pair<HostTensor*, HostTensor*> pairs[] = {
            {&op.x, &dx}, {&op.w, &dw}, {&op.bias, &db}};
        for (auto [var, grad] : pairs) {
            std::uniform_int_distribution<i64> pick(0, var->size() - 1);
            for (int s = 0; s < 24; ++s) {
                const i64 i = pick(rng);
                const double h = 1e-3, v = var->get(i);
                var->set(i, v + h);
                const double up = loss();
                var->set(i, v - h);
                const double down = loss();
                var->set(i, v);
                const double fd = (up - down) / (2 * h), g = grad->get(i);
                CHECK_MSG(std::abs(fd - g) <= 1e-8 * (1 + std::abs(g)),
                          arg_text(grad->t.name) + "[" + arg_text(i) + "]: gradient " +
                              format("%.17g", double(g)) + ", finite difference " +
                              format("%.17g", double(fd)));
            }
        }
    }

    // The workspace stays bounded for big batches, and the chunked test geometry really chunks.
    void workspace_is_bounded() {
        Conv2dArgs cnn2; // the CNN experiment's second convolution
        cnn2.batch = 8192;
        cnn2.in_h = cnn2.in_w = 13;
        cnn2.in_c = 32;
        cnn2.out_h = cnn2.out_w = 11;
        cnn2.out_c = 64;
        cnn2.kernel_h = cnn2.kernel_w = 3;
        for (DType d : {DType::Float32, DType::Float16, DType::Float64}) {
            const std::size_t bytes = m_backend.conv2d_workspace_bytes(cnn2, d);
            CHECK_MSG(bytes < (std::size_t{64} << 20), arg_text(bytes));
            CHECK(bytes >= std::size_t(11 * 11 * 288) * 4); // at least one image's im2col
        }
        const Conv2dArgs big = conv_args(kConvCases[std::size(kConvCases) - 1]);
        const std::size_t full_im2col = std::size_t(big.batch * big.out_h * big.out_w) *
                                        std::size_t(big.kernel_h * big.kernel_w * big.in_c) * 4;
        for (DType d : {DType::Float32, DType::Float16})
            CHECK(m_backend.conv2d_workspace_bytes(big, d) < full_im2col);
    }

    void errors_are_reported() {
        const Conv2dArgs a = conv_args(kConvCases[1]);
        ConvOperands op(a, DType::Float32, 9);
        HostTensor y(DType::Float32, op.dy.t.shape, "y");
        auto ws = workspace_for(m_backend, a, DType::Float32);
        CHECK(ws.size() > 0);
        auto kind_of = [](auto f) {
            try {
                f();
            } catch (const Error& e) {
                return int(e.kind());
            }
            return -1;
        };
        Workspace small{ws.data(), ws.size() / 2};
        CHECK_EQ(kind_of([&] {
                     m_backend.conv2d_forward(a, op.x.t, op.w.t, nullptr, Activation::Relu, y.t,
                                              nullptr, small);
                 }),
                 int(ErrorKind::Internal));
        CHECK_EQ(
            kind_of([&] { m_backend.conv2d_backward_data(a, op.dy.t, op.w.t, op.x.t, small); }),
            int(ErrorKind::Internal));
        HostTensor wrong(DType::Float32, {a.batch, a.out_h, a.out_w, a.out_c + 1}, "wrong");
        CHECK_EQ(kind_of([&] {
                     m_backend.conv2d_forward(a, op.x.t, op.w.t, nullptr, Activation::Relu, wrong.t,
                                              nullptr, as_workspace(ws));
                 }),
                 int(ErrorKind::Shape));
        // float32 operands may write an emulated output (a quantised layer does), but float64
        // does not mix with float32.
        HostTensor wide_y(DType::Float64, op.dy.t.shape, "y");
        CHECK_EQ(kind_of([&] {
                     m_backend.conv2d_forward(a, op.x.t, op.w.t, nullptr, Activation::Relu,
                                              wide_y.t, nullptr, as_workspace(ws));
                 }),
                 int(ErrorKind::InvalidArgument));
        CHECK_EQ(kind_of([&] {
                     m_backend.conv2d_forward(a, op.x.t, op.w.t, nullptr, Activation::Softmax, y.t,
                                              nullptr, as_workspace(ws));
                 }),
                 int(ErrorKind::InvalidArgument));
        // Tensor scales (a quantised layer's NVFP4 copies) are one-element float32 tensors, and
        // a scaled filter pass takes no bias gradient: it would sum the unscaled dy.
        HostTensor half_scale(DType::Float32, {1}, "x scale"),
            bad_scale(DType::Float16, {1}, "w scale");
        half_scale.set(0, 0.5);
        Conv2dArgs scaled = a;
        scaled.a_scale = &half_scale.t;
        HostTensor db(DType::Float32, {a.out_c}, "db"), dw(DType::Float32, op.w.t.shape, "dw");
        CHECK_EQ(kind_of([&] {
                     m_backend.conv2d_backward_filter(scaled, op.x.t, op.dy.t, dw.t, &db.t,
                                                      as_workspace(ws));
                 }),
                 int(ErrorKind::InvalidArgument));
        scaled.b_scale = &bad_scale.t;
        CHECK_EQ(kind_of([&] {
                     m_backend.conv2d_backward_data(scaled, op.dy.t, op.w.t, op.x.t,
                                                    as_workspace(ws));
                 }),
                 int(ErrorKind::InvalidArgument));
        // A scale of 1/2 halves every sum of the forward pass, exactly (before the bias).
        scaled.b_scale = nullptr;
        HostTensor plain(DType::Float32, op.dy.t.shape, "y"),
            halved(DType::Float32, op.dy.t.shape, "y");
        m_backend.conv2d_forward(a, op.x.t, op.w.t, nullptr, Activation::Linear, plain.t, nullptr,
                                 as_workspace(ws));
        m_backend.conv2d_forward(scaled, op.x.t, op.w.t, nullptr, Activation::Linear, halved.t,
                                 nullptr, as_workspace(ws));
        for (i64 i = 0; i < plain.t.numel(); ++i) CHECK_EQ(halved.get(i), plain.get(i) / 2);
        // A larger workspace than asked for, at an odd address, gives the same bits.
        HostTensor y1(DType::Float32, op.dy.t.shape, "y"), y2(DType::Float32, op.dy.t.shape, "y");
        m_backend.conv2d_forward(a, op.x.t, op.w.t, &op.bias.t, Activation::Gelu, y1.t, nullptr,
                                 as_workspace(ws));
        std::vector<unsigned char> bigger(ws.size() * 3 + 1);
        m_backend.conv2d_forward(a, op.x.t, op.w.t, &op.bias.t, Activation::Gelu, y2.t, nullptr,
                                 {bigger.data() + 1, bigger.size() - 1});
        CHECK_EQ(std::memcmp(y1.t.data, y2.t.data, y1.t.bytes()), 0);
    }

    void maxpool_data() {
        add_column<std::string>("dtype");
        add_column<int>("geometry");
        add_column<bool>("ties");
        for (const char* dtype : kConvDtypes)
            for (int g = 0; g < int(std::size(kPoolCases)); ++g)
                for (bool ties : {false, true})
                    new_row(arg_text(dtype) + "/" + arg_text(kPoolCases[g].name) +
                            arg_text(ties ? "/ties" : ""))
                        << std::string(dtype) << g << ties;
    }
    // Forward: the stored maximum (bit for bit) and the first maximum's flat index. Backward:
    // dy scattered to the argmax, summed exactly and rounded once where windows overlap.
    void maxpool() {
        FETCH(std::string, dtype);
        FETCH(int, geometry);
        FETCH(bool, ties);
        const DType d = dtype_named(dtype);
        const Pool2dArgs a = pool_args(kPoolCases[geometry]);
        HostTensor x(d, {a.batch, a.in_h, a.in_w, a.channels}, "x");
        HostTensor y(d, {a.batch, a.out_h, a.out_w, a.channels}, "y");
        HostTensor argmax(DType::Int32, y.t.shape, "argmax");
        HostTensor dy(d, y.t.shape, "dy"), dx(d, x.t.shape, "dx");
        std::mt19937_64 rng(6000 + geometry);
        if (ties) { // few distinct values, signed zeros among them: most windows tie
            std::uniform_int_distribution<int> pick(0, 4);
            const double levels[] = {-1.0, -0.0, 0.0, 0.5, 0.5};
            for (i64 i = 0; i < x.size(); ++i) x.set(i, levels[pick(rng)]);
        } else {
            fill_random(x, rng, -4.0, 4.0);
        }
        fill_random(dy, rng, -1.0, 1.0);
        m_backend.maxpool_forward(a, x.t, y.t, argmax.t);

        const std::vector<double> xv = x.values();
        const std::vector<i64> expected = ref_argmax(a, xv);
        const auto* got_index = argmax.t.as<const std::int32_t>();
        const std::size_t size = dtype_size(d);
        for (i64 o = 0; o < y.size(); ++o) {
            CHECK_EQ(i64(got_index[o]), expected[o]);
            CHECK_EQ(std::memcmp(y.at(o), x.at(expected[o]), size), 0); // the stored bits
        }

        m_backend.maxpool_backward(a, dy.t, argmax.t, dx.t);
        std::vector<double> exact(x.size(), 0.0);
        std::vector<double> abs_sum(x.size(), 0.0);
        std::vector<int> hits(x.size(), 0);
        for (i64 o = 0; o < y.size(); ++o) {
            exact[expected[o]] += dy.get(o);
            abs_sum[expected[o]] += std::abs(dy.get(o));
            ++hits[expected[o]];
        }
        const bool overlap = a.stride_h < a.pool_h || a.stride_w < a.pool_w;
        const DType acc = d == DType::Float64 ? d : DType::Float32;
        for (i64 i = 0; i < x.size(); ++i) {
            const double want = round_ref(exact[i], d);
            // Without overlap dx is dy's bits; with it, each float32 addition may round too.
            const double tol = overlap ? ulp(want, d) + hits[i] * ulp(abs_sum[i], acc) : 0;
            CHECK_MSG(std::abs(dx.get(i) - want) <= tol,
                      "dx[" + arg_text(i) + "] = " + format("%.17g", double(dx.get(i))) +
                          ", expected " + format("%.17g", double(want)));
            if (hits[i] == 0) CHECK(!std::signbit(dx.get(i))); // untouched inputs get +0
        }
    }

    void maxpool_nan_propagates_data() {
        add_column<std::string>("dtype");
        for (const char* dtype : kConvDtypes) new_row(dtype) << std::string(dtype);
    }
    // A NaN in a window wins (an overflow upstream must reach the loss); -0 and +0 tie.
    void maxpool_nan_propagates() {
        FETCH(std::string, dtype);
        const DType d = dtype_named(dtype);
        Pool2dArgs a;
        a.batch = 1;
        a.in_h = 2;
        a.in_w = 4;
        a.channels = 1;
        a.out_h = 1;
        a.out_w = 2;
        HostTensor x(d, {1, 2, 4, 1}, "x"), y(d, {1, 1, 2, 1}, "y"),
            argmax(DType::Int32, {1, 1, 2, 1}, "argmax");
        // Window 0 holds x[0], x[1], x[4], x[5]; window 1 holds x[2], x[3], x[6], x[7].
        const double values[] = {-0.0, 0.0, -1.0, 1.0, 0.0, -0.0, 0.5, -0.5};
        for (i64 i = 0; i < 8; ++i) x.set(i, values[i]);
        // A NaN pattern at x[6]: all-ones exponent and mantissa, positive (in every format;
        // little endian, so the sign bit is in the last byte).
        std::memset(x.at(6), 0xFF, dtype_size(d));
        x.at(6)[dtype_size(d) - 1] &= 0x7F;
        CHECK(std::isnan(x.get(6)) || (d == DType::Float8E4M3 || d == DType::Float8E5M2));
        m_backend.maxpool_forward(a, x.t, y.t, argmax.t);
        const auto* idx = argmax.t.as<const std::int32_t>();
        CHECK_EQ(idx[0], 0); // -0 first, then +0, +0, -0: a tie, the first wins
        CHECK(std::signbit(y.get(0)) && y.get(0) == 0);
        CHECK_EQ(idx[1], 6); // NaN beats 1.0
        CHECK_EQ(std::memcmp(y.at(1), x.at(6), dtype_size(d)), 0);
    }
};

MANTISSA_TEST_MAIN(TestCpuConv, forward, forward_epilogues, backward_input, backward_filter,
                   gradients_are_finite_differences, workspace_is_bounded, errors_are_reported,
                   maxpool, maxpool_nan_propagates)
