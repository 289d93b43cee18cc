// GPU qualification and "auto" without a GPU: fake CUDA devices (a CPU engine behind a GPU's
// fingerprint) and fake checks drive open_device(), the qualification cache and the device states
// the app shows. The real check (the op-case table on a GPU) needs a GPU and runs in selftest.

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/device/device_selection.h"
#include "core/device/parity_qualifier.h"
#include "core/error.h"
#include "core/io/atomic_file.h"
#include "tests/unit/cli.h"
#include "tests/unit/files.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

namespace {

GpuFingerprint fake_fingerprint(int driver = 13000) {
    GpuFingerprint g;
    g.device_id = "cuda:0";
    g.name = "Fake GPU 80GB";
    g.compute_major = 9;
    g.compute_minor = 0;
    g.memory_total = std::size_t{80} << 30;
    g.driver_version = driver;
    g.runtime_version = 13000;
    g.cublaslt_version = 130100;
    g.cudnn_version = 91400;
    g.build = "0.1.0+test";
    return g;
}

// One fake GPU: a CPU engine opened under a GPU's fingerprint; counts how often it was opened and
// remembers the last engine handed out, so a test can tell whether a choice is "the GPU".
struct FakeGpu {
    GpuFingerprint fingerprint = fake_fingerprint();
    int opened = 0;
    const Backend* last = nullptr;
    bool fails_to_open = false;

    GpuCandidate candidate() {
        return {fingerprint, [this]() -> std::unique_ptr<Backend> {
                    if (fails_to_open)
                        throw Error(ErrorKind::Device, "cudnnCreate: CUDNN_STATUS_NOT_INITIALIZED");
                    ++opened;
                    auto engine = std::make_unique<CpuBackend>();
                    last = engine.get();
                    return engine;
                }};
    }
};

// A check that passes or fails as told and counts its calls.
struct FakeCheck {
    bool pass = true;
    int calls = 0;
    Qualifier qualifier() {
        return [this](Backend&, const QualificationProgressFn& progress) {
            ++calls;
            if (progress) progress({"fake case", 1, 2});
            QualificationRecord r;
            r.cases = 86;
            r.passed = pass;
            r.failures = pass ? 0 : 1;
            if (!pass)
                r.first_failure = "conv2d bwd-filter 4x10x10x3 k3 bfloat16: max error 0.31 > 0.05";
            return r;
        };
    }
};

} // namespace

class TestDeviceSelection {

    TempDir m_dir;
    std::string cache_path() const { return (m_dir.path() + "/q/gpu-qualification.json"); }

    DeviceOpenOptions options(FakeGpu* gpu, FakeCheck* check) const {
        DeviceOpenOptions o;
        o.cache_path = cache_path();
        if (gpu)
            o.gpus = std::vector<GpuCandidate>{gpu->candidate()};
        else {
            o.gpus = std::vector<GpuCandidate>{};
            o.no_gpu_reason =
                "CUDA unavailable: CUDA driver version is insufficient for CUDA runtime version";
        }
        if (check) o.qualifier = check->qualifier();
        return o;
    }

public:
    void init() { std::filesystem::remove(cache_path()); }

    void autoWithoutAGpuUsesTheCpuAndSaysWhy() {
        const DeviceChoice c = open_device("auto", options(nullptr, nullptr));
        CHECK_EQ((c.backend->info().id), std::string("cpu"));
        CHECK_MSG(contains(c.note, "driver version is insufficient"), c.note.c_str());
        CHECK_MSG(contains(c.note, "using the CPU engine"), c.note.c_str());
    }

    void autoChecksAnUncheckedGpuFirstThenTrustsTheRecord() {
        FakeGpu gpu;
        FakeCheck check;
        std::vector<std::string> progress;
        DeviceOpenOptions o = options(&gpu, &check);
        o.progress = [&](const QualificationProgress& p) { progress.push_back(p.message); };
        const DeviceChoice first = open_device("auto", o);
        CHECK_EQ(check.calls, 1);
        CHECK(first.backend.get() == gpu.last);
        CHECK(!first.fell_back);
        CHECK(!progress.empty());
        CHECK_MSG(contains(progress.front(), "Checking the CUDA engine on Fake GPU 80GB"),
                  progress.front().c_str());
        CHECK_MSG(contains(first.note, "passed its check (86 cases"), first.note.c_str());
        CHECK(exists(cache_path()));

        const DeviceChoice second = open_device("auto", o);
        CHECK_EQ(check.calls, 1); // the cached record is trusted: no second check
        CHECK(second.backend.get() == gpu.last);
        CHECK_MSG(contains(second.note, "qualified on " + utc_timestamp_now().substr(0, 10)),
                  second.note.c_str());
    }

