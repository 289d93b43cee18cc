// The CLI's way to open the engine a --device string names: open_device() with the GPU check's
// progress and every warning on stderr, so stdout stays the run's own output.
#pragma once

#include <string>

#include "core/device/device_selection.h"

namespace mantissa::cli {

DeviceChoice open_cli_device(const std::string& device);

} // namespace mantissa::cli
