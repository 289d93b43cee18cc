// Engine selection: parses the device string and creates the CPU or CUDA backend.
// "auto" at this level always means the CPU engine: trusting a GPU needs its qualification record,
// which core/device/device_selection.h consults (the CLI and the app go through it).
#include "core/backend/factory/backend_factory.h"

#include <charconv>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/factory/gpu_fingerprint.h"
#include "core/error.h"

#ifdef MANTISSA_HAVE_CUDA
#include "core/backend/cuda/cuda_backend.h"
#endif

namespace mantissa {

namespace {

// The CUDA devices this build can see, or the reason there are none.
std::vector<DeviceInfo> gpu_devices(std::string& reason) {
    std::vector<DeviceInfo> out;
    GpuList list = list_gpus();
    reason = list.reason;
    for (const GpuFingerprint& gpu : list.gpus)
        out.push_back({gpu.device_id, gpu.name, true, gpu.memory_total});
    return out;
}

} // namespace

std::vector<DeviceInfo> available_devices() {
    std::vector<DeviceInfo> out;
    CpuBackend cpu;
    out.push_back(cpu.info());
    std::string reason;
    for (DeviceInfo& gpu : gpu_devices(reason)) out.push_back(gpu);
    return out;
}

BackendChoice create_backend(const std::string& device) {
    BackendChoice choice;
    if (device == "cpu") {
        choice.backend = std::make_unique<CpuBackend>();
        return choice;
    }
    bool is_cuda = device == "cuda" || device.rfind("cuda:", 0) == 0;
    if (device != "auto" && !is_cuda)
        throw Error(ErrorKind::InvalidArgument,
                    "device '" + device + "' is not one of auto, cpu, cuda, cuda:N");
    int index = 0;
    if (device.rfind("cuda:", 0) == 0) {
        const char* first = device.data() + 5;
        const char* last = device.data() + device.size();
        auto [end, ec] = std::from_chars(first, last, index);
        if (ec != std::errc() || end != last || index < 0)
            throw Error(ErrorKind::InvalidArgument,
                        "device '" + device + "': expected cuda:N with N a device number");
    }
    std::string reason;
    std::vector<DeviceInfo> gpus = gpu_devices(reason);
    if (is_cuda) {
        if (gpus.empty())
            throw Error(ErrorKind::Device, "device '" + device + "' requested, but " + reason +
                                               ". Use --device cpu or auto.");
        if (index >= static_cast<int>(gpus.size()))
            throw Error(ErrorKind::Device, "device '" + device + "' requested, but only " +
                                               std::to_string(gpus.size()) +
                                               " CUDA device(s) found");
#ifdef MANTISSA_HAVE_CUDA
        choice.backend = std::make_unique<CudaBackend>(index);
        return choice;
#else
        throw Error(ErrorKind::Device, "this build has no CUDA engine; use --device cpu");
#endif
    }
    // "auto" here never opens a GPU: only a qualified one may be used without being asked for by
    // name, and qualification lives above this layer (core/device/device_selection.h).
    if (!gpus.empty())
        reason = "the CUDA engine has not been qualified on " + gpus.front().name +
                 " in this call; open_device() qualifies it";
    choice.backend = std::make_unique<CpuBackend>();
    choice.note = "no usable GPU (" + reason + "); using the CPU engine";
    return choice;
}

} // namespace mantissa
