// Inverted dropout on the CPU: y = x * keep / (1 - rate), keep drawn from dropout_hash.h so the
// mask is a pure function of (seed, element index) and a CUDA kernel can reproduce it exactly.
#include <cmath>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cpu/cpu_kernels.h"
#include "core/backend/dropout_hash.h"

namespace mantissa {

namespace {

void check_rate(double rate, const char* op) {
    if (!(rate >= 0.0 && rate < 1.0))
        throw Error(ErrorKind::InvalidArgument, std::string(op) + ": dropout rate " +
                                                    std::to_string(rate) +
                                                    " must be in [0, 1), as in Keras");
}

// y = x * mask * scale, scale = 1 / (1 - rate) computed in double then held in T (as PyTorch and
// TensorFlow multiply by a precomputed scale), rounded once to y's dtype.
template <class T>
void apply_mask(const Tensor& x, const std::uint8_t* mask, double rate, Tensor& y) {
    const T scale = static_cast<T>(1.0 / (1.0 - rate));
    const std::int64_t n = x.numel();
    T xbuf[cpu::kChunk];
    T ybuf[cpu::kChunk];
    for (std::int64_t off = 0; off < n; off += cpu::kChunk) {
        const std::int64_t len = std::min(cpu::kChunk, n - off);
        const T* xp = cpu::view_or_load<T>(x, off, len, xbuf);
        T* yp = cpu::out_ptr<T>(y, off, ybuf);
        const std::uint8_t* mp = mask + off;
        for (std::int64_t i = 0; i < len; ++i) yp[i] = mp[i] ? xp[i] * scale : T(0);
        cpu::store_if_needed(yp, y, off, len);
    }
}

} // namespace

void CpuBackend::dropout_forward(double rate, std::uint64_t seed, const Tensor& x, Tensor& y,
                                 Tensor& mask_u8) {
    const char* op = "dropout_forward";
    check_rate(rate, op);
    cpu::require_floating(x, op);
    cpu::require_floating(y, op);
    cpu::require_same_numel(x, y, op);
    cpu::require_same_numel(x, mask_u8, op);
    cpu::require(mask_u8.dtype == DType::UInt8,
                 std::string(op) + ": mask " + cpu::describe(mask_u8) + " must be uint8");
    const std::uint64_t threshold = dropout_threshold(rate);
    auto* mask = mask_u8.as<std::uint8_t>();
    const std::int64_t n = x.numel();
    for (std::int64_t i = 0; i < n; ++i)
        mask[i] = dropout_keep(seed, static_cast<std::uint64_t>(i), threshold) ? 1 : 0;
    if (x.dtype == DType::Float64 || y.dtype == DType::Float64)
        apply_mask<double>(x, mask, rate, y);
    else
        apply_mask<float>(x, mask, rate, y);
}

void CpuBackend::dropout_backward(double rate, const Tensor& dy, const Tensor& mask_u8,
                                  Tensor& dx) {
    const char* op = "dropout_backward";
    check_rate(rate, op);
    cpu::require_floating(dy, op);
    cpu::require_floating(dx, op);
    cpu::require_same_numel(dy, dx, op);
    cpu::require_same_numel(dy, mask_u8, op);
    cpu::require(mask_u8.dtype == DType::UInt8,
                 std::string(op) + ": mask " + cpu::describe(mask_u8) + " must be uint8");
    const auto* mask = mask_u8.as<const std::uint8_t>();
    if (dy.dtype == DType::Float64 || dx.dtype == DType::Float64)
        apply_mask<double>(dy, mask, rate, dx);
    else
        apply_mask<float>(dy, mask, rate, dx);
}

} // namespace mantissa