    void aFailingCheckFallsBackToTheCpuWithTheCase() {
        FakeGpu gpu;
        FakeCheck check;
        check.pass = false;
        const DeviceChoice c = open_device("auto", options(&gpu, &check));
        CHECK_EQ((c.backend->info().id), std::string("cpu"));
        CHECK(c.fell_back); // (the address cannot tell: the freed GPU's may be reused)
        CHECK_MSG(contains(c.note, "failed its check on Fake GPU 80GB"), c.note.c_str());
        CHECK_MSG(contains(c.note, "conv2d bwd-filter 4x10x10x3 k3 bfloat16: max error 0.31"),
                  c.note.c_str());
        CHECK_MSG(contains(c.note, "using the CPU engine. Details: mantissa-cli selftest"),
                  c.note.c_str());
        // Remembered: the next "auto" falls back at once without opening the GPU again.
        const int opened = gpu.opened;
        const DeviceChoice again = open_device("auto", options(&gpu, &check));
        CHECK_EQ(check.calls, 1);
        CHECK_EQ(gpu.opened, opened);
        CHECK_MSG(contains(again.note, "failed its check"), again.note.c_str());
    }

    void aCheckThatThrowsIsAFailure() {
        FakeGpu gpu;
        DeviceOpenOptions o = options(&gpu, nullptr);
        o.qualifier = [](Backend&, const QualificationProgressFn&) -> QualificationRecord {
            throw Error(ErrorKind::Device, "cublasLtMatmul: CUBLAS_STATUS_EXECUTION_FAILED");
        };
        const DeviceChoice c = open_device("auto", o);
        CHECK_EQ((c.backend->info().id), std::string("cpu"));
        CHECK_MSG(contains(c.note, "CUBLAS_STATUS_EXECUTION_FAILED"), c.note.c_str());
    }

    void aGpuThatCannotOpenFallsBackAndIsNotRecorded() {
        FakeGpu gpu;
        gpu.fails_to_open = true;
        FakeCheck check;
        const DeviceChoice c = open_device("auto", options(&gpu, &check));
        CHECK_EQ((c.backend->info().id), std::string("cpu"));
        CHECK_MSG(contains(c.note, "CUDNN_STATUS_NOT_INITIALIZED"), c.note.c_str());
        CHECK_EQ(check.calls, 0);
        CHECK(!exists(cache_path()));
    }

    void aChangedDriverOrLibraryInvalidatesTheRecord() {
        FakeGpu gpu;
        FakeCheck check;
        open_device("auto", options(&gpu, &check));
        CHECK_EQ(check.calls, 1);
        gpu.fingerprint = fake_fingerprint(13010); // a driver update
        const std::vector<DeviceState> states = device_states(options(&gpu, &check));
        CHECK_EQ(states.size(), std::size_t{2});
        CHECK_MSG(contains(states[1].label, "not checked"), states[1].label.c_str());
        CHECK_MSG(contains(states[1].detail, "other driver or library versions"),
                  states[1].detail.c_str());
        open_device("auto", options(&gpu, &check));
        CHECK_EQ(check.calls, 2);
        gpu.fingerprint.cudnn_version = 91500; // a cuDNN update
        open_device("auto", options(&gpu, &check));
        CHECK_EQ(check.calls, 3);
        gpu.fingerprint.build = "0.1.0+other"; // a new Mantissa build
        open_device("auto", options(&gpu, &check));
        CHECK_EQ(check.calls, 4);
        open_device("auto", options(&gpu, &check));
        CHECK_EQ(check.calls, 4);
    }

