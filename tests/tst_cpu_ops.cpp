// Parity tests of the CPU engine's core ops against naive references written here (plain loops
// in double, then the same rounding contract), with tolerances that depend on the dtype.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/dropout_hash.h"
#include "core/backend/fp8_gemm.h"
#include "core/backend/histogram.h"
#include "core/error.h"
#include "core/numeric/float_format.h"
#include "tests/unit/check_throws.h"
#include "tests/unit/files.h"
#include "tests/unit/format.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

namespace {

// A tensor with its own host storage; values are read and written through the bit-exact
// reference codec (encode_bits/decode_bits), never through the backend under test.
struct HostTensor {
    std::vector<std::uint64_t> storage;
    Tensor t;

    HostTensor(DType dtype, Shape shape, const char* name = "t") {
        t.name = name;
        t.dtype = dtype;
        t.shape = std::move(shape);
        storage.assign(t.bytes() / 8 + 2, 0);
        t.data = storage.data();
    }
    std::int64_t size() const { return t.numel(); }

    double get(std::int64_t i) const {
        const auto* bytes = static_cast<const unsigned char*>(t.data);
        switch (t.dtype) {
        case DType::UInt8:
            return bytes[i];
        case DType::Int32: {
            std::int32_t v;
            std::memcpy(&v, bytes + i * 4, 4);
            return v;
        }
        default: {
            std::uint64_t bits = 0;
            const std::size_t size = dtype_size(t.dtype);
            std::memcpy(&bits, bytes + i * size, size);
            return decode_bits(bits, t.dtype);
        }
        }
    }
    // Stores `value` rounded once to the dtype (integers: the value as given).
    void set(std::int64_t i, double value) {
        auto* bytes = static_cast<unsigned char*>(t.data);
        switch (t.dtype) {
        case DType::UInt8:
            bytes[i] = static_cast<std::uint8_t>(value);
            return;
        case DType::Int32: {
            const auto v = static_cast<std::int32_t>(value);
            std::memcpy(bytes + i * 4, &v, 4);
            return;
        }
        default: {
            const std::uint64_t bits = encode_bits(value, t.dtype);
            std::memcpy(bytes + i * dtype_size(t.dtype), &bits, dtype_size(t.dtype));
        }
        }
    }
    void fill_uniform(std::mt19937& rng, double lo, double hi) {
        std::uniform_real_distribution<double> dist(lo, hi);
        for (std::int64_t i = 0; i < size(); ++i) set(i, dist(rng));
    }
    // Values on a 1/8 grid: products and short sums are exact in float32, so the result of a
    // float32-accumulated GEMM is known exactly and only its final rounding is tested.
    void fill_grid(std::mt19937& rng, int half_range) {
        std::uniform_int_distribution<int> dist(-half_range, half_range);
        for (std::int64_t i = 0; i < size(); ++i) set(i, dist(rng) / 8.0);
    }
};

DType dtype_of(const std::string& name) {
    return dtype_from_name(name);
}

// The spacing of `dtype`'s values around |v|.
double ulp(double v, DType dtype) {
    const FloatFormat& f = float_format(dtype);
    const double a = std::fabs(v);
    if (!std::isfinite(a)) return 0.0;
    if (a < f.min_normal) return f.min_subnormal;
    return std::ldexp(1.0, std::ilogb(a) - f.mantissa_bits);
}

// Machine epsilon of the type the CPU engine computes in for `dtype`.
double compute_eps(DType dtype) {
    return dtype == DType::Float64 ? 0x1p-52 : 0x1p-23;
}

bool close(double got, double ref, double tol) {
    if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got);
    if (std::isinf(ref) || std::isinf(got)) return got == ref;
    return std::fabs(got - ref) <= tol;
}

// Fails the test with the element, the values and the tolerance; builds the message only on failure
// (a QVERIFY2 message is formatted on every call, which dominated this suite's run time).
#define CHECK_CLOSE(what, index, got, ref, tol)                                                    \
    do {                                                                                           \
        const double got_ = (got), ref_ = (ref), tol_ = (tol);                                     \
        if (!close(got_, ref_, tol_)) FAIL_TEST(describe_mismatch(what, index, got_, ref_, tol_)); \
    } while (false)

std::string describe_mismatch(const char* what, std::int64_t i, double got, double ref,
                              double tol) {
    return (arg_text(what) + "[" + arg_text(i) + "]: got " + format("%.17g", double(got)) +
            ", expected " + format("%.17g", double(ref)) + " (tolerance " +
            format("%.3g", double(tol)) + ")");
}

double ref_activation(Activation act, double x) {
    switch (act) {
    case Activation::Linear:
        return x;
    case Activation::Relu:
        return x < 0 ? 0.0 : x;
    case Activation::Gelu:
        return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::Tanh:
        return std::tanh(x);
    case Activation::Sigmoid:
        return 1.0 / (1.0 + std::exp(-x));
    case Activation::Softmax:
        break;
    }
    return std::numeric_limits<double>::quiet_NaN();
}

double ref_gelu_grad(double x) {
    const double c = std::sqrt(2.0 / M_PI), k = 0.044715;
    const double t = std::tanh(c * (x + k * x * x * x));
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * k * x * x);
}

// Applies `act` to one row of doubles (softmax needs the whole row).
void ref_activation_row(Activation act, double* row, std::int64_t n) {
    if (act != Activation::Softmax) {
        for (std::int64_t j = 0; j < n; ++j) row[j] = ref_activation(act, row[j]);
        return;
    }
    double m = row[0], sum = 0.0;
    for (std::int64_t j = 1; j < n; ++j) m = std::max(m, row[j]);
    for (std::int64_t j = 0; j < n; ++j) sum += (row[j] = std::exp(row[j] - m));
    for (std::int64_t j = 0; j < n; ++j) row[j] /= sum;
}

std::vector<std::uint8_t> workspace_for(const CpuBackend& cpu, GemmArgs& args) {
    std::vector<std::uint8_t> ws(cpu.gemm_workspace_bytes(args));
    args.workspace = {ws.data(), ws.size()};
    return ws;
}

const char* kAllFloat[] = {"float64",  "float32",     "float16",
                           "bfloat16", "float8_e4m3", "float8_e5m2"};
const char* kComputeDTypes[] = {"float64", "float32", "float16", "bfloat16"};

} // namespace

class TestCpuOps {
public:
    void info_and_allocate();
    void allocate_out_of_memory();
    void upload_download();
    void fill_data();
    void fill();
    void cast_data();
    void cast();
    void gather_batch_data();
    void gather_batch();
    void gemm_data();
    void gemm();
    void gemm_rejects_bad_shapes();
    void gemm_fp8_data();
    void gemm_fp8();
    void gemm_fp8_rules();
    void bias_grad_data();
    void bias_grad();
    void activation_forward_data();
    void activation_forward();
    void activation_backward_data();
    void activation_backward();
    void softmax_xent_data();
    void softmax_xent();
    void softmax_xent_underflow_data();
    void softmax_xent_underflow();
    void dropout_data();
    void dropout();
    void dropout_hash_is_pinned();
    void exponent_histogram_data();
    void exponent_histogram();

private:
    CpuBackend m_cpu;
};

