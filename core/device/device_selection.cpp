// open_device(): the device string resolved against the GPUs present and their qualification
// records; "auto" checks an unchecked GPU before trusting it and falls back to the CPU engine on a
// failure, saying why.
#include "core/device/device_selection.h"

#include <charconv>
#include <chrono>
#include <cstdio>

#include "core/backend/factory/backend_factory.h"
#include "core/device/parity_qualifier.h"
#include "core/error.h"

namespace mantissa {

namespace {

struct Candidates {
    std::vector<GpuCandidate> gpus;
    std::string reason; // why `gpus` is empty
    bool engine_built = true;
};

Candidates candidates(const DeviceOpenOptions& options) {
    Candidates out;
    if (options.gpus) {
        out.gpus = *options.gpus;
        out.reason = options.no_gpu_reason.value_or("no CUDA-capable device");
        return out;
    }
    GpuList list = list_gpus();
    out.reason = list.reason;
    out.engine_built = list.engine_built;
    for (const GpuFingerprint& gpu : list.gpus) {
        const std::string id = gpu.device_id;
        out.gpus.push_back({gpu, [id] { return create_backend(id).backend; }});
    }
    return out;
}

// "cuda" -> 0, "cuda:N" -> N; -1 for "auto" and "cpu". Malformed strings throw as the factory does.
int cuda_index(const std::string& device) {
    if (device == "auto" || device == "cpu") return -1;
    if (device == "cuda") return 0;
    if (device.rfind("cuda:", 0) == 0) {
        int index = -1;
        const char* first = device.data() + 5;
        const char* last = device.data() + device.size();
        auto [end, ec] = std::from_chars(first, last, index);
        if (ec == std::errc() && end == last && index >= 0) return index;
        throw Error(ErrorKind::InvalidArgument,
                    "device '" + device + "': expected cuda:N with N a device number");
    }
    throw Error(ErrorKind::InvalidArgument,
                "device '" + device + "' is not one of auto, cpu, cuda, cuda:N");
}

const GpuCandidate& named_gpu(const Candidates& c, const std::string& device, int index) {
    if (c.gpus.empty())
        throw Error(ErrorKind::Device, "device '" + device + "' requested, but " + c.reason +
                                           ". Use --device cpu or auto.");
    if (index >= static_cast<int>(c.gpus.size()))
        throw Error(ErrorKind::Device, "device '" + device + "' requested, but only " +
                                           std::to_string(c.gpus.size()) +
                                           " CUDA device(s) found. Use --device cpu or auto.");
    return c.gpus[static_cast<std::size_t>(index)];
}

// The CUDA runtime's reason in a few words for a menu entry ("CUDA unavailable: CUDA driver
// version is insufficient for CUDA runtime version" -> "driver too old for CUDA 13"); the whole
// text stays in the entry's tooltip.
std::string short_reason(const std::string& reason) {
    std::string r = reason;
    const std::string prefix = "CUDA unavailable: ";
    if (r.rfind(prefix, 0) == 0) r = r.substr(prefix.size());
    if (r.find("no NVIDIA driver") != std::string::npos) return "no NVIDIA driver installed";
    if (const auto at = r.find("the NVIDIA driver supports CUDA "); at != std::string::npos) {
        // "... supports CUDA 12.2, this build needs CUDA 13.0; ..." -> "driver too old (CUDA
        // 12.2 < 13.0)"
        const std::string rest = r.substr(at + 32);
        const std::string have = rest.substr(0, rest.find(','));
        const auto needs = rest.find("needs CUDA ");
        const std::string want =
            needs == std::string::npos ? "" : rest.substr(needs + 11, rest.find(';') - needs - 11);
        return "driver too old (CUDA " + have + (want.empty() ? "" : " < " + want) + ")";
    }
    if (r.find("driver version is insufficient") != std::string::npos)
        return "driver too old for this CUDA runtime";
    if (r.find("no CUDA-capable device") != std::string::npos) return "no NVIDIA GPU found";
    return r.size() > 48 ? r.substr(0, 47) + "…" : r;
}

std::string date_of(const QualificationRecord& r) {
    return r.checked_at.substr(0, 10);
}

// Runs the qualifier on an open GPU and completes the record; a throwing check is a failed one.
QualificationRecord run_qualifier(Backend& gpu, const GpuFingerprint& fingerprint,
                                  const DeviceOpenOptions& options) {
    const Qualifier& qualifier = options.qualifier ? options.qualifier : parity_qualifier();
    const auto start = std::chrono::steady_clock::now();
    QualificationRecord record;
    try {
        record = qualifier(gpu, options.progress);
    } catch (const std::exception& err) {
        record = {};
        record.passed = false;
        record.failures = 1;
        record.first_failure = std::string("the check itself failed: ") + err.what();
    }
    record.gpu = fingerprint;
    record.checked_at = utc_timestamp_now();
    record.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return record;
}

void store_or_warn(QualificationCache& cache, const QualificationRecord& record,
                   std::vector<std::string>& warnings) {
    try {
        cache.store(record);
    } catch (const std::exception& err) {
        warnings.push_back(std::string("the GPU check's result could not be saved, so it will run "
                                       "again next time: ") +
                           err.what());
    }
}

std::string failed_text(const QualificationRecord& r) {
    return "the CUDA engine failed its check on " + r.gpu.name + " (" + date_of(r) +
           "): " + r.first_failure;
}

DeviceChoice open_auto(const Candidates& c, QualificationCache& cache,
                       const DeviceOpenOptions& options) {
    DeviceChoice choice;
    if (!cache.warning().empty()) choice.warnings.push_back(cache.warning());
    auto use_cpu = [&](const std::string& why, bool see_selftest = false) {
        choice.backend = create_backend("cpu").backend;
        choice.note = why + "; using the CPU engine" +
                      (see_selftest ? ". Details: mantissa-cli selftest" : "");
        return std::move(choice);
    };
    if (c.gpus.empty()) return use_cpu("no usable GPU (" + c.reason + ")");
    choice.fell_back = true; // until the GPU is in use
    const GpuCandidate& gpu = c.gpus.front();
    const std::optional<QualificationRecord> known = cache.find(gpu.fingerprint);
    if (known && !known->passed) {
        choice.qualification = known;
        return use_cpu(failed_text(*known), true);
    }
    std::unique_ptr<Backend> backend;
    try {
        backend = gpu.open();
    } catch (const std::exception& err) {
        return use_cpu(gpu.fingerprint.name + " could not be used (" + err.what() + ")");
    }
    if (known) {
        choice.qualification = known;
        choice.fell_back = false;
        choice.backend = std::move(backend);
        choice.note =
            "using " + gpu.fingerprint.name + " (CUDA engine qualified on " + date_of(*known) + ")";
        return choice;
    }
    if (options.progress)
        options.progress({"Checking the CUDA engine on " + gpu.fingerprint.name + "…", 0, 0});
    const QualificationRecord record = run_qualifier(*backend, gpu.fingerprint, options);
    store_or_warn(cache, record, choice.warnings);
    choice.qualification = record;
    if (!record.passed) {
        backend.reset();
        return use_cpu(failed_text(record), true);
    }
    choice.backend = std::move(backend);
    choice.fell_back = false;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", record.seconds);
    choice.note = "using " + gpu.fingerprint.name + ": the CUDA engine passed its check (" +
                  std::to_string(record.cases) + " cases, " + seconds + " s)";
    return choice;
}

} // namespace

DeviceChoice open_device(const std::string& device, const DeviceOpenOptions& options) {
    const int index = cuda_index(device);
    if (device == "cpu") {
        DeviceChoice choice;
        choice.backend = create_backend("cpu").backend;
        return choice;
    }
    const Candidates c = candidates(options);
    QualificationCache cache(options.cache_path.empty() ? QualificationCache::default_path()
                                                        : options.cache_path);
    if (device == "auto") return open_auto(c, cache, options);

    // A GPU asked for by name runs even unqualified: the user chose it, but is told.
    const GpuCandidate& gpu = named_gpu(c, device, index);
    DeviceChoice choice;
    if (!cache.warning().empty()) choice.warnings.push_back(cache.warning());
    choice.backend = gpu.open();
    choice.qualification = cache.find(gpu.fingerprint);
    if (!choice.qualification)
        choice.warnings.push_back(
            "the CUDA engine has not been checked on " + gpu.fingerprint.name +
            " with this driver and these libraries, so its results are unverified; check it "
            "with: mantissa-cli selftest --qualify");
    else if (!choice.qualification->passed)
        choice.warnings.push_back(failed_text(*choice.qualification) +
                                  "; running it anyway because it was asked for by name");
    choice.note = "using " + gpu.fingerprint.name;
    return choice;
}

QualificationRecord qualify_device(const std::string& device, const DeviceOpenOptions& options) {
    const int index = cuda_index(device);
    if (index < 0)
        throw Error(ErrorKind::InvalidArgument,
                    "only a CUDA device can be qualified ('cuda' or 'cuda:N'), not '" + device +
                        "'");
    const Candidates c = candidates(options);
    const GpuCandidate& gpu = named_gpu(c, device, index);
    std::unique_ptr<Backend> backend = gpu.open();
    const QualificationRecord record = run_qualifier(*backend, gpu.fingerprint, options);
    QualificationCache cache(options.cache_path.empty() ? QualificationCache::default_path()
                                                        : options.cache_path);
    cache.store(record);
    return record;
}

std::vector<DeviceState> device_states(const DeviceOpenOptions& options) {
    std::vector<DeviceState> out;
    {
        const BackendChoice cpu = create_backend("cpu");
        DeviceState s;
        s.id = "cpu";
        s.label = cpu.backend->info().name;
        s.detail = "The CPU engine emulates every 16-bit format bit for bit.";
        s.selectable = s.qualified = true;
        out.push_back(s);
    }
    const Candidates c = candidates(options);
    if (c.gpus.empty()) {
        DeviceState s;
        s.label = c.engine_built ? "CUDA engine built; no usable GPU: " + short_reason(c.reason)
                                 : "No CUDA engine in this build";
        s.detail = c.engine_built
                       ? "Mantissa looked for a CUDA GPU and found none usable: " + c.reason + "."
                       : "This build was configured without nvcc; rebuild on a "
                         "machine with the CUDA toolkit to get the CUDA engine.";
        out.push_back(s);
        return out;
    }
    const QualificationCache cache(options.cache_path.empty() ? QualificationCache::default_path()
                                                              : options.cache_path);
    for (const GpuCandidate& gpu : c.gpus) {
        DeviceState s;
        s.id = gpu.fingerprint.device_id;
        s.selectable = true;
        const std::string& name = gpu.fingerprint.name;
        s.detail = gpu.fingerprint.describe();
        if (const auto r = cache.find(gpu.fingerprint)) {
            s.qualified = r->passed;
            s.failed = !r->passed;
            s.label = r->passed ? name + " — qualified on " + date_of(*r)
                                : name + " — failed its check: " + r->first_failure;
            s.detail += r->passed ? "\nPassed " + std::to_string(r->cases) + " checks on " +
                                        r->checked_at + "."
                                  : "\nFailed on " + r->checked_at + ": " + r->first_failure +
                                        ". Details: mantissa-cli selftest";
        } else {
            const auto old = cache.find_outdated(gpu.fingerprint);
            s.label = name + " — not checked";
            s.detail += old ? "\nChecked on " + date_of(*old) +
                                  " with other driver or library versions; those results no "
                                  "longer count. It is checked before its first run."
                            : "\nNot checked yet: the CUDA engine is checked against the CPU "
                              "engine before its first run.";
        }
        out.push_back(s);
    }
    return out;
}

} // namespace mantissa
