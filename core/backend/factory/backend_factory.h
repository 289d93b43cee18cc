// Chooses and creates the engine for a device string: "auto", "cpu", "cuda", "cuda:N".
// "auto" prefers a usable GPU and falls back to the CPU engine, saying why in `note`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.h"

namespace mantissa {

struct BackendChoice {
    std::unique_ptr<Backend> backend;
    std::string note; // e.g. "no CUDA device found; using the CPU engine"
};

// Throws Error(InvalidArgument) for a malformed string, Error(Device) for "cuda" without a GPU.
BackendChoice create_backend(const std::string& device);
// The devices a user can pick: "cpu" first, then each CUDA device this build can use.
std::vector<DeviceInfo> available_devices();

} // namespace mantissa
