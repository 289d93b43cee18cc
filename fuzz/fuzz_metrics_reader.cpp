// libFuzzer target for the metrics JSONL reader (core/records/metrics_reader.*): the app reopens
// every past run with it, so any text (a damaged, hand-edited or cut-off file) must parse or throw
// mantissa::Error(Data), never crash or hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "core/records/metrics_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const mantissa::RunMetrics run = mantissa::parse_metrics_jsonl(text, "fuzz.jsonl");
        // Only a final line without its newline may be dropped as cut off.
        if (run.truncated_tail && !text.empty() && text.back() == '\n') std::abort();
    } catch (const mantissa::Error& e) {
        if (e.kind() != mantissa::ErrorKind::Data) std::abort();
    }
    return 0;
}
