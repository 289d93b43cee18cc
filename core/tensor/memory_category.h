// Memory categories: every byte a Plan allocates belongs to exactly one, so the UI can stack them.
// "master" holds float32 variables under mixed policies; "weights" the copies the compute reads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace mantissa {

enum class MemCategory : std::uint8_t {
    Weights,     // variables when compute == variable dtype; else their compute-dtype copies
    Master,      // float32 variables under mixed_* policies (the "master weights")
    Activations, // layer outputs kept for the backward pass, the input batch, probabilities
    Gradients,   // weight gradients and activation gradients
    Optimizer,   // optimizer slots (momentum, velocity, ...)
    Workspace,   // scratch for GEMM / convolution and per-step scalars
    Data,        // the dataset resident on the device (MNIST as uint8)
};
inline constexpr std::size_t kMemCategoryCount = 7;

// "weights", "master", "activations", "gradients", "optimizer", "workspace", "data"
const char* mem_category_name(MemCategory category);

struct MemoryByCategory {
    std::array<std::size_t, kMemCategoryCount> bytes{};

    std::size_t& operator[](MemCategory c) { return bytes[static_cast<std::size_t>(c)]; }
    std::size_t operator[](MemCategory c) const { return bytes[static_cast<std::size_t>(c)]; }
    std::size_t total() const {
        std::size_t sum = 0;
        for (std::size_t b : bytes) sum += b;
        return sum;
    }
};

} // namespace mantissa
