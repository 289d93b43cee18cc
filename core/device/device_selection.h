// Opening the engine a user asked for, with GPU qualification in the way of "auto": a CUDA device
// is used without being named only when the engine has passed its checks on that exact GPU set-up
// (see qualification_cache.h). Not yet checked: the check runs first (progress is reported), and
// a failure trains on the CPU and says why. "cuda" / "cuda:N" asked for by name still runs, with a
// warning when unqualified. The CLI, the app's worker and the weights evaluator all come here.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/device/qualification_cache.h"

namespace mantissa {

struct QualificationProgress {
    std::string message; // "Checking the CUDA engine on NVIDIA H100…: conv2d fwd float16"
    int done = 0, total = 0;
};
using QualificationProgressFn = std::function<void(const QualificationProgress&)>;

// Runs the engine's checks on `gpu` and returns the verdict (passed, cases, first failure...).
// The caller fills in the fingerprint and the time; a qualifier must not throw for a failing case,
// only for a broken device (which then counts as a failure too).
using Qualifier = std::function<QualificationRecord(Backend& gpu, const QualificationProgressFn&)>;

// One GPU as open_device() sees it; tests substitute a fake one.
struct GpuCandidate {
    GpuFingerprint fingerprint;
    std::function<std::unique_ptr<Backend>()> open; // throws Error(Device) when it cannot
};

struct DeviceOpenOptions {
    std::string cache_path;                        // empty: QualificationCache::default_path()
    Qualifier qualifier;                           // empty: the op-case table + a training check
    QualificationProgressFn progress;              // may be empty
    std::optional<std::vector<GpuCandidate>> gpus; // unset: the real GPUs (list_gpus())
    std::optional<std::string> no_gpu_reason;      // with `gpus`: why the list is empty
};

struct DeviceChoice {
    std::unique_ptr<Backend> backend;
    std::string note;                  // one line for the user: what was chosen and why
    std::vector<std::string> warnings; // unqualified GPU used by name, unreadable cache, ...
    std::optional<QualificationRecord> qualification; // the record consulted or just made
    bool fell_back = false; // "auto" had a GPU but uses the CPU (failed check, could not open)
    bool used_gpu() const { return backend && backend->info().is_gpu; }
};

// `device` is "auto", "cpu", "cuda" or "cuda:N". Throws what create_backend() throws for a
// malformed string or a named GPU that cannot be had; "auto" never throws for a GPU problem.
DeviceChoice open_device(const std::string& device, const DeviceOpenOptions& options = {});

// Checks the GPU `device` ("cuda" / "cuda:N") now and stores the result, whatever the cache said.
// Used by `mantissa-cli selftest --qualify` and the app's "Check now".
QualificationRecord qualify_device(const std::string& device,
                                   const DeviceOpenOptions& options = {});

// What the app's device menu shows: each engine with its state.
struct DeviceState {
    std::string id;     // "cpu", "cuda:0"; empty for an entry that cannot be picked
    std::string label;  // "NVIDIA H100 80GB HBM3 — qualified on 2026-11-25"
    std::string detail; // tooltip: versions, the failing case, what to do
    bool selectable = false;
    bool qualified = false; // a GPU that "auto" would use without checking
    bool failed = false;
};
std::vector<DeviceState> device_states(const DeviceOpenOptions& options = {});

} // namespace mantissa
