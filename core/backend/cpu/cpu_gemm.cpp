// CPU GEMM with bias and activation epilogue, and the bias gradient, on Eigen.
// 16/8-bit operands are widened to float32 in the workspace, multiplied with float32 accumulation
// and rounded once on the way out: what tensor cores do. FP8 operands (issue 18) decode exactly
// the same way, and their per-tensor decode scales multiply the float32 product before that
// rounding, where cuBLASLt's A/B scale pointers apply them (fp8_gemm.h has the rules); NVFP4's
// tensor scales on 16/32-bit operands the same way.
#include "core/backend/cpu/eigen.h"

#include <cstring>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cpu/cpu_kernels.h"
#include "core/backend/fp8_gemm.h"

namespace mantissa {

namespace {

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using ConstMap = Eigen::Map<const RowMatrix<T>>;
template <class T>
using MutMap = Eigen::Map<RowMatrix<T>>;

constexpr std::size_t kWsAlign = 64;

std::size_t align_up(std::size_t v) {
    return (v + kWsAlign - 1) / kWsAlign * kWsAlign;
}

// The problem's sizes and where each operand lives during the product: straight in the tensor
// when it already holds the compute type, else widened into a workspace region.
struct GemmLayout {
    std::int64_t m = 0, n = 0, k = 0;
    DType compute = DType::Float32; // float64 for float64 operands, float32 for everything else
    bool widen_a = false, widen_b = false, own_acc = false, widen_bias = false;
    std::size_t a_off = 0, b_off = 0, acc_off = 0, bias_off = 0; // byte offsets from aligned base
    std::size_t bytes = 0; // total workspace, including slack to align the base
};

GemmLayout plan_gemm(const GemmArgs& args) {
    cpu::require(args.a && args.b && args.c, "gemm: A, B and C must all be given");
    const Tensor& a = *args.a;
    const Tensor& b = *args.b;
    const Tensor& c = *args.c;
    cpu::require_floating(a, "gemm");
    cpu::require_floating(b, "gemm");
    cpu::require_floating(c, "gemm");
    const bool fp8 = uses_fp8_gemm(args);
    if (fp8) check_fp8_gemm(args); // e4m3 · e5m2 may mix, so the shared-dtype rule is not asked
    if (uses_scaled_gemm(args)) check_scaled_gemm(args);
    cpu::require(fp8 || a.dtype == b.dtype, "gemm: A " + cpu::describe(a) + " and B " +
                                                cpu::describe(b) + " must share a dtype");
    GemmLayout g;
    g.m = args.transpose_a ? a.cols() : a.rows();
    g.k = args.transpose_a ? a.rows() : a.cols();
    const std::int64_t kb = args.transpose_b ? b.cols() : b.rows();
    g.n = args.transpose_b ? b.rows() : b.cols();
    const std::string sizes = "A " + cpu::describe(a) + (args.transpose_a ? "^T" : "") + " · B " +
                              cpu::describe(b) + (args.transpose_b ? "^T" : "") + " -> C " +
                              cpu::describe(c);
    cpu::require(g.k == kb, "gemm: inner dimensions differ (" + std::to_string(g.k) + " vs " +
                                std::to_string(kb) + "): " + sizes);
    cpu::require(c.rows() == g.m && c.cols() == g.n, "gemm: C must be (" + std::to_string(g.m) +
                                                         ", " + std::to_string(g.n) +
                                                         "): " + sizes);
    if (args.bias) {
        cpu::require_floating(*args.bias, "gemm");
        cpu::require(args.bias->numel() == g.n, "gemm: bias " + cpu::describe(*args.bias) +
                                                    " must have " + std::to_string(g.n) +
                                                    " elements: " + sizes);
    }
    if (args.pre_activation) {
        cpu::require_floating(*args.pre_activation, "gemm");
        cpu::require(args.pre_activation->numel() == g.m * g.n,
                     "gemm: pre_activation " + cpu::describe(*args.pre_activation) + " must have " +
                         std::to_string(g.m * g.n) + " elements: " + sizes);
    }
    // cuBLASLt applies its epilogue after adding C (act(AB + C + bias)); "C += act(AB + bias)"
    // would differ, so the two meanings are kept apart by allowing neither.
    cpu::require(!args.accumulate || (args.epilogue == Activation::Linear && !args.pre_activation),
                 "gemm: accumulate=true needs a linear epilogue and no pre_activation: " + sizes);

    g.compute = a.dtype == DType::Float64 ? DType::Float64 : DType::Float32;
    const std::size_t elem = dtype_size(g.compute);
    g.widen_a = a.dtype != g.compute;
    g.widen_b = b.dtype != g.compute;
    g.own_acc = c.dtype != g.compute;
    g.widen_bias = args.bias && args.bias->dtype != g.compute;
    std::size_t off = 0;
    auto region = [&](bool used, std::int64_t count, std::size_t& at) {
        if (!used) return;
        at = off;
        off += align_up(static_cast<std::size_t>(count) * elem);
    };
    region(g.widen_a, a.numel(), g.a_off);
    region(g.widen_b, b.numel(), g.b_off);
    region(g.own_acc, g.m * g.n, g.acc_off);
    region(g.widen_bias, g.n, g.bias_off);
    g.bytes = off ? off + kWsAlign : 0; // slack: the base pointer is aligned up inside the region
    return g;
}

// C (m, n) = op(A) · op(B), or += when accumulating; Eigen sees transposes as storage-order flags,
// so nothing is copied.
template <class T>
void product(const T* a_data, std::int64_t a_rows, std::int64_t a_cols, bool transpose_a,
             const T* b_data, std::int64_t b_rows, std::int64_t b_cols, bool transpose_b, T* c_data,
             std::int64_t m, std::int64_t n, bool accumulate) {
    ConstMap<T> a(a_data, a_rows, a_cols);
    ConstMap<T> b(b_data, b_rows, b_cols);
    MutMap<T> c(c_data, m, n);
    auto run = [&](const auto& lhs, const auto& rhs) {
        if (accumulate)
            c.noalias() += lhs * rhs;
        else
            c.noalias() = lhs * rhs;
    };
    if (!transpose_a && !transpose_b)
        run(a, b);
    else if (transpose_a && !transpose_b)
        run(a.transpose(), b);
    else if (!transpose_a && transpose_b)
        run(a, b.transpose());
    else
        run(a.transpose(), b.transpose());
}

// bias, pre_activation, activation and the single rounding into C, one row at a time while the
// row is in cache. `acc` is C itself when C holds T.
template <class T>
void finish_rows(const GemmArgs& args, const GemmLayout& g, T* acc, const T* bias) {
    const bool own_acc = g.own_acc;
    const bool trivial = !bias && !args.pre_activation && args.epilogue == Activation::Linear;
    if (trivial && !own_acc) return;
    for (std::int64_t i = 0; i < g.m; ++i) {
        T* row = acc + i * g.n;
        if (bias)
            for (std::int64_t j = 0; j < g.n; ++j) row[j] += bias[j];
        if (args.pre_activation) {
            Tensor& pre = *args.pre_activation;
            if (pre.dtype == cpu::kComputeDType<T>)
                std::memcpy(static_cast<T*>(pre.data) + i * g.n, row, sizeof(T) * g.n);
            else
                cpu::store(row, pre, i * g.n, g.n);
        }
        if (args.epilogue == Activation::Softmax)
            cpu::softmax_row(row, row, g.n);
        else if (args.epilogue != Activation::Linear)
            cpu::activation_elementwise(args.epilogue, row, row, g.n);
        if (own_acc) cpu::store(row, *args.c, i * g.n, g.n);
    }
}

template <class T>
void run_gemm(const GemmArgs& args, const GemmLayout& g) {
    const Tensor& a = *args.a;
    const Tensor& b = *args.b;
    Tensor& c = *args.c;
    auto* base = reinterpret_cast<unsigned char*>(
        (reinterpret_cast<std::uintptr_t>(args.workspace.data) + kWsAlign - 1) / kWsAlign *
        kWsAlign);
    auto region = [&](std::size_t off) { return reinterpret_cast<T*>(base + off); };

    const T* a_data = a.as<const T>();
    if (g.widen_a) {
        cpu::load(a, 0, region(g.a_off), a.numel());
        a_data = region(g.a_off);
    }
    const T* b_data = b.as<const T>();
    if (g.widen_b) {
        cpu::load(b, 0, region(g.b_off), b.numel());
        b_data = region(g.b_off);
    }
    T* acc = c.as<T>();
    if (g.own_acc) {
        acc = region(g.acc_off);
        if (args.accumulate) cpu::load(c, 0, acc, g.m * g.n); // C += ... adds in float32
    }
    // Decode scales (FP8's, NVFP4's tensor scales): one float32 factor (a_scale · b_scale) on
    // the float32 product.
    T scale = T(1);
    if (args.a_scale) scale *= *args.a_scale->as<const float>();
    if (args.b_scale) scale *= *args.b_scale->as<const float>();
    const T* bias = args.bias ? args.bias->as<const T>() : nullptr;
    if (g.widen_bias) {
        cpu::load(*args.bias, 0, region(g.bias_off), g.n);
        bias = region(g.bias_off);
    }
    product<T>(a_data, a.rows(), a.cols(), args.transpose_a, b_data, b.rows(), b.cols(),
               args.transpose_b, acc, g.m, g.n, args.accumulate);
    if (scale != T(1))
        for (std::int64_t i = 0; i < g.m * g.n; ++i) acc[i] *= scale;
    finish_rows<T>(args, g, acc, bias);
}

template <class T>
void column_sums(const Tensor& dy, Tensor& db, std::int64_t rows, std::int64_t cols) {
    T acc[cpu::kChunk];
    T buf[cpu::kChunk];
    for (std::int64_t j0 = 0; j0 < cols; j0 += cpu::kChunk) {
        const std::int64_t len = std::min(cpu::kChunk, cols - j0);
        std::fill_n(acc, len, T(0));
        for (std::int64_t r = 0; r < rows; ++r) {
            const T* row = cpu::view_or_load<T>(dy, r * cols + j0, len, buf);
            for (std::int64_t j = 0; j < len; ++j) acc[j] += row[j];
        }
        cpu::store(acc, db, j0, len); // rounded once (a copy when db holds T)
    }
}

} // namespace

std::size_t CpuBackend::gemm_workspace_bytes(const GemmArgs& args) const {
    return plan_gemm(args).bytes;
}

void CpuBackend::gemm(const GemmArgs& args) {
    const GemmLayout g = plan_gemm(args);
    cpu::require(args.workspace.bytes >= g.bytes && (g.bytes == 0 || args.workspace.data),
                 "gemm: needs " + std::to_string(g.bytes) + " workspace bytes, got " +
                     std::to_string(args.workspace.bytes) + " (size it with gemm_workspace_bytes)");
    if (g.compute == DType::Float64)
        run_gemm<double>(args, g);
    else
        run_gemm<float>(args, g);
}

void CpuBackend::bias_grad(const Tensor& dy, Tensor& db) {
    cpu::require_floating(dy, "bias_grad");
    cpu::require_floating(db, "bias_grad");
    // dy is read as (numel / units, units): (batch, units) for Dense, (batch*h*w, channels) for
    // a convolution's NHWC output; db sums over every leading position.
    const std::int64_t cols = db.numel();
    cpu::require(cols > 0 && dy.numel() % cols == 0,
                 "bias_grad: dy " + cpu::describe(dy) + " does not fit db " + cpu::describe(db));
    const std::int64_t positions = dy.numel() / cols;
    if (dy.dtype == DType::Float64 || db.dtype == DType::Float64)
        column_sums<double>(dy, db, positions, cols);
    else
        column_sums<float>(dy, db, positions, cols);
}

} // namespace mantissa
