// Whether a run honours the experiment's `graph` flag (CUDA Graph capture of a training step),
// and the one line the run says about it. Capture records a step's ops once per batch size (the
// batch's position is read on the device: StepScalars::batch_position) and replays them; that is
// only right when nothing but the batch position changes between steps, so a model with dropout
// (whose mask seed is the step number, a kernel argument) runs eagerly, and so does a plan with
// stochastic rounding (its stream is seeded with the step number, a kernel argument too). Engines
// without graphs (the CPU engine) accept the flag and say it has no effect.
#pragma once

#include <string>

namespace mantissa {

struct GraphMode {
    bool capture = false; // replay captured steps (after the first, eager, step)
    std::string note;     // empty when the flag is off
};

// `flag`: the experiment's graph flag; `engine_captures`: Backend::captures_graphs();
// `engine_note`: Backend::graph_capture_note() (why an engine without graphs ignores it).
// `stochastic_rounding`: a quantise step of the plan rounds stochastically.
GraphMode graph_mode(bool flag, bool engine_captures, const std::string& engine_note,
                     bool has_dropout, bool stochastic_rounding = false);

} // namespace mantissa