void TestCpuOps::info_and_allocate() {
    CHECK_EQ(m_cpu.info().id, std::string("cpu"));
    CHECK(std::string_view(m_cpu.info().name).starts_with("CPU (Eigen"));
    CHECK(!m_cpu.info().is_gpu);
    CHECK(m_cpu.info().memory_total > (std::size_t(1) << 28));

    const std::size_t before = m_cpu.memory_in_use();
    {
        Buffer a = m_cpu.allocate(1000);
        Buffer b = m_cpu.allocate(3);
        CHECK(a && b);
        CHECK_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, std::uintptr_t(0));
        CHECK_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 64, std::uintptr_t(0));
        CHECK_EQ(a.size(), std::size_t(1000));
        CHECK_EQ(m_cpu.memory_in_use(), before + 1003);
        const auto* bytes = static_cast<const unsigned char*>(a.data());
        CHECK(std::all_of(bytes, bytes + 1000, [](unsigned char c) { return c == 0; }));
        Buffer moved = std::move(a);
        CHECK_EQ(m_cpu.memory_in_use(), before + 1003);
    }
    CHECK_EQ(m_cpu.memory_in_use(), before);
    Buffer empty = m_cpu.allocate(0);
    CHECK_EQ(m_cpu.memory_in_use(), before);
}

void TestCpuOps::allocate_out_of_memory() {
    const std::size_t absurd = std::size_t(1) << 62;
    try {
        Buffer b = m_cpu.allocate(absurd);
        FAIL_TEST("an absurd allocation succeeded");
    } catch (const Error& e) {
        CHECK_EQ(e.kind(), ErrorKind::OutOfMemory);
        CHECK_MSG(std::string(e.what()).find(std::to_string(absurd)) != std::string::npos,
                  e.what());
        CHECK_MSG(std::string(e.what()).find("available") != std::string::npos, e.what());
    }
    CHECK_EQ(m_cpu.memory_in_use(), std::size_t(0));
}

void TestCpuOps::upload_download() {
    HostTensor t(DType::Float16, {3, 5});
    std::vector<std::uint16_t> host(15), back(15);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::uint16_t>(0x3C00 + i);
    m_cpu.upload(host.data(), t.t);
    m_cpu.download(t.t, back.data());
    CHECK(host == back);
}

void TestCpuOps::fill_data() {
    add_column<std::string>("dtype");
    add_column<double>("value");
    for (const char* d : kAllFloat) {
        for (double v : {0.1, -3.5, 1e6, 500.0, 1e-9, -0.0})
            new_row(format("%s %g", d, v)) << std::string(d) << v;
    }
    new_row("int32 7") << std::string("int32") << 7.0;
    new_row("uint8 200") << std::string("uint8") << 200.0;
}

void TestCpuOps::fill() {
    FETCH(std::string, dtype);
    FETCH(double, value);
    const DType dt = dtype_of(dtype);
    HostTensor t(dt, {4, 33});
    m_cpu.fill(t.t, value);
    const double expected = is_floating(dt) ? round_to_dtype(value, dt) : value;
    for (std::int64_t i = 0; i < t.size(); ++i) CHECK_CLOSE("fill", i, t.get(i), expected, 0);
    if (is_floating(dt) && value == 0.0) CHECK(std::signbit(t.get(0)) == std::signbit(value));
}

void TestCpuOps::cast_data() {
    add_column<std::string>("from");
    add_column<std::string>("to");
    for (const char* from : kAllFloat)
        for (const char* to : kAllFloat)
            new_row(format("%s->%s", from, to)) << std::string(from) << std::string(to);
    for (const char* to : kAllFloat) {
        new_row(format("uint8->%s", to)) << std::string("uint8") << std::string(to);
        new_row(format("int32->%s", to)) << std::string("int32") << std::string(to);
    }
}

void TestCpuOps::cast() {
    FETCH(std::string, from);
    FETCH(std::string, to);
    const DType src_dtype = dtype_of(from), dst_dtype = dtype_of(to);
    const double inf = std::numeric_limits<double>::infinity();
    // Edges: overflow (70000 -> inf in float16, 500 -> NaN in e4m3), ties, subnormals, specials.
    std::vector<double> values = {
        0.0,        -0.0,      1.0,           -2.5,
        0.1,        1.0 / 3.0, 70000.0,       -70000.0,
        500.0,      448.0,     464.0,         1e-5,
        6e-8,       3e-8,      1e-40,         1e-300,
        65504.0,    65520.0,   1.00048828125, 255.0,
        16777217.0, inf,       -inf,          std::numeric_limits<double>::quiet_NaN()};
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> mant(-1.0, 1.0);
    std::uniform_int_distribution<int> expo(-30, 20);
    for (int i = 0; i < 4000; ++i) values.push_back(std::ldexp(mant(rng), expo(rng)));
    if (!is_floating(src_dtype)) {
        for (double& v : values) {
            if (!std::isfinite(v)) v = 3.0;
            v = std::nearbyint(std::fabs(v));
            if (src_dtype == DType::UInt8) v = std::fmod(v, 256.0);
            if (src_dtype == DType::Int32) v = std::min(v, 2147483647.0);
        }
        values.push_back(src_dtype == DType::UInt8 ? 255.0 : 16777217.0); // int32: not exact in f32
    }
    HostTensor src(src_dtype, {static_cast<std::int64_t>(values.size())});
    for (std::size_t i = 0; i < values.size(); ++i)
        src.set(static_cast<std::int64_t>(i), values[i]);
    HostTensor dst(dst_dtype, src.t.shape);
    m_cpu.cast(src.t, dst.t);
    for (std::int64_t i = 0; i < src.size(); ++i) {
        const double expected = round_to_dtype(src.get(i), dst_dtype); // ONE rounding
        CHECK_CLOSE("cast", i, dst.get(i), expected, 0);
    }
    if (src_dtype == DType::Float32 && dst_dtype == DType::Float16) {
        src.set(0, 70000.0);
        m_cpu.cast(src.t, dst.t);
        CHECK_EQ(dst.get(0), inf); // the Keras guide's overflow
    }
    if (src_dtype == DType::Float32 && dst_dtype == DType::Float8E4M3) {
        src.set(0, 500.0);
        m_cpu.cast(src.t, dst.t);
        CHECK(std::isnan(dst.get(0))); // e4m3 has no inf: overflow is NaN
    }
}

void TestCpuOps::gather_batch_data() {
    add_column<std::string>("dtype");
    add_column<bool>("flat"); // images (N, 784) instead of (N, 28, 28)
    for (const char* d : kAllFloat) {
        new_row(format("%s", d)) << std::string(d) << false;
        new_row(format("%s flat", d)) << std::string(d) << true;
    }
}

