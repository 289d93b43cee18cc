// libFuzzer target for the lesson reader (core/train/lesson.*): any lesson text, and any preset it
// names, must load or throw mantissa::Error(Config), never crash or hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "core/train/lesson.h"

namespace {

// resources/experiments/mlp-small.json, the preset the shipped lessons build on.
constexpr const char* kMlpSmall = R"({"format_version": 1, "name": "mlp-small", "dataset": "mnist",
 "model": {"input": [28, 28, 1], "layers": [{"type": "Flatten"},
  {"type": "Dense", "units": 128, "activation": "gelu"},
  {"type": "Dense", "units": 128, "activation": "gelu"}, {"type": "Dense", "units": 10},
  {"type": "Activation", "activation": "softmax", "dtype": "float32"}]},
 "policy": "float32", "optimizer": {"type": "rmsprop", "learning_rate": 0.002},
 "batch_size": 128, "epochs": 3, "seed": 42, "device": "auto"})";

} // namespace

// The input is the lesson; after a NUL byte, if any, comes the text of every preset it names
// (otherwise "mlp-small.json" is the real preset and other names do not exist).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    const std::size_t nul = input.find('\0');
    const std::string lesson_text = input.substr(0, nul);
    const bool own_preset = nul != std::string::npos;
    const std::string preset = own_preset ? input.substr(nul + 1) : std::string(kMlpSmall);
    auto read_preset = [&](const std::string& file) -> std::string {
        if (own_preset || file == "mlp-small.json") return preset;
        throw mantissa::Error(mantissa::ErrorKind::Io, file + ": no such preset");
    };
    try {
        const mantissa::Lesson lesson =
            mantissa::lesson_from_json(lesson_text, "fuzz.json", "fuzz", read_preset);
        if (lesson.experiments.empty() || lesson.text.empty() || lesson.look_at.empty())
            std::abort();
    } catch (const mantissa::Error& e) {
        if (e.kind() != mantissa::ErrorKind::Config) std::abort();
    }
    return 0;
}
