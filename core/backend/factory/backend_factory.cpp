// Engine selection: parses the device string and creates the CPU or CUDA backend.
// "auto" takes the first CUDA device when this build has the CUDA engine and a GPU is usable.
#include "core/backend/factory/backend_factory.h"

#include <charconv>

#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"

#ifdef MANTISSA_HAVE_CUDA
#include "core/backend/cuda/cuda_backend.h"
#include "core/backend/cuda/cuda_devices.h"
#endif

namespace mantissa {

namespace {

// The CUDA devices this build can see, or the reason there are none.
std::vector<DeviceInfo> gpu_devices(std::string& reason) {
    std::vector<DeviceInfo> out;
#ifdef MANTISSA_HAVE_CUDA
    CudaDeviceList list = cuda_devices();
    reason = list.reason;
    for (const CudaDevice& device : list.devices)
        out.push_back(
            {"cuda:" + std::to_string(device.index), device.name, true, device.memory_total});
#else
    reason = "this build has no CUDA engine (configured without nvcc)";
#endif
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
#ifdef MANTISSA_HAVE_CUDA
    if (!gpus.empty()) {
        try {
            choice.backend = std::make_unique<CudaBackend>(0);
            return choice;
        } catch (const Error& err) { // a GPU that cannot be opened: say why, train on the CPU
            reason = gpus.front().name + " could not be used: " + err.what();
            gpus.clear();
        }
    }
#endif
    choice.backend = std::make_unique<CpuBackend>();
    choice.note = "no usable GPU (" + reason + "); using the CPU engine";
    return choice;
}

} // namespace mantissa