void TestCpuOps::gather_batch() {
    FETCH(std::string, dtype);
    FETCH(bool, flat);
    const DType dt = dtype_of(dtype);
    const std::int64_t n = 9;
    HostTensor images(DType::UInt8, flat ? Shape{n, 784} : Shape{n, 28, 28}, "images");
    HostTensor labels(DType::UInt8, {n}, "labels");
    for (std::int64_t i = 0; i < images.size(); ++i)
        images.set(i, double((i * 37 + i / 784) % 256));
    for (std::int64_t i = 0; i < n; ++i) labels.set(i, double(i % 10));
    HostTensor perm(DType::Int32, {n}, "perm");
    const int order[] = {4, 2, 7, 0, 8, 1, 3, 6, 5};
    for (std::int64_t i = 0; i < n; ++i) perm.set(i, order[i]);

    const std::int64_t rows = 5, offset = 2, count = 3; // rows 3 and 4 are padding
    HostTensor batch(dt, {rows, 784}, "batch");
    HostTensor batch_labels(DType::Int32, {rows}, "batch_labels");
    // The offset given on the host, then read from the step scalars' batch_position (issue 26:
    // a captured step reads it on the device; the host offset 0 is then ignored).
    HostTensor scalars(DType::UInt8, {static_cast<std::int64_t>(sizeof(StepScalars))}, "scalars");
    StepScalars at;
    at.batch_position = offset;
    std::memcpy(scalars.t.data, &at, sizeof at);
    for (const bool on_device : {false, true}) {
        m_cpu.gather_batch(images.t, labels.t, perm.t, on_device ? 0 : offset, count,
                           on_device ? &scalars.t : nullptr, batch.t, batch_labels.t);
        for (std::int64_t r = 0; r < rows; ++r) {
            const int image = order[offset + (r < count ? r : 0)];
            CHECK_EQ(batch_labels.get(r), double(image % 10));
            for (std::int64_t f = 0; f < 784; ++f) {
                const double expected = round_to_dtype(images.get(image * 784 + f) / 255.0, dt);
                CHECK_CLOSE("batch", r * 784 + f, batch.get(r * 784 + f), expected, 0);
            }
        }
    }
    // An out-of-range permutation entry is an error, not a read past the images.
    perm.set(3, 99);
    CHECK_THROWS(Error, m_cpu.gather_batch(images.t, labels.t, perm.t, offset, count, nullptr,
                                           batch.t, batch_labels.t));
}

void TestCpuOps::gemm_data() {
    add_column<std::string>("dtype");
    add_column<std::string>("c_dtype");
    add_column<bool>("ta");
    add_column<bool>("tb");
    add_column<int>("m");
    add_column<int>("k");
    add_column<int>("n");
    add_column<bool>("bias");
    add_column<std::string>("epilogue");
    add_column<bool>("pre_activation");
    add_column<bool>("accumulate");
    add_column<bool>("exact"); // grid inputs: float32 accumulation is exact, test rounding
    for (const char* d : kComputeDTypes) {
        const std::string dt(d);
        for (int t = 0; t < 4; ++t) {
            const bool ta = t & 1, tb = t & 2;
            new_row(format("%s 7x13x5 ta=%d tb=%d", d, ta, tb))
                << dt << dt << ta << tb << 7 << 13 << 5 << false << "linear" << false << false
                << false;
            new_row(format("%s exact 9x16x11 ta=%d tb=%d", d, ta, tb))
                << dt << dt << ta << tb << 9 << 16 << 11 << true << "relu" << false << false
                << true;
        }
        for (const char* act : {"linear", "relu", "gelu", "tanh", "sigmoid", "softmax"})
            new_row(format("%s bias+%s 6x19x10", d, act))
                << dt << dt << false << false << 6 << 19 << 10 << true << std::string(act) << true
                << false << false;
        new_row(format("%s accumulate", d)) << dt << dt << true << false << 8 << 21 << 6 << false
                                            << "linear" << false << true << false;
        new_row(format("%s accumulate+bias exact", d)) << dt << dt << false << true << 5 << 12 << 7
                                                       << true << "linear" << false << true << true;
        new_row(format("%s 64x200x48", d)) << dt << dt << false << false << 64 << 200 << 48 << true
                                           << "relu" << false << false << false;
    }
    // C in another dtype than A/B: rounded once to C's.
    new_row("float16 -> float32 C")
        << "float16"
        << "float32" << false << true << 7 << 13 << 5 << true << "gelu" << true << false << false;
    new_row("float32 -> bfloat16 C")
        << "float32"
        << "bfloat16" << true << false << 7 << 13 << 5 << true << "relu" << false << false << false;
    new_row("bfloat16 -> float16 C exact")
        << "bfloat16"
        << "float16" << false << false << 7 << 13 << 5 << true << "linear" << false << true << true;
    new_row("float64 -> float32 C")
        << "float64"
        << "float32" << false << false << 7 << 13 << 5 << true << "tanh" << true << false << false;
    new_row("float32 -> float16 C accumulate") << "float32"
                                               << "float16" << false << false << 6 << 9 << 4
                                               << false << "linear" << false << true << false;
}

void TestCpuOps::gemm() {
    FETCH(std::string, dtype);
    FETCH(std::string, c_dtype);
    FETCH(bool, ta);
    FETCH(bool, tb);
    FETCH(int, m);
    FETCH(int, k);
    FETCH(int, n);
    FETCH(bool, bias);
    FETCH(std::string, epilogue);
    FETCH(bool, pre_activation);
    FETCH(bool, accumulate);
    FETCH(bool, exact);
    const DType dt = dtype_of(dtype), cdt = dtype_of(c_dtype);
    const Activation act = activation_from_name(epilogue);
    std::mt19937 rng(static_cast<unsigned>(m * 1000 + k * 10 + n + ta + 2 * tb));

    HostTensor a(dt, ta ? Shape{k, m} : Shape{m, k}, "a"); // (m, k) or (k, m)
    HostTensor b(dt, tb ? Shape{n, k} : Shape{k, n}, "b"); // (k, n) or (n, k)
    HostTensor c(cdt, {m, n}, "c");                        // (m, n)
    HostTensor bias_t(dt, {n}, "bias");                    // (n)
    HostTensor pre(dt, {m, n}, "pre_activation");          // (m, n)
    if (exact) {
        a.fill_grid(rng, 16);
        b.fill_grid(rng, 16);
        bias_t.fill_grid(rng, 32);
        c.fill_grid(rng, 32);
    } else {
        a.fill_uniform(rng, -1.0, 1.0);
        b.fill_uniform(rng, -1.0, 1.0);
        bias_t.fill_uniform(rng, -0.5, 0.5);
        c.fill_uniform(rng, -1.0, 1.0);
    }
    std::vector<double> c_old(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m * n; ++i) c_old[static_cast<std::size_t>(i)] = c.get(i);

    GemmArgs args;
    args.a = &a.t;
    args.transpose_a = ta;
    args.b = &b.t;
    args.transpose_b = tb;
    args.c = &c.t;
    args.bias = bias ? &bias_t.t : nullptr;
    args.epilogue = act;
    args.pre_activation = pre_activation ? &pre.t : nullptr;
    args.accumulate = accumulate;
    const auto ws = workspace_for(m_cpu, args);
    if (is_emulated_float(dt)) CHECK(ws.size() >= std::size_t(a.size() + b.size()) * 4);
    if (dt == cdt && !is_emulated_float(dt)) CHECK_EQ(ws.size(), std::size_t(0));
    m_cpu.gemm(args);

    // Reference: exact products summed in double, bias, epilogue, ONE rounding to C's dtype.
    const double eps = compute_eps(dt);
    const bool narrower = cdt != DType::Float64 && !(cdt == DType::Float32 && dt != DType::Float64);
    for (std::int64_t i = 0; i < m; ++i) {
        std::vector<double> row(static_cast<std::size_t>(n)), mag(static_cast<std::size_t>(n));
        for (std::int64_t j = 0; j < n; ++j) {
            double sum = 0.0, abs_sum = 0.0;
            for (std::int64_t p = 0; p < k; ++p) {
                const double av = ta ? a.get(p * m + i) : a.get(i * k + p);
                const double bv = tb ? b.get(j * k + p) : b.get(p * n + j);
                sum += av * bv;
                abs_sum += std::fabs(av * bv);
            }
            if (bias) sum += bias_t.get(j);
            row[static_cast<std::size_t>(j)] = sum;
            mag[static_cast<std::size_t>(j)] = abs_sum + (bias ? std::fabs(bias_t.get(j)) : 0.0);
        }
        const std::vector<double> pre_row = row;
        ref_activation_row(act, row.data(), n);
        for (std::int64_t j = 0; j < n; ++j) {
            const auto jj = static_cast<std::size_t>(j);
            double ref = row[jj];
            if (accumulate) ref += c_old[static_cast<std::size_t>(i * n + j)];
            const double rounded = round_to_dtype(ref, cdt);
            // float32-accumulation error, activation math in the compute type, then at most one
            // ulp of C where the compute type's result sits on the other side of a rounding tie.
            double tol = 0.0;
            if (!exact) {
                const double in_mag = mag[jj] + (accumulate ? std::fabs(c_old[i * n + j]) : 0.0);
                tol = 4.0 * eps * (in_mag + std::fabs(pre_row[jj]) + std::fabs(ref) + 1e-30) +
                      (narrower ? ulp(ref, cdt) : 0.0);
                if (!narrower) tol += 2.0 * ulp(ref, cdt);
            }
            const double got = c.get(i * n + j);
            CHECK_CLOSE("c", i * n + j, got, rounded, tol);
            if (pre_activation) {
                const double pre_ref = round_to_dtype(pre_row[jj], dt);
                const double pre_tol =
                    4.0 * eps * mag[jj] + (is_emulated_float(dt) ? ulp(pre_ref, dt) : 0.0);
                CHECK_CLOSE("pre_activation", i * n + j, pre.get(i * n + j), pre_ref, pre_tol);
            }
        }
    }
}

