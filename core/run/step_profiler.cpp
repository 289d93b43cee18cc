// profile_training_step (step_profiler.h): a RunSession used only for its Trainer.
#include "core/run/step_profiler.h"

#include <algorithm>

#include "core/numeric/policy.h"
#include "core/run/run_session.h"

namespace mantissa {

std::optional<StepProfile> profile_training_step(const Experiment& experiment, Backend& backend,
                                                 const Mnist& data,
                                                 const StepProfilerOptions& options) {
    RunSessionOptions session_options;
    session_options.experiment = experiment;
    session_options.engine.backend = &backend;
    session_options.data.data = &data;
    RunSession session(std::move(session_options));
    Trainer& trainer = session.trainer();
    trainer.wrap_at_full_batches();
    // Batches in order through one epoch (the last, partial batch left out), then round again.
    const std::int64_t full = std::max<std::int64_t>(1, data.train.count / experiment.batch_size);
    const std::int64_t per_epoch =
        std::max<std::int64_t>(1, std::min(trainer.steps_per_epoch(), full));
    std::int64_t next = 0;
    auto offset = [&] { return (next++ % per_epoch) * experiment.batch_size; };
    const int total = options.warmup + options.steps;
    auto stop = [&] { return options.cancelled && options.cancelled(); };
    int done = 0;
    auto report = [&] {
        if (options.progress) options.progress(++done, total);
    };
    for (int i = 0; i < options.warmup; ++i) {
        if (stop()) return std::nullopt;
        trainer.step_once(offset());
        report();
    }
    std::vector<std::vector<double>> times;
    for (int i = 0; i < options.steps; ++i) {
        if (stop()) return std::nullopt;
        times.push_back(trainer.profile_step(offset()));
        report();
    }
    if (stop()) return std::nullopt;
    const DeviceRoof roof = measure_roof(backend, policy_from_name(experiment.policy).compute);
    return make_step_profile(trainer.plan(), times, roof);
}

} // namespace mantissa
