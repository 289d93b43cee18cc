// TrainControl: pause / resume / stop requests from another thread (the GUI), checked between
// steps, and the phase the run is in. Lock-free atomics: the worker never blocks on the UI.
#pragma once

#include <atomic>
#include <functional>
#include <utility>

namespace mantissa {

// Where a run is. Stop and pause act between steps; a stop that arrives in another phase takes
// effect when that phase ends (compilation and validation finish, the weights file is written).
enum class RunPhase : int {
    Preparing,  // loading data, choosing the engine, compiling the plan
    Training,   // the step loop (paused or not)
    Validating, // the end-of-epoch pass over the 10,000 test images
    Saving,     // writing the run's weights file
};

inline const char* run_phase_name(RunPhase phase) {
    switch (phase) {
    case RunPhase::Preparing:
        return "preparing";
    case RunPhase::Training:
        return "training";
    case RunPhase::Validating:
        return "validating";
    case RunPhase::Saving:
        return "saving";
    }
    return "unknown";
}

class TrainControl {
public:
    void request_stop() { m_stop.store(true); }
    void set_paused(bool paused) { m_pause.store(paused); }
    bool stop_requested() const { return m_stop.load(); }
    bool paused() const { return m_pause.load(); }
    // Set by the trainer while it waits in its pause loop: every step before it has been
    // reported, so a UI (or a test) can tell "pausing" from "paused" without guessing a delay.
    void set_parked(bool parked) { m_parked.store(parked); }
    bool parked() const { return m_parked.load(); }

    // Called by the thread that runs the training as it enters each phase.
    void enter_phase(RunPhase phase) {
        m_phase.store(phase);
        if (m_phase_observer) m_phase_observer(phase);
    }
    RunPhase phase() const { return m_phase.load(); }
    // Called on the training thread at each enter_phase(), inside the phase: the stress tests use
    // it to hold a run in one phase while they stop it. Set it before the run starts.
    void set_phase_observer(std::function<void(RunPhase)> observer) {
        m_phase_observer = std::move(observer);
    }

private:
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_pause{false};
    std::atomic<bool> m_parked{false};
    std::atomic<RunPhase> m_phase{RunPhase::Preparing};
    std::function<void(RunPhase)> m_phase_observer;
};

} // namespace mantissa