void TestCpuOps::gemm_rejects_bad_shapes() {
    HostTensor a(DType::Float32, {4, 5}), b(DType::Float32, {6, 3}), c(DType::Float32, {4, 3});
    GemmArgs args;
    args.a = &a.t;
    args.b = &b.t;
    args.c = &c.t;
    try {
        m_cpu.gemm(args);
        FAIL_TEST("inner dimensions 5 vs 6 accepted");
    } catch (const Error& e) {
        CHECK_EQ(e.kind(), ErrorKind::Internal);
        CHECK_MSG(std::string(e.what()).find("inner dimensions") != std::string::npos, e.what());
    }
    HostTensor b2(DType::Float32, {5, 3}), c2(DType::Float32, {3, 3});
    args.b = &b2.t;
    args.c = &c2.t;
    CHECK_THROWS(Error, m_cpu.gemm(args)); // C has the wrong rows

    // An emulated GEMM without its workspace is refused, not run out of bounds.
    HostTensor a16(DType::Float16, {4, 5}), b16(DType::Float16, {5, 3}),
        c16(DType::Float16, {4, 3});
    GemmArgs half;
    half.a = &a16.t;
    half.b = &b16.t;
    half.c = &c16.t;
    CHECK(m_cpu.gemm_workspace_bytes(half) >= (20 + 15 + 12) * 4);
    CHECK_THROWS(Error, m_cpu.gemm(half));
}

// An FP8 code's value from its fields, written out here rather than taken from any codec (OCP
// OFP8 v1.0): E4M3 bias 7, subnormals (exponent 0) m/8 · 2^-6, no infinity; E5M2 bias 15,
// subnormals m/4 · 2^-14. The test only builds finite codes.
double fp8_value(std::uint8_t code, DType dtype) {
    const bool e4m3 = dtype == DType::Float8E4M3;
    const int mant_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
    const int exponent = (code & 0x7F) >> mant_bits;
    const int mantissa = code & ((1 << mant_bits) - 1);
    const double frac = double(mantissa) / double(1 << mant_bits);
    const double magnitude =
        exponent == 0 ? std::ldexp(frac, 1 - bias) : std::ldexp(1.0 + frac, exponent - bias);
    return (code & 0x80) ? -magnitude : magnitude;
}

// A random code whose value is 0 or of magnitude in [1/4, 8): products then span 2^-4 .. 2^6 with
// at most 8 significant bits, so a float32 sum of up to 2^8 of them is exact, and the engine's
// result is known exactly: only the scales and the final rounding are tested.
std::uint8_t fp8_code(std::mt19937& rng, DType dtype) {
    const bool e4m3 = dtype == DType::Float8E4M3;
    const int mant_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
    std::uniform_int_distribution<int> pick(0, 255);
    const int r = pick(rng);
    if (r < 16) return static_cast<std::uint8_t>(r < 8 ? 0x00 : 0x80); // +0 and -0
    const int exponent = bias - 2 + r % 5;                             // 2^-2 .. 2^2
    const int mantissa = (r >> 3) & ((1 << mant_bits) - 1);
    return static_cast<std::uint8_t>(((r & 1) << 7) | (exponent << mant_bits) | mantissa);
}

void TestCpuOps::gemm_fp8_data() {
    add_column<std::string>("a_dtype");
    add_column<std::string>("b_dtype");
    add_column<std::string>("c_dtype");
    add_column<bool>("tb");
    add_column<double>("a_scale"); // 0: no scale tensor (1)
    add_column<double>("b_scale");
    add_column<bool>("epilogue"); // bias (bfloat16) + ReLU, the pre-activation written too
    new_row("e4m3 x e4m3 -> float32, C = A B^T") << "float8_e4m3"
                                                 << "float8_e4m3"
                                                 << "float32" << true << 0.25 << 8.0 << false;
    new_row("e4m3 x e4m3 -> bfloat16, C = A B") << "float8_e4m3"
                                                << "float8_e4m3"
                                                << "bfloat16" << false << 0x1p-9 << 0x1p+3 << false;
    new_row("e5m2 x e4m3 -> bfloat16, C = A B^T") << "float8_e5m2"
                                                  << "float8_e4m3"
                                                  << "bfloat16" << true << 4.0 << 0.0 << false;
    new_row("e4m3 x e5m2 -> float32, no scales") << "float8_e4m3"
                                                 << "float8_e5m2"
                                                 << "float32" << false << 0.0 << 0.0 << false;
    new_row("e4m3 x e4m3 -> bfloat16, bias + relu") << "float8_e4m3"
                                                    << "float8_e4m3"
                                                    << "bfloat16" << true << 0.5 << 2.0 << true;
}

