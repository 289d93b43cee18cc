// The CLI's way to open the engine a --device string names: open_device() with the GPU check's
// progress and every warning on stderr, so stdout stays the run's own output.
#pragma once

#include <string>

#include "core/device/device_selection.h"

namespace mantissa::cli {

DeviceChoice open_cli_device(const std::string& device);

// `selftest --qualify`: checks the CUDA engine on `device` ("cuda" / "cuda:N") and records the
// verdict in the qualification cache. Prints the verdict and where it was written; returns 0
// passed, 1 failed, 3 when there is no such GPU (the message says why).
int run_qualification(const std::string& device);

} // namespace mantissa::cli
