// Creates the engine for a device string: "auto", "cpu", "cuda", "cuda:N".
// This layer knows nothing of GPU qualification, so its "auto" is the CPU engine with a note that
// says why; core/device/device_selection.h's open_device() is the "auto" that may pick a GPU.
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

// Throws Error(InvalidArgument) for a malformed string, Error(Device) for "cuda" without a GPU
// or a GPU that cannot be opened (the message names the reason).
BackendChoice create_backend(const std::string& device);
// The devices a user can pick: "cpu" first, then each CUDA device this build can use.
std::vector<DeviceInfo> available_devices();

} // namespace mantissa