// FP8 codes with power-of-two decode scales: the CPU engine's result equals the exact float64
// value (codes decoded by hand, times the scales) rounded once to C, element for element.
void TestCpuOps::gemm_fp8() {
    FETCH(std::string, a_dtype);
    FETCH(std::string, b_dtype);
    FETCH(std::string, c_dtype);
    FETCH(bool, tb);
    FETCH(double, a_scale);
    FETCH(double, b_scale);
    FETCH(bool, epilogue);
    const DType adt = dtype_of(a_dtype), bdt = dtype_of(b_dtype), cdt = dtype_of(c_dtype);
    const std::int64_t m = 16, k = 32, n = 16;
    std::mt19937 rng(1800 + static_cast<unsigned>(cdt) * 7 + static_cast<unsigned>(adt));
    HostTensor a(adt, {m, k}, "a"), b(bdt, tb ? Shape{n, k} : Shape{k, n}, "b"), c(cdt, {m, n});
    auto* a_codes = static_cast<std::uint8_t*>(a.t.data);
    auto* b_codes = static_cast<std::uint8_t*>(b.t.data);
    for (std::int64_t i = 0; i < m * k; ++i) a_codes[i] = fp8_code(rng, adt);
    for (std::int64_t i = 0; i < k * n; ++i) b_codes[i] = fp8_code(rng, bdt);
    HostTensor sa(DType::Float32, {1}, "a_scale"), sb(DType::Float32, {1}, "b_scale");
    sa.set(0, a_scale);
    sb.set(0, b_scale);
    GemmArgs args;
    args.a = &a.t;
    args.b = &b.t;
    args.transpose_b = tb;
    args.c = &c.t;
    args.a_scale = a_scale != 0 ? &sa.t : nullptr;
    args.b_scale = b_scale != 0 ? &sb.t : nullptr;
    // Bias values on a grid of 1/4 in [-8, 8): the float32 sum with the product stays exact.
    HostTensor bias(DType::BFloat16, {n}, "bias"), pre(DType::Float32, {m, n}, "pre");
    for (std::int64_t j = 0; j < n; ++j) bias.set(j, static_cast<double>(j % 64) / 4.0 - 8.0);
    if (epilogue) {
        args.bias = &bias.t;
        args.epilogue = Activation::Relu;
        args.pre_activation = &pre.t;
    }
    const auto ws = workspace_for(m_cpu, args);
    m_cpu.gemm(args);
    const double scale = (a_scale != 0 ? a_scale : 1.0) * (b_scale != 0 ? b_scale : 1.0);
    int nonzero = 0;
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (std::int64_t p = 0; p < k; ++p)
                sum += fp8_value(a_codes[i * k + p], adt) *
                       fp8_value(b_codes[tb ? j * k + p : p * n + j], bdt);
            // cuBLASLt's order: the scales on the product, then the bias, then the activation.
            const double exact = sum * scale + (epilogue ? bias.get(j) : 0.0);
            const double act = epilogue ? std::max(exact, 0.0) : exact;
            const double want = decode_bits(encode_bits(act, cdt), cdt); // rounded once
            CHECK_CLOSE("C", i * n + j, c.get(i * n + j), want, 0.0);
            if (epilogue) CHECK_CLOSE("pre", i * n + j, pre.get(i * n + j), exact, 0.0);
            nonzero += exact != 0 ? 1 : 0;
        }
    CHECK(nonzero > m * n / 2);
}

// The FP8 contract every engine shares (fp8_gemm.h): refused with InvalidArgument naming the rule.
void TestCpuOps::gemm_fp8_rules() {
    HostTensor a(DType::Float8E4M3, {16, 32}), b(DType::Float8E4M3, {16, 32}),
        c(DType::Float32, {16, 16}), scale(DType::Float32, {1});
    GemmArgs ok;
    ok.a = &a.t;
    ok.b = &b.t;
    ok.transpose_b = true;
    ok.c = &c.t;
    ok.a_scale = &scale.t;
    check_fp8_gemm_tn(ok); // the layout the CUDA engine takes
    auto refused = [&](GemmArgs args, const char* rule, bool tn_only) {
        try {
            if (tn_only) {
                check_fp8_gemm_tn(args);
            } else {
                std::vector<std::uint8_t> ws(1 << 16);
                args.workspace = {ws.data(), ws.size()};
                m_cpu.gemm(args);
            }
            FAIL_TEST(std::string("accepted: ") + rule);
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::InvalidArgument);
            CHECK_MSG(std::string(e.what()).find(rule) != std::string::npos, e.what());
            CHECK_MSG(std::string(e.what()).find("gemm (FP8)") != std::string::npos, e.what());
        }
    };
    HostTensor e5(DType::Float8E5M2, {16, 32}), f32(DType::Float32, {16, 32}),
        c16(DType::Float16, {16, 16}), bias(DType::Float32, {16}), wide_scale(DType::Float64, {1});
    GemmArgs g = ok;
    g.a = &e5.t;
    g.b = &e5.t;
    refused(g, "float8_e5m2 · float8_e5m2", false);
    g = ok;
    g.b = &f32.t;
    refused(g, "must both be float8", false);
    g = ok;
    g.a = &f32.t;
    g.b = &f32.t; // decode scales on float32 operands: NVFP4's tensor scales, accepted
    check_scaled_gemm(g);
    CHECK(uses_scaled_gemm(g) && !uses_fp8_gemm(g));
    for (bool accumulate : {true, false}) {
        GemmArgs scaled = g;
        scaled.accumulate = accumulate; // C += would be scaled too: refused
        HostTensor b16(DType::BFloat16, {16, 32});
        if (!accumulate) scaled.b = &b16.t; // A and B must share a dtype
        try {
            check_scaled_gemm(scaled);
            FAIL_TEST("accepted a scaled GEMM it should refuse");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::InvalidArgument);
            CHECK_MSG(std::string(e.what()).find("gemm (scaled)") != std::string::npos, e.what());
            CHECK_MSG(std::string(e.what()).find(accumulate ? "no accumulate" : "one of float32") !=
                          std::string::npos,
                      e.what());
        }
    }
    g = ok;
    g.c = &c16.t;
    refused(g, "C must be float32 or bfloat16", false);
    g = ok;
    g.bias = &bias.t;
    g.epilogue = Activation::Softmax;
    refused(g, "no softmax epilogue", false);
    g = ok;
    g.accumulate = true;
    refused(g, "no accumulate", false);
    g = ok;
    g.bias = &bias.t; // bias and an elementwise epilogue after the scales: accepted
    g.epilogue = Activation::Relu;
    check_fp8_gemm_tn(g);
    g = ok;
    g.a_scale = &wide_scale.t;
    refused(g, "a_scale must be a one-element float32 tensor", false);
    // cuBLASLt's layout rule, checked where no GPU is: TN only; any sizes (the CUDA engine pads
    // them to its multiples of 16), but sizes that fit each other.
    g = ok;
    g.transpose_b = false;
    HostTensor b_kn(DType::Float8E4M3, {32, 16});
    g.b = &b_kn.t;
    m_cpu.gemm_workspace_bytes(g); // the CPU engine takes every layout
    refused(g, "TN", true);
    HostTensor a_odd(DType::Float8E4M3, {16, 10}), b_odd(DType::Float8E4M3, {16, 10});
    g = ok;
    g.a = &a_odd.t;
    g.b = &b_odd.t;
    check_fp8_gemm_tn(g); // k = 10: padded on the CUDA engine
    HostTensor b_short(DType::Float8E4M3, {16, 8});
    g.b = &b_short.t;
    refused(g, "the sizes do not fit", true);
}

