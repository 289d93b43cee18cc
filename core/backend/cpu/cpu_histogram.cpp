// The exponent histogram on the CPU: widens each chunk to double (exact for every stored dtype)
// and bins it with the reference histogram_bin(), so the CPU engine is the reference for CUDA.
#include <cstdint>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cpu/cpu_kernels.h"
#include "core/backend/histogram.h"

namespace mantissa {

void CpuBackend::exponent_histogram(const Tensor& x, Tensor& counts_i32) {
    cpu::require_floating(x, "exponent_histogram");
    cpu::require(counts_i32.dtype == DType::Int32 && counts_i32.numel() == kHistogramBins,
                 "exponent_histogram: counts " + cpu::describe(counts_i32) + " must be int32 (" +
                     std::to_string(kHistogramBins) + ")");
    auto* counts = static_cast<std::int32_t*>(counts_i32.data);
    double buf[cpu::kChunk];
    const std::int64_t n = x.numel();
    for (std::int64_t off = 0; off < n; off += cpu::kChunk) {
        const std::int64_t len = std::min(cpu::kChunk, n - off);
        cpu::load(x, off, buf, len);
        for (std::int64_t i = 0; i < len; ++i) ++counts[histogram_bin(buf[i])];
    }
}

} // namespace mantissa
