// libFuzzer target for the experiment JSON loader (core/train/experiment.*): any text must load
// or throw mantissa::Error(Config); what loads must round-trip through the writer unchanged and
// go through shape inference (Model::analyze, which the editor runs on every edit) safely.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "core/nn/model.h"
#include "core/numeric/policy.h"
#include "core/train/experiment.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    mantissa::Experiment e;
    try {
        e = mantissa::experiment_from_json(text, "fuzz.json");
    } catch (const mantissa::Error& err) {
        if (err.kind() != mantissa::ErrorKind::Config) std::abort();
        return 0;
    }
    // The writer's output must read back to the same experiment (the GUI saves what it loaded).
    try {
        if (!(mantissa::experiment_from_json(mantissa::experiment_to_json(e), "again.json") == e))
            std::abort();
    } catch (const mantissa::Error&) {
        std::abort();
    }
    try {
        const mantissa::Model model(e.model, mantissa::policy_from_name(e.policy));
        (void)model.analyze();
    } catch (const mantissa::Error& err) {
        if (err.kind() != mantissa::ErrorKind::Config) std::abort();
    }
    return 0;
}