void TestCpuOps::bias_grad_data() {
    add_column<std::string>("dtype");
    add_column<std::string>("db_dtype");
    for (const char* d : kComputeDTypes)
        new_row(format("%s", d)) << std::string(d) << std::string(d);
    new_row("float16 -> float32") << "float16"
                                  << "float32";
    new_row("bfloat16 -> float32") << "bfloat16"
                                   << "float32";
}

void TestCpuOps::bias_grad() {
    FETCH(std::string, dtype);
    FETCH(std::string, db_dtype);
    const DType dt = dtype_of(dtype), dbt = dtype_of(db_dtype);
    std::mt19937 rng(3);
    const std::int64_t rows = 37, cols = 2500; // cols > one stack chunk
    HostTensor dy(dt, {rows, cols}, "dy");     // (batch, units)
    HostTensor db(dbt, {cols}, "db");          // (units)
    dy.fill_uniform(rng, -1.0, 1.0);
    m_cpu.bias_grad(dy.t, db.t);
    for (std::int64_t j = 0; j < cols; ++j) {
        double sum = 0.0, mag = 0.0;
        for (std::int64_t r = 0; r < rows; ++r) {
            sum += dy.get(r * cols + j);
            mag += std::fabs(dy.get(r * cols + j));
        }
        const double ref = round_to_dtype(sum, dbt);
        const double tol =
            rows * compute_eps(dt) * mag + (dbt != DType::Float64 ? ulp(sum, dbt) : 0.0);
        CHECK_CLOSE("db", j, db.get(j), ref, tol);
    }
}

void TestCpuOps::activation_forward_data() {
    add_column<std::string>("dtype");
    add_column<std::string>("act");
    for (const char* d : kComputeDTypes)
        for (const char* act : {"linear", "relu", "gelu", "tanh", "sigmoid", "softmax"})
            new_row(format("%s %s", d, act)) << std::string(d) << std::string(act);
}

void TestCpuOps::activation_forward() {
    FETCH(std::string, dtype);
    FETCH(std::string, act);
    const DType dt = dtype_of(dtype);
    const Activation a = activation_from_name(act);
    std::mt19937 rng(5);
    const std::int64_t rows = 7, cols = 613; // (batch, units): several chunks, odd sizes
    HostTensor x(dt, {rows, cols}, "x");
    HostTensor y(dt, {rows, cols}, "y");
    x.fill_uniform(rng, -6.0, 6.0);
    for (double special : {0.0, -0.0, 30.0, -30.0, 1e-3, -1e-3}) x.set(rng() % x.size(), special);
    m_cpu.activation_forward(a, x.t, y.t);

    const bool exact_op = a == Activation::Linear || a == Activation::Relu;
    for (std::int64_t r = 0; r < rows; ++r) {
        std::vector<double> row(static_cast<std::size_t>(cols));
        for (std::int64_t j = 0; j < cols; ++j) row[j] = x.get(r * cols + j);
        ref_activation_row(a, row.data(), cols);
        for (std::int64_t j = 0; j < cols; ++j) {
            const std::int64_t i = r * cols + j;
            const double ref = round_to_dtype(row[j], dt);
            // float32 math (tanh, exp) is good to a few float32 ulps of the inputs' scale; the
            // emulated dtypes may then round to the neighbouring value.
            const double tol =
                exact_op
                    ? 0.0
                    : 8.0 * compute_eps(dt) * (std::fabs(row[j]) + std::fabs(x.get(i)) * 1e-2) +
                          (is_emulated_float(dt) ? ulp(row[j], dt) : 0.0) +
                          (a == Activation::Gelu ? 4.0 * compute_eps(dt) * std::fabs(x.get(i))
                                                 : 0.0);
            CHECK_CLOSE("y", i, y.get(i), ref, tol);
        }
    }
}

void TestCpuOps::activation_backward_data() {
    activation_forward_data();
}

void TestCpuOps::activation_backward() {
    FETCH(std::string, dtype);
    FETCH(std::string, act);
    const DType dt = dtype_of(dtype);
    const Activation a = activation_from_name(act);
    std::mt19937 rng(9);
    const std::int64_t rows = 5, cols = 431;
    HostTensor x(dt, {rows, cols}, "x"), y(dt, {rows, cols}, "y");
    HostTensor dy(dt, {rows, cols}, "dy"), dx(dt, {rows, cols}, "dx");
    x.fill_uniform(rng, -5.0, 5.0);
    dy.fill_uniform(rng, -2.0, 2.0);
    // y as the forward pass stored it: the reference activation rounded to the dtype.
    for (std::int64_t r = 0; r < rows; ++r) {
        std::vector<double> row(static_cast<std::size_t>(cols));
        for (std::int64_t j = 0; j < cols; ++j) row[j] = x.get(r * cols + j);
        ref_activation_row(a, row.data(), cols);
        for (std::int64_t j = 0; j < cols; ++j) y.set(r * cols + j, row[j]);
    }
    m_cpu.activation_backward(a, x.t, y.t, dy.t, dx.t);

    const double eps = compute_eps(dt);
    for (std::int64_t r = 0; r < rows; ++r) {
        double dot = 0.0, dot_mag = 0.0;
        for (std::int64_t j = 0; j < cols; ++j) {
            dot += dy.get(r * cols + j) * y.get(r * cols + j);
            dot_mag += std::fabs(dy.get(r * cols + j) * y.get(r * cols + j));
        }
        for (std::int64_t j = 0; j < cols; ++j) {
            const std::int64_t i = r * cols + j;
            const double xv = x.get(i), yv = y.get(i), g = dy.get(i);
            double ref = 0.0, mag = std::fabs(g);
            switch (a) {
            case Activation::Linear:
                ref = g;
                break;
            case Activation::Relu:
                ref = yv > 0 ? g : 0.0;
                break;
            case Activation::Gelu:
                ref = g * ref_gelu_grad(xv);
                mag *= 1.2 + std::fabs(xv);
                break;
            case Activation::Tanh:
                ref = g * (1.0 - yv * yv);
                break;
            case Activation::Sigmoid:
                ref = g * yv * (1.0 - yv);
                break;
            case Activation::Softmax:
                ref = yv * (g - dot);
                mag = yv * (std::fabs(g) + cols * dot_mag);
                break;
            }
            const bool exact_op = a == Activation::Linear || a == Activation::Relu;
            const double rounded = round_to_dtype(ref, dt);
            const double tol =
                exact_op ? 0.0 : 8.0 * eps * mag + (is_emulated_float(dt) ? ulp(ref, dt) : 0.0);
            CHECK_CLOSE("dx", i, dx.get(i), rounded, tol);
        }
    }
}

void TestCpuOps::softmax_xent_data() {
    add_column<std::string>("dtype");
    add_column<bool>("with_dlogits");
    for (const char* d : kComputeDTypes) {
        new_row(format("%s", d)) << std::string(d) << true;
        new_row(format("%s eval", d)) << std::string(d) << false;
    }
}

