// libFuzzer target for the metrics JSONL writer (core/records/metrics_jsonl.*): whatever a run
// produces (NaN and inf values, any bytes in a message or a file path) must come out as one
// valid JSON object per line, because the GUI, the CLI and users' scripts parse these files.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/records/metrics_jsonl.h"
#include "fuzz/fuzz_input_file.h"

namespace {

// Any double, the special values included, so NaN and inf come up often.
double any_double(FuzzedDataProvider& in) {
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0:
        return std::numeric_limits<double>::quiet_NaN();
    case 1:
        return std::numeric_limits<double>::infinity();
    case 2:
        return -std::numeric_limits<double>::infinity();
    default: {
        double d = 0;
        const auto bytes = in.ConsumeBytes<std::uint8_t>(sizeof d);
        if (!bytes.empty()) std::memcpy(&d, bytes.data(), bytes.size());
        return d;
    }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static mantissa::fuzz::InputFile file;
    FuzzedDataProvider in(data, size);
    int lines = 0;
    {
        mantissa::MetricsJsonlWriter writer(file.path());
        while (in.remaining_bytes() > 0 && lines < 64) {
            ++lines;
            switch (in.ConsumeIntegralInRange<int>(0, 3)) {
            case 0: {
                mantissa::StepRecord r;
                r.step = in.ConsumeIntegral<std::int64_t>();
                r.epoch = in.ConsumeIntegral<int>();
                r.loss = any_double(in);
                r.accuracy = any_double(in);
                r.step_ms = any_double(in);
                r.samples_per_s = any_double(in);
                r.loss_scale = any_double(in);
                r.skipped = in.ConsumeBool();
                r.good_steps = in.ConsumeIntegral<std::int64_t>();
                r.device_mem_used = in.ConsumeIntegral<std::size_t>();
                writer.write_step(r);
                break;
            }
            case 1: {
                mantissa::EpochRecord r;
                r.epoch = in.ConsumeIntegral<int>();
                r.loss = any_double(in);
                r.val_loss = any_double(in);
                r.val_accuracy = any_double(in);
                r.seconds = any_double(in);
                r.loss_scale = any_double(in);
                writer.write_epoch(r);
                break;
            }
            case 2: {
                mantissa::RunSummary s;
                s.status = static_cast<mantissa::RunStatus>(in.ConsumeIntegralInRange<int>(0, 3));
                s.message = in.ConsumeRandomLengthString(256);
                s.train_loss = any_double(in);
                s.val_accuracy = any_double(in);
                s.median_step_ms = any_double(in);
                s.seconds_to_97 = any_double(in);
                writer.write_summary(s);
                break;
            }
            default:
                writer.write_log(in.ConsumeRandomLengthString(256));
                break;
            }
        }
    }
    // Read back: exactly one JSON object per record, each with its type.
    std::ifstream back(file.path());
    std::string line;
    int read = 0;
    while (std::getline(back, line)) {
        const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("type")) std::abort();
        ++read;
    }
    if (read != lines) std::abort();
    return 0;
}