    void aCorruptCacheIsAClearWarningNeverACrash() {
        std::filesystem::create_directories(m_dir.path() + "/q");
        for (const char* bytes :
             {"{not json", "[1,2,3]", "{\"format_version\": 1, \"records\": [{}]}",
              "{\"format_version\": 1, \"records\": [{\"gpu\": 3}]}"}) {
            write_file_atomic(cache_path(), bytes);
            FakeGpu gpu;
            FakeCheck check;
            const DeviceChoice c = open_device("auto", options(&gpu, &check));
            CHECK_EQ(check.calls, 1); // counts as not checked
            CHECK(c.backend.get() == gpu.last);
            CHECK_EQ(c.warnings.size(), std::size_t{1});
            CHECK_MSG(contains(c.warnings[0], cache_path()), c.warnings[0].c_str());
            CHECK_MSG(contains(c.warnings[0], "could not be read"), c.warnings[0].c_str());
            // The check rewrote the file whole: it reads back with no warning.
            QualificationCache reread(cache_path());
            CHECK_MSG(reread.warning().empty(), reread.warning().c_str());
            CHECK_EQ(reread.records().size(), std::size_t{1});
        }
    }

    void aGpuNamedExplicitlyRunsButWarnsWhenUnchecked() {
        FakeGpu gpu;
        FakeCheck check;
        const DeviceChoice c = open_device("cuda", options(&gpu, &check));
        CHECK(c.backend.get() == gpu.last);
        CHECK_EQ(check.calls, 0); // named: no check forced on the user
        CHECK_EQ(c.warnings.size(), std::size_t{1});
        CHECK_MSG(contains(c.warnings[0], "has not been checked on Fake GPU 80GB"),
                  c.warnings[0].c_str());
        CHECK_MSG(contains(c.warnings[0], "mantissa-cli selftest --qualify"),
                  c.warnings[0].c_str());
        try {
            open_device("cuda:3", options(&gpu, &check));
            FAIL_TEST("cuda:3 opened with one GPU");
        } catch (const Error& err) {
            CHECK_EQ(err.kind(), ErrorKind::Device);
            CHECK_MSG(contains(err.what(), "only 1 CUDA device"), err.what());
        }
        try {
            open_device("cuda", options(nullptr, &check));
            FAIL_TEST("cuda opened without a GPU");
        } catch (const Error& err) {
            CHECK_MSG(contains(err.what(), "driver version is insufficient"), err.what());
            CHECK_MSG(contains(err.what(), "--device cpu"), err.what());
        }
        try {
            open_device("gpu0", options(&gpu, &check));
            FAIL_TEST("a malformed device string was accepted");
        } catch (const Error& err) {
            CHECK_EQ(err.kind(), ErrorKind::InvalidArgument);
        }
    }

    void qualifyDeviceStoresTheVerdictWhateverTheCacheSaid() {
        FakeGpu gpu;
        FakeCheck check;
        check.pass = false;
        CHECK(!qualify_device("cuda:0", options(&gpu, &check)).passed);
        check.pass = true;
        const QualificationRecord r = qualify_device("cuda:0", options(&gpu, &check));
        CHECK(r.passed);
        CHECK_EQ(check.calls, 2);
        const DeviceChoice c = open_device("cuda", options(&gpu, &check));
        CHECK_MSG(c.warnings.empty(), c.warnings.empty() ? "" : c.warnings[0].c_str());
        bool threw = false;
        try {
            qualify_device("cpu", options(&gpu, &check));
        } catch (const Error&) {
            threw = true;
        }
        CHECK_MSG(threw, "qualify_device(\"cpu\", ...) did not throw mantissa::Error");
    }

    // The real check, with a second CPU engine in the GPU's place: every op case and both training
    // runs agree exactly, so it passes, counts every case and reports progress to the end.
    void theRealCheckPassesAnEngineThatAgreesWithTheCpu() {
        CpuBackend candidate;
        int last_done = -1, total = 0;
        const QualificationRecord r =
            parity_qualifier()(candidate, [&](const QualificationProgress& p) {
                last_done = p.done;
                total = p.total;
            });
        CHECK_MSG(r.passed, r.first_failure.c_str());
        CHECK_EQ(r.failures, 0);
        CHECK(r.cases >= 62); // >= 60 op cases + 2 training runs
        CHECK_EQ(r.cases, total);
        CHECK_EQ(last_done, total);
    }