void TestCpuOps::softmax_xent() {
    FETCH(std::string, dtype);
    FETCH(bool, with_dlogits);
    const DType dt = dtype_of(dtype);
    const std::int64_t rows = 9, classes = 10, valid = 6; // rows 6..8 are padding
    std::mt19937 rng(11);
    HostTensor logits(dt, {rows, classes}, "logits");  // (batch, classes)
    HostTensor labels(DType::Int32, {rows}, "labels"); // (batch)
    HostTensor probs(dt, {rows, classes}, "probs");
    HostTensor dlogits(dt, {rows, classes}, "dlogits");
    logits.fill_uniform(rng, -4.0, 4.0);
    for (std::int64_t r = 0; r < rows; ++r) labels.set(r, double((r * 3) % classes));
    for (std::int64_t j = 0; j < classes; ++j) logits.set(2 * classes + j, 0.5);  // a tie row
    labels.set(2, 0.0);                                                           // ties -> index 0
    for (std::int64_t j = 0; j < classes; ++j) dlogits.set(7 * classes + j, 9.0); // padding garbage

    StepScalars s;
    s.loss_scale = 1024.0;
    s.loss_sum = 1.5;
    s.correct = 2;
    s.examples = 3;
    HostTensor scalars(DType::UInt8, {std::int64_t(sizeof(StepScalars))}, "scalars");
    std::memcpy(scalars.t.data, &s, sizeof s);

    SoftmaxXentArgs args;
    args.logits = &logits.t;
    args.labels = &labels.t;
    args.valid_rows = valid;
    args.probs = &probs.t;
    args.dlogits = with_dlogits ? &dlogits.t : nullptr;
    args.scalars = &scalars.t;
    m_cpu.softmax_cross_entropy(args);
    StepScalars out;
    std::memcpy(&out, scalars.t.data, sizeof out);

    const bool emulated = is_emulated_float(dt);
    const double g = 1024.0 / valid;
    double loss_ref = 0.0, loss_tol = 0.0;
    std::int64_t correct_ref = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        const int label = static_cast<int>(labels.get(r));
        std::vector<double> x(classes), p(classes);
        for (std::int64_t j = 0; j < classes; ++j) x[j] = logits.get(r * classes + j);
        const double m = *std::max_element(x.begin(), x.end());
        const auto best = std::max_element(x.begin(), x.end()) - x.begin(); // first maximum
        double sum = 0.0;
        if (emulated) { // the op-by-op contract: e, s and p each rounded to the dtype
            for (std::int64_t j = 0; j < classes; ++j)
                sum += (p[j] = round_to_dtype(std::exp(x[j] - m), dt));
            sum = round_to_dtype(sum, dt);
            for (std::int64_t j = 0; j < classes; ++j) p[j] = round_to_dtype(p[j] / sum, dt);
        } else {
            for (std::int64_t j = 0; j < classes; ++j) sum += (p[j] = std::exp(x[j] - m));
            for (std::int64_t j = 0; j < classes; ++j) p[j] /= sum;
        }
        // e and s may each land one ulp away (float32 exp and sum vs double), so p may move a
        // couple of ulps.
        for (std::int64_t j = 0; j < classes; ++j) {
            const std::int64_t i = r * classes + j;
            const double pref = round_to_dtype(p[j], dt);
            const double ptol =
                emulated ? 3.0 * ulp(p[j], dt) : 8.0 * compute_eps(dt) * p[j] + ulp(p[j], dt);
            CHECK_CLOSE("probs", i, probs.get(i), pref, ptol);
            if (!with_dlogits) continue;
            if (r >= valid) {
                CHECK_EQ(dlogits.get(i), 0.0);
                continue;
            }
            const double dref = (p[j] - (j == label ? 1.0 : 0.0)) * g;
            const double drounded = round_to_dtype(dref, dt);
            const double dtol =
                (emulated ? ptol : 8.0 * compute_eps(dt) * p[j]) * g + ulp(dref, dt);
            CHECK_CLOSE("dlogits", i, dlogits.get(i), drounded, dtol);
        }
        if (r < valid) {
            loss_ref += -std::log(p[label]);
            loss_tol += emulated ? 4.0 * ulp(p[label], dt) / p[label] : 1e-5;
            correct_ref += best == label;
        }
    }
    CHECK_EQ(out.examples, std::int64_t(3 + valid));
    CHECK_EQ(out.correct, 2 + correct_ref);
    CHECK_MSG(close(out.loss_sum, 1.5 + loss_ref, loss_tol + 1e-9),
              describe_mismatch("loss_sum", 0, out.loss_sum, 1.5 + loss_ref, loss_tol));
    CHECK_EQ(out.loss_scale, 1024.0); // read, never written
}

void TestCpuOps::softmax_xent_underflow_data() {
    add_column<std::string>("dtype");
    add_column<bool>("expect_inf");
    // exp(-20) = 2e-9 is below float16's smallest subnormal (6e-8): p = 0, loss = inf.
    new_row("float16") << "float16" << true;
    new_row("bfloat16") << "bfloat16" << false; // float32's range: finite
    new_row("float32") << "float32" << false;
    new_row("float64") << "float64" << false;
}

void TestCpuOps::softmax_xent_underflow() {
    FETCH(std::string, dtype);
    FETCH(bool, expect_inf);
    const DType dt = dtype_of(dtype);
    HostTensor logits(dt, {2, 4}, "logits"), labels(DType::Int32, {2}, "labels");
    HostTensor probs(dt, {2, 4}, "probs"), dlogits(dt, {2, 4}, "dlogits");
    const double row[] = {0.0, 20.0, 1.0, -1.0};
    for (int j = 0; j < 4; ++j) logits.set(j, row[j]);
    for (int j = 0; j < 4; ++j) logits.set(4 + j, row[j]); // a padding row: its loss is not counted
    labels.set(0, 0);
    labels.set(1, 0);
    StepScalars s;
    HostTensor scalars(DType::UInt8, {std::int64_t(sizeof(StepScalars))}, "scalars");
    std::memcpy(scalars.t.data, &s, sizeof s);
    SoftmaxXentArgs args;
    args.logits = &logits.t;
    args.labels = &labels.t;
    args.valid_rows = 1;
    args.probs = &probs.t;
    args.dlogits = &dlogits.t;
    args.scalars = &scalars.t;
    m_cpu.softmax_cross_entropy(args);
    std::memcpy(&s, scalars.t.data, sizeof s);
    if (expect_inf) {
        CHECK_EQ(probs.get(0), 0.0);
        CHECK_MSG(std::isinf(s.loss_sum) && s.loss_sum > 0, arg_text(s.loss_sum));
    } else {
        CHECK(std::isfinite(s.loss_sum));
        CHECK(std::fabs(s.loss_sum - 20.0) < 2e-2); // log(1 + e^20 + e + 1/e) - 0
    }
    CHECK_EQ(s.correct, std::int64_t(0));
    CHECK_EQ(s.examples, std::int64_t(1));
    for (int j = 0; j < 4; ++j) CHECK_EQ(dlogits.get(4 + j), 0.0);
}

void TestCpuOps::dropout_data() {
    add_column<std::string>("dtype");
    add_column<double>("rate");
    for (const char* d : kComputeDTypes)
        for (double rate : {0.0, 0.1, 0.3, 0.5})
            new_row(format("%s rate=%g", d, rate)) << std::string(d) << rate;
}

