// TrainControl: pause / resume / stop requests from another thread (the GUI), checked between
// steps. Lock-free atomics, so the worker never blocks on the UI and the UI never waits on a step.
#pragma once

#include <atomic>

namespace mantissa {

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

private:
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_pause{false};
    std::atomic<bool> m_parked{false};
};

} // namespace mantissa
