// What a run or eval session runs on: the engine (borrowed, handed over, or opened from the
// experiment's device string) and the MNIST data (injected or loaded).
#pragma once

#include <optional>
#include <string>

#include "core/backend/backend.h"
#include "core/data/mnist.h"
#include "core/device/device_selection.h"

namespace mantissa {

// Where a session's engine comes from, first match wins.
struct EngineSource {
    Backend* backend = nullptr;         // borrowed: must outlive the session (selftest, bench)
    std::optional<DeviceChoice> device; // opened by the caller (its own progress and warnings)
    DeviceOpenOptions open_options;     // else open_device(experiment.device, open_options)
};

// Where a session's images come from: `data` (borrowed, must outlive the session; tests inject
// synthetic_mnist) or the MNIST folder `dir` (empty: find_data_dir's lookup).
struct DataSource {
    const Mnist* data = nullptr;
    std::string dir;
};

// The engine a session holds for its whole life: the Plan and the Trainer reference it, so it is
// the first member a session declares (destroyed last).
class SessionEngine {
public:
    SessionEngine(EngineSource source, const std::string& device);

    Backend& backend() const { return *m_backend; }
    // The device choice (note, warnings, fallback) when the session opened or was handed one;
    // nullptr for a borrowed backend.
    const DeviceChoice* choice() const { return m_choice ? &*m_choice : nullptr; }

private:
    std::optional<DeviceChoice> m_choice;
    Backend* m_backend = nullptr;
};

} // namespace mantissa