void TestCpuOps::dropout() {
    FETCH(std::string, dtype);
    FETCH(double, rate);
    const DType dt = dtype_of(dtype);
    const std::int64_t rows = 64, cols = 257;
    std::mt19937 rng(13);
    HostTensor x(dt, {rows, cols}, "x"), y(dt, {rows, cols}, "y");
    HostTensor mask(DType::UInt8, {rows, cols}, "mask"), mask2(DType::UInt8, {rows, cols}, "mask2");
    HostTensor dy(dt, {rows, cols}, "dy"), dx(dt, {rows, cols}, "dx");
    x.fill_uniform(rng, -3.0, 3.0);
    dy.fill_uniform(rng, -3.0, 3.0);
    const std::uint64_t seed = 0xC0FFEEull;
    m_cpu.dropout_forward(rate, seed, x.t, y.t, mask.t);
    m_cpu.dropout_forward(rate, seed, x.t, y.t, mask2.t);
    CHECK_EQ(std::memcmp(mask.t.data, mask2.t.data, mask.t.bytes()), 0); // reproducible
    m_cpu.dropout_forward(rate, seed + 1, x.t, dx.t, mask2.t);
    if (rate > 0) CHECK(std::memcmp(mask.t.data, mask2.t.data, mask.t.bytes()) != 0);
    m_cpu.dropout_backward(rate, dy.t, mask.t, dx.t);

    // y = x * mask * scale with scale = 1 / (1 - rate) held in the compute type; computed in
    // float32 (float64) and rounded once, so the reference is exact.
    std::int64_t kept = 0;
    const std::uint64_t threshold = dropout_threshold(rate);
    for (std::int64_t i = 0; i < x.size(); ++i) {
        const double keep = mask.get(i);
        if (keep != 0.0 && keep != 1.0) FAIL_TEST("mask holds a value other than 0 and 1");
        if ((keep == 1.0) != dropout_keep(seed, std::uint64_t(i), threshold))
            FAIL_TEST("mask[" + arg_text(i) + "] differs from dropout_keep()");
        kept += keep == 1.0;
        double yref, dxref;
        if (dt == DType::Float64) {
            const double scale = 1.0 / (1.0 - rate);
            yref = keep ? x.get(i) * scale : 0.0;
            dxref = keep ? dy.get(i) * scale : 0.0;
        } else {
            const float scale = static_cast<float>(1.0 / (1.0 - rate));
            yref = keep ? double(float(x.get(i)) * scale) : 0.0;
            dxref = keep ? double(float(dy.get(i)) * scale) : 0.0;
        }
        CHECK_CLOSE("y", i, y.get(i), round_to_dtype(yref, dt), 0);
        CHECK_CLOSE("dx", i, dx.get(i), round_to_dtype(dxref, dt), 0);
    }
    // The keep rate is honoured: within 5 standard deviations of 1 - rate.
    const double total = double(x.size());
    const double sigma = std::sqrt(rate * (1.0 - rate) / total);
    const double keep_rate = kept / total;
    CHECK_MSG(std::fabs(keep_rate - (1.0 - rate)) <= 5.0 * sigma + 1e-12,
              "kept " + arg_text(keep_rate) + " for rate " + arg_text(rate));
    CHECK_THROWS(Error, m_cpu.dropout_forward(1.0, seed, x.t, y.t, mask.t));
}

// Pinned outputs of the mask hash: a CUDA kernel (or a refactor) must reproduce these exactly.
void TestCpuOps::dropout_hash_is_pinned() {
    CHECK_EQ(splitmix64(0), 0xE220A8397B1DCDAFull);
    CHECK_EQ(dropout_threshold(0.0), std::uint64_t(0));
    CHECK_EQ(dropout_threshold(0.5), std::uint64_t(1) << 52);
    CHECK_EQ(dropout_threshold(1.0), std::uint64_t(1) << 53);
    std::int64_t kept = 0;
    const std::uint64_t t = dropout_threshold(0.25);
    for (std::uint64_t i = 0; i < 100000; ++i) kept += dropout_keep(42, i, t);
    CHECK(std::abs(kept - 75000) < 5 * 137); // sigma = sqrt(1e5 * 0.25 * 0.75) ~ 137
}

void TestCpuOps::exponent_histogram_data() {
    add_column<std::string>("dtype");
    for (const char* d : kComputeDTypes) new_row(format("%s", d)) << std::string(d);
}

// Every bin boundary the lab relies on: zeros, float16's smallest subnormal 2^-24 and largest
// finite 65504, powers of two on both sides of a boundary, clamping at the ends, inf and NaN.
void TestCpuOps::exponent_histogram() {
    FETCH(std::string, dtype);
    const DType dt = dtype_of(dtype);
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> values = {0.0,  -0.0, 0x1p-24, 0x1p-14, 0x1.8p-1, 1.0,         -1.5,
                                        -3.0, 4.0,  65504.0, inf,     -inf,     std::nan("")};
    HostTensor x(dt, {static_cast<std::int64_t>(values.size())}, "x");
    for (std::size_t i = 0; i < values.size(); ++i) x.set(static_cast<std::int64_t>(i), values[i]);
    HostTensor counts(DType::Int32, {kHistogramBins}, "counts");
    m_cpu.exponent_histogram(x.t, counts.t);
    m_cpu.exponent_histogram(x.t, counts.t); // adds, never clears
    auto bin_of_exponent = [](int e) { return 1 + (e - kHistogramMinExp); };
    std::vector<int> expected(kHistogramBins, 0);
    expected[kHistogramZeroBin] = 4;
    expected[bin_of_exponent(-24)] = 2;
    expected[bin_of_exponent(-14)] = 2;
    expected[bin_of_exponent(-1)] = 2;
    expected[bin_of_exponent(0)] = 4; // 1.0 and -1.5
    expected[bin_of_exponent(1)] = 2;
    expected[bin_of_exponent(2)] = 2;
    // 65504 = 1.999 * 2^15; bfloat16's 8-bit significand rounds it up to 2^16
    expected[bin_of_exponent(dt == DType::BFloat16 ? 16 : 15)] += 2;
    expected[kHistogramNonFiniteBin] = 6;
    for (int b = 0; b < kHistogramBins; ++b)
        CHECK_MSG(counts.get(b) == expected[static_cast<std::size_t>(b)],
                  ("bin " + arg_text(b) + ": " + arg_text(counts.get(b)) + ", expected " +
                   arg_text(expected[static_cast<std::size_t>(b)])));
    // Clamping: float64 and float32 reach far beyond float16's range.
    if (dt == DType::Float32 || dt == DType::Float64) {
        HostTensor far(dt, {2}, "far");
        far.set(0, 1e-30);
        far.set(1, 0x1p60);
        HostTensor c2(DType::Int32, {kHistogramBins}, "c2");
        m_cpu.exponent_histogram(far.t, c2.t);
        CHECK_EQ(c2.get(1), 1.0);
        CHECK_EQ(c2.get(kHistogramNonFiniteBin - 1), 1.0);
    }
    CHECK_EQ(histogram_bin(0x1p-24), bin_of_exponent(-24));
    CHECK_EQ(histogram_bin(std::nextafter(0x1p-24, 0.0)), bin_of_exponent(-25));
}

MANTISSA_TEST_MAIN(TestCpuOps, info_and_allocate, allocate_out_of_memory, upload_download, fill,
                   cast, gather_batch, gemm, gemm_rejects_bad_shapes, gemm_fp8, gemm_fp8_rules,
                   bias_grad, activation_forward, activation_backward, softmax_xent,
                   softmax_xent_underflow, dropout, dropout_hash_is_pinned, exponent_histogram)
