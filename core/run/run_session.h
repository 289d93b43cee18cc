// RunSession: one whole training session — engine, data, Trainer, starting weights, the metrics
// JSONL (every record, histograms included) — run to its summary and trained weights. The CLI's
// train/bench/selftest, the GUI worker and the tests are presenters over it (ARCHITECTURE.md,
// core/run); the session owns the objects and their order of destruction.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/records/metrics_jsonl.h"
#include "core/records/trained_model.h"
#include "core/run/session_inputs.h"
#include "core/train/trainer.h"

namespace mantissa {

// What the caller hears during a run (on the thread that calls run()). The session writes the
// metrics file itself; these are for printing, charts and tests.
struct RunCallbacks {
    std::function<void(const StepRecord&)> on_step;
    std::function<void(const EpochRecord&)> on_epoch;
    // Gradient histograms at step 1 and every experiment.histogram_every steps (when set).
    std::function<void(const GradientHistogram&)> on_histogram;
    // Quantised policies: amax, scale and clipped / flushed shares per layer and role, at step 1
    // and every experiment.quant_every steps.
    std::function<void(const QuantRecord&)> on_quant;
    std::function<void(const std::string&)> on_log; // notes and warnings, one line each
    // Set: a metrics file that cannot be opened or written is reported here once and dropped,
    // and the run goes on (the GUI's history). Unset: the Error(Io) ends the run (the CLI).
    std::function<void(const std::string&)> on_metrics_error;
};

// Weights a run starts from instead of its random initialisation.
struct StartingWeights {
    ModelWeights weights;
    std::string source; // the file they came from, for messages
    LoadWeightsOptions options;
};

struct RunSessionOptions {
    Experiment experiment;
    EngineSource engine;
    DataSource data;
    std::optional<StartingWeights> initial_weights;
    std::string metrics_path;     // empty: no metrics file
    DataParallelOptions parallel; // rank 0 alone writes the metrics file
    RunCallbacks callbacks;
};

struct RunOutcome {
    RunSummary summary;
    // The experiment, the trained variables (float32 masters under mixed policies) and the last
    // validation as test metrics: what an export or the run history's weights file needs.
    TrainedModel model;
};

class RunSession {
public:
    // Opens the engine, loads the data, compiles and initialises the plan, loads the starting
    // weights and writes the metrics header. Throws what those throw (Error(Config / Shape /
    // Data / OutOfMemory / Io)); nothing is left allocated when it does.
    explicit RunSession(RunSessionOptions options);
    ~RunSession();
    RunSession(const RunSession&) = delete;
    RunSession& operator=(const RunSession&) = delete;

    // Trains to the end (epochs, max_steps, stop or divergence) and writes every record and the
    // summary. An exception is written as a `failed` summary, then rethrown. Once per session:
    // a second call throws Error(Internal) (the metrics file already has its summary).
    RunOutcome run(TrainControl& control);

    const Experiment& experiment() const { return m_trainer->experiment(); }
    Backend& backend() const { return m_engine.backend(); }
    const DeviceChoice* device_choice() const { return m_engine.choice(); }
    const Plan& plan() const { return m_trainer->plan(); }
    MemoryByCategory memory() const { return m_trainer->memory(); }
    std::int64_t steps_per_epoch() const { return m_trainer->steps_per_epoch(); }
    bool is_root() const; // rank 0 (or the only rank): writes metrics
    bool writes_metrics() const { return m_metrics != nullptr; }
    // Step-level access for benchmarks and parity checks (step_once, enqueue_step).
    Trainer& trainer() { return *m_trainer; }

private:
    template <typename Write>
    void record(Write&& write);

    // Declaration order is destruction order reversed: the engine outlives the data, the data
    // the Trainer (which holds the engine), the Trainer the metrics writer's last records.
    SessionEngine m_engine;
    std::optional<Mnist> m_owned_data;
    const Mnist* m_data = nullptr;
    std::unique_ptr<Trainer> m_trainer;
    std::unique_ptr<MetricsJsonlWriter> m_metrics;
    RunCallbacks m_callbacks;
    Communicator* m_comm = nullptr;
    bool m_ran = false;
};

} // namespace mantissa
