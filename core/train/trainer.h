// Trainer: runs an Experiment on a backend: epochs over shuffled MNIST, validation every epoch,
// pause/stop between steps, and value-type metrics through callbacks. Same seed, same numbers.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/backend/backend.h"
#include "core/data/mnist.h"
#include "core/nn/model.h"
#include "core/parallel/communicator.h"
#include "core/plan/plan.h"
#include "core/plan/plan_weights.h"
#include "core/train/experiment.h"
#include "core/train/gradient_histogram.h"
#include "core/train/gradient_sync.h"
#include "core/train/graph_mode.h"
#include "core/train/metrics.h"
#include "core/train/quant_record.h"
#include "core/train/train_control.h"

namespace mantissa {

struct TrainerCallbacks {
    std::function<void(const StepRecord&)> on_step;
    std::function<void(const EpochRecord&)> on_epoch;
    std::function<void(const std::string&)> on_log; // notes and warnings, one line each
    // Gradient histograms at step 1 and every experiment.histogram_every steps (when set).
    std::function<void(const GradientHistogram&)> on_histogram;
    // Quantised policies only: the quantise steps' statistics at step 1 and every
    // experiment.quant_every steps (read after the step, outside its time).
    std::function<void(const QuantRecord&)> on_quant;
};

// Data-parallel training: every rank builds a Trainer with the same experiment and communicator.
// Each trains on its shard of every global batch (experiment.batch_size / ranks rows); the
// gradients are averaged over the ranks before the unscale, and found_inf is agreed by MAX.
struct DataParallelOptions {
    Communicator* communicator = nullptr; // nullptr or one rank: an ordinary run
    DType allreduce_dtype = DType::Float32;
    // Test hook (GradientSync::inject_nonfinite): rank and step, or -1 / 0 for none.
    int inject_nonfinite_rank = -1;
    std::int64_t inject_nonfinite_step = 0;
};

struct EvalResult {
    double loss = 0;
    double accuracy = 0;
    std::int64_t examples = 0;
};

class Trainer {
public:
    // Validates the experiment, compiles the plan and puts the dataset on the device.
    // Throws Error(Config / Shape / OutOfMemory) with a message naming the cause.
    // With `parallel`, also throws Error(Config) naming batch_size when it does not divide by the
    // ranks.
    Trainer(const Experiment& experiment, const Mnist& data, Backend& backend,
            const DataParallelOptions& parallel = {});
    ~Trainer();

    const Experiment& experiment() const { return m_experiment; }
    const Model& model() const { return *m_model; }
    const Plan& plan() const { return *m_plan; }
    Backend& backend() { return m_backend; }
    std::int64_t steps_per_epoch() const;
    int ranks() const { return m_comm ? m_comm->size() : 1; }
    int rank() const { return m_comm ? m_comm->rank() : 0; }
    // Rows each rank trains on per step (the compiled plan's batch size).
    std::int64_t local_batch_size() const { return m_local_batch; }
    // Bytes per category including the dataset ("data").
    MemoryByCategory memory() const;

    // Trains for the experiment's epochs (or max_steps). Returns how the run ended; a diverged
    // run returns status Diverged (it does not throw) so callers can keep its metrics.
    RunSummary run(TrainControl& control, const TrainerCallbacks& callbacks);
    // Loss and accuracy over the 10,000 test images with the current weights.
    EvalResult evaluate();
    // The trained variables, named "dense_1.kernel" (float32 masters under mixed policies).
    ModelWeights weights() const { return read_model_weights(*m_plan, m_backend); }
    // Replaces the variables (to evaluate or continue training imported weights); checks names,
    // shapes and dtypes first and throws Error(Config) naming `source` and the tensor.
    void load_weights(const ModelWeights& weights, const std::string& source,
                      const LoadWeightsOptions& options = {}) {
        load_model_weights(*m_plan, m_backend, weights, source, options);
    }
    // One training step on the batch at `offset` of the current permutation (for benchmarks).
    StepScalars step_once(std::int64_t offset);
    // For callers that step over the full batches only, round and round (benchmarks, the
    // profiler, parity checks): the device's batch position then wraps where their offsets do,
    // so every such step reads its position on the device (one CUDA Graph for all of them).
    void wrap_at_full_batches();
    // The same step, only enqueued: nothing is read back (GPU benchmarks time many at once).
    void enqueue_step(std::int64_t offset);
    // One training step on the batch at `offset` with each plan step timed on its own
    // (Plan::train_step_timed: eager; device time marks between the plan steps, or a wait after
    // each on an engine without them; one process only).
    std::vector<double> profile_step(std::int64_t offset);
    // The gradients the next step will compute on the batch at `offset`, binned on the backend:
    // a forward and backward pass with that step's batch and dropout masks, no update.
    GradientHistogram gradient_histogram(std::int64_t offset);
    // The quantise steps' statistics of the latest training step (empty under other policies).
    QuantRecord quant_record(std::int64_t step) const;

private:
    struct DeviceData;
    // The training context of global step `step` on the global batch at `offset`: this rank's
    // shard of it, and its weight in the gradient mean (1 for one process).
    RunContext training_context(std::int64_t offset, std::int64_t step, double* weight) const;

    Experiment m_experiment;
    Backend& m_backend;
    std::unique_ptr<Model> m_model;
    std::unique_ptr<Plan> m_plan;
    std::unique_ptr<DeviceData> m_data;
    std::unique_ptr<GradientHistogramProbe> m_histograms; // made on first use
    Communicator* m_comm = nullptr;                       // set only when there are several ranks
    std::unique_ptr<GradientSync> m_sync;                 // with m_comm
    std::int64_t m_local_batch = 0;
    std::int64_t m_global_step = 0;
    // Where the device's StepScalars::batch_position stands (the next batch's offset), moved as
    // finish_step moves it; a step whose offset equals it reads its position on the device.
    std::int64_t m_device_position = 0;
    std::int64_t m_epoch_wrap = 0; // where it goes back to 0: the epoch's examples
    void advance_device_position();
    GraphMode m_graph; // the experiment's graph flag on this engine and model
    // The skipped-step ledger: the plan's parameter indices in the order the backward pass
    // writes their gradients (StepRecord::overflowed lists them so).
    std::vector<std::size_t> m_backward_order;
};

} // namespace mantissa