    // `selftest --qualify` on this machine, which has no GPU: exit 3 and the reason, nothing
    // written; a CPU device is refused as a usage error.
    void selftestQualifyWithoutAGpuExitsThreeWithTheReason() {
        if (list_gpus().gpus.size() > 0) SKIP_TEST("a GPU is present");
        ProcessOptions env;
        env.env = {{"MANTISSA_QUALIFICATION_FILE", cache_path()}};
        env.timeout_ms = 60000;
        const ProcessResult run = run_cli({"selftest", "--qualify"}, env);
        CHECK_EQ(run.status, 3);
        const std::string& err = run.err;
        CHECK_MSG(contains(err, "no CUDA device was checked: ") &&
                      contains(err, (list_gpus().reason)),
                  (err));
        CHECK(!exists(cache_path()));
        CHECK_EQ(run_cli({"selftest", "--qualify", "--device", "cpu"}, env).status, 2);
    }

    // Issue 28: a machine without any NVIDIA driver is not told its driver is too old, and an old
    // driver's entry says which CUDA it has and which the build needs.
    void deviceStatesNameEachCause() {
        DeviceOpenOptions o = options(nullptr, nullptr);
        o.no_gpu_reason = "CUDA unavailable: no NVIDIA driver is installed (CUDA driver version "
                          "is insufficient for CUDA runtime version)";
        std::vector<DeviceState> s = device_states(o);
        CHECK_MSG(
            contains(s[1].label, "CUDA engine built; no usable GPU: no NVIDIA driver installed"),
            s[1].label.c_str());
        CHECK_MSG(!contains(s[1].label, "too old"), s[1].label.c_str());
        o.no_gpu_reason = "CUDA unavailable: the NVIDIA driver supports CUDA 12.2, this build "
                          "needs CUDA 13.0; update the NVIDIA driver";
        s = device_states(o);
        CHECK_MSG(contains(s[1].label, "driver too old (CUDA 12.2 < 13.0)"), s[1].label.c_str());
        CHECK_MSG(contains(s[1].detail, "update the NVIDIA driver"), s[1].detail.c_str());
    }

    void deviceStatesSayEachEnginesState() {
        const std::vector<DeviceState> none = device_states(options(nullptr, nullptr));
        CHECK_EQ(none.size(), std::size_t{2});
        CHECK_EQ((none[0].id), std::string("cpu"));
        CHECK(none[0].selectable);
        CHECK(!none[1].selectable);
        CHECK_MSG(
            contains(none[1].label,
                     "CUDA engine built; no usable GPU: driver too old for this CUDA runtime"),
            none[1].label.c_str());
        CHECK_MSG(contains(none[1].detail, "driver version is insufficient for CUDA runtime"),
                  none[1].detail.c_str());

        FakeGpu gpu;
        FakeCheck check;
        CHECK_MSG(
            contains(device_states(options(&gpu, &check))[1].label, "Fake GPU 80GB — not checked"),
            device_states(options(&gpu, &check))[1].label.c_str());
        open_device("auto", options(&gpu, &check));
        DeviceState s = device_states(options(&gpu, &check))[1];
        CHECK_MSG(contains(s.label, "qualified on"), s.label.c_str());
        CHECK(s.qualified && s.selectable && !s.failed);
        check.pass = false;
        qualify_device("cuda:0", options(&gpu, &check));
        s = device_states(options(&gpu, &check))[1];
        CHECK_MSG(contains(s.label, "failed its check: conv2d bwd-filter"), s.label.c_str());
        CHECK(s.failed && !s.qualified);
    }
};

MANTISSA_TEST_MAIN(TestDeviceSelection, autoWithoutAGpuUsesTheCpuAndSaysWhy,
                   autoChecksAnUncheckedGpuFirstThenTrustsTheRecord,
                   aFailingCheckFallsBackToTheCpuWithTheCase, aCheckThatThrowsIsAFailure,
                   aGpuThatCannotOpenFallsBackAndIsNotRecorded,
                   aChangedDriverOrLibraryInvalidatesTheRecord,
                   aCorruptCacheIsAClearWarningNeverACrash,
                   aGpuNamedExplicitlyRunsButWarnsWhenUnchecked,
                   qualifyDeviceStoresTheVerdictWhateverTheCacheSaid,
                   theRealCheckPassesAnEngineThatAgreesWithTheCpu,
                   selftestQualifyWithoutAGpuExitsThreeWithTheReason,
                   deviceStatesSayEachEnginesState, deviceStatesNameEachCause)
