// Trainer implementation: dataset upload, seeded shuffling, the step loop, validation,
// divergence detection and pause/stop handling.
#include "core/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/parallel/shard.h"
#include "core/plan/bind.h"
#include "core/plan/describe.h"
#include "core/plan/fp8_lowering.h"
#include "core/train/divergence_advice.h"

namespace mantissa {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    return values[values.size() / 2];
}

std::uint64_t splitmix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// A run has diverged when an update was applied with a non-finite loss (the weights are now
// garbage), or when the dynamic scaler skipped this many steps in a row (it cannot recover).
constexpr std::int64_t kMaxConsecutiveSkips = 100;

// One step's numbers gathered from every rank (data-parallel runs).
struct RankStats {
    double loss_sum = 0;
    std::int64_t correct = 0, examples = 0;
    double slowest_step_ms = 0, slowest_allreduce_ms = 0;
    std::vector<double> step_ms;
    std::vector<bool> skipped;
};

RankStats exchange_step_stats(Communicator& comm, const StepScalars& scalars, double step_ms,
                              double allreduce_ms, std::int64_t step) {
    constexpr std::size_t kFields = 7;
    const double mine[kFields] = {scalars.loss_sum,
                                  static_cast<double>(scalars.correct),
                                  static_cast<double>(scalars.examples),
                                  step_ms,
                                  allreduce_ms,
                                  scalars.scale_used,
                                  static_cast<double>(scalars.skipped)};
    const auto ranks = static_cast<std::size_t>(comm.size());
    std::vector<double> all(ranks * kFields);
    comm.allgather(mine, all);
    RankStats out;
    for (std::size_t r = 0; r < ranks; ++r) {
        const double* v = &all[r * kFields];
        out.loss_sum += v[0];
        out.correct += static_cast<std::int64_t>(v[1]);
        out.examples += static_cast<std::int64_t>(v[2]);
        out.step_ms.push_back(v[3]);
        out.slowest_step_ms = std::max(out.slowest_step_ms, v[3]);
        out.slowest_allreduce_ms = std::max(out.slowest_allreduce_ms, v[4]);
        out.skipped.push_back(v[6] != 0);
        // The found-inf MAX makes these agree; if they ever do not, the ranks' weights differ
        // from here on and the run must not go on as if it were one model.
        if (v[5] != all[5] || v[6] != all[6])
            throw Error(ErrorKind::Internal, "data parallel: at step " + std::to_string(step) +
                                                 " rank " + std::to_string(r) +
                                                 " used loss scale " + std::to_string(v[5]) +
                                                 (v[6] != 0 ? " and skipped" : " and applied") +
                                                 " the update, rank 0 " + std::to_string(all[5]) +
                                                 (all[6] != 0 ? " and skipped" : " and applied"));
    }
    return out;
}

// The plan's parameter indices in the order its steps first write their gradients (the backward
// pass runs from the loss down, so the last layer's come first); a gradient no step writes goes
// last. The unscale list is the parameters in plan order, so index p is nonfinite_bit(p).
std::vector<std::size_t> backward_gradient_order(const Plan& plan) {
    std::vector<std::size_t> first_write(plan.params.size());
    for (std::size_t p = 0; p < plan.params.size(); ++p) {
        const auto writes = [&](const PlanStep& step) {
            return std::find(step.outputs.begin(), step.outputs.end(), plan.params[p].grad) !=
                   step.outputs.end();
        };
        first_write[p] = static_cast<std::size_t>(
            std::find_if(plan.steps.begin(), plan.steps.end(), writes) - plan.steps.begin());
    }
    std::vector<std::size_t> order(plan.params.size());
    for (std::size_t p = 0; p < order.size(); ++p) order[p] = p;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return first_write[a] < first_write[b]; });
    return order;
}

} // namespace

// The dataset resident on the device: uint8 images and labels, and an int32 permutation.
struct Trainer::DeviceData {
    Buffer buffer;
    Tensor train_images, train_labels, train_perm;
    Tensor test_images, test_labels, test_perm;
    std::int64_t train_count = 0, test_count = 0;
    std::size_t bytes = 0;
};

Trainer::Trainer(const Experiment& experiment, const Mnist& data, Backend& backend,
                 const DataParallelOptions& parallel)
    : m_experiment(experiment), m_backend(backend) {
    validate_experiment(m_experiment);
    if (parallel.communicator && parallel.communicator->size() > 1) m_comm = parallel.communicator;
    m_local_batch = mantissa::local_batch_size(m_experiment.batch_size, ranks());
    const Policy policy = policy_with_recipe(m_experiment.policy, m_experiment.recipe);
    m_model = std::make_unique<Model>(m_experiment.model, policy);
    // OneCycle spans the run unless told otherwise: its step count is known only here.
    const std::int64_t batches =
        (data.train.count + m_experiment.batch_size - 1) / m_experiment.batch_size;
    std::int64_t run_steps = batches * m_experiment.epochs;
    if (m_experiment.max_steps > 0) run_steps = std::min(run_steps, m_experiment.max_steps);
    m_experiment.optimizer.schedule = resolve_schedule(m_experiment.optimizer.schedule, run_steps,
                                                       "optimizer.learning_rate.config");
    CompileOptions options;
    options.policy = policy;
    options.batch_size = m_local_batch;
    options.optimizer = m_experiment.optimizer;
    options.loss_scale = m_experiment.loss_scale;
    options.fp8_gemm = resolve_fp8_gemm(policy, &m_backend);
    options.reduce_gradients = m_comm != nullptr; // GradientSync reads the variable-dtype ones
    m_backend.set_tf32(m_experiment.tf32);
    // Pure 16-bit policies overflow to inf/NaN often, in their weights too: NaN must show as on
    // the CPU, never be turned into 0 by a fused cuBLASLt ReLU.
    m_backend.set_propagate_nan(!policy.is_mixed() && (policy.compute == DType::Float16 ||
                                                       policy.compute == DType::BFloat16));
    m_plan = bind(describe(*m_model, options), m_backend);
    m_plan->initialize(m_backend, m_experiment.seed); // the same weights on every rank
    m_backward_order = backward_gradient_order(*m_plan);
    if (m_comm) {
        m_sync = std::make_unique<GradientSync>(*m_plan, *m_comm, parallel.allreduce_dtype);
        m_sync->inject_nonfinite(parallel.inject_nonfinite_rank, parallel.inject_nonfinite_step);
    }
    const bool has_dropout =
        std::any_of(m_experiment.model.layers.begin(), m_experiment.model.layers.end(),
                    [](const LayerSpec& l) { return l.type == LayerType::Dropout && l.rate > 0; });
    // Stochastic rounding seeds its stream with the step number, a kernel argument (as dropout).
    const bool stochastic =
        std::any_of(m_plan->quant.begin(), m_plan->quant.end(), [](const PlanQuant& q) {
            return q.spec.scaling == QuantScaling::Block && q.spec.block.stochastic;
        });
    m_graph = graph_mode(m_experiment.graph, m_backend.captures_graphs(),
                         m_backend.graph_capture_note(), has_dropout, stochastic);

    // Put the dataset on the device once; batches are gathered and normalised there.
    m_data = std::make_unique<DeviceData>();
    DeviceData& d = *m_data;
    d.train_count = data.train.count;
    d.test_count = data.test.count;
    const std::int64_t pixels = data.train.rows * data.train.cols;
    auto make = [](const char* name, DType dtype, Shape shape) {
        Tensor t;
        t.name = name;
        t.dtype = dtype;
        t.shape = std::move(shape);
        t.category = MemCategory::Data;
        return t;
    };
    d.train_images = make("train_images", DType::UInt8, {d.train_count, pixels});
    d.train_labels = make("train_labels", DType::UInt8, {d.train_count});
    d.train_perm = make("train_permutation", DType::Int32, {d.train_count});
    d.test_images = make("test_images", DType::UInt8, {d.test_count, pixels});
    d.test_labels = make("test_labels", DType::UInt8, {d.test_count});
    d.test_perm = make("test_permutation", DType::Int32, {d.test_count});
    Tensor* all[] = {&d.train_images, &d.train_labels, &d.train_perm,
                     &d.test_images,  &d.test_labels,  &d.test_perm};
    std::size_t total = 0;
    for (Tensor* t : all) total += (t->bytes() + 255) / 256 * 256;
    d.buffer = m_backend.allocate(total);
    d.bytes = 0;
    auto* base = static_cast<unsigned char*>(d.buffer.data());
    for (Tensor* t : all) {
        t->data = base + d.bytes;
        d.bytes += (t->bytes() + 255) / 256 * 256;
    }
    d.bytes = 0;
    for (Tensor* t : all) d.bytes += t->bytes();
    m_backend.upload(data.train.images.data(), d.train_images);
    m_backend.upload(data.train.labels.data(), d.train_labels);
    m_backend.upload(data.test.images.data(), d.test_images);
    m_backend.upload(data.test.labels.data(), d.test_labels);
    std::vector<std::int32_t> identity(
        static_cast<std::size_t>(std::max(d.train_count, d.test_count)));
    for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<std::int32_t>(i);
    m_backend.upload(identity.data(), d.train_perm);
    m_backend.upload(identity.data(), d.test_perm);

    // A training step reads its batch position on the device (StepScalars::batch_position), so
    // one captured graph serves every position (issue 26); finish_step moves it as
    // m_device_position follows it here, and each readout of run() checks that the two agree.
    Tensor& scalars = m_plan->tensor(m_plan->scalars);
    StepScalars s = m_backend.read_scalars(scalars);
    s.batch_position = 0;
    s.batch_stride = m_experiment.batch_size;
    s.epoch_examples = m_epoch_wrap = d.train_count;
    m_backend.write_scalars(s, scalars);
}

void Trainer::wrap_at_full_batches() {
    const std::int64_t batch = m_experiment.batch_size;
    const std::int64_t full = m_data->train_count / batch * batch;
    if (full <= 0 || full == m_epoch_wrap) return;
    Tensor& scalars = m_plan->tensor(m_plan->scalars);
    StepScalars s = m_backend.read_scalars(scalars);
    s.epoch_examples = m_epoch_wrap = full;
    if (s.batch_position >= full) s.batch_position = 0;
    m_device_position = s.batch_position;
    m_backend.write_scalars(s, scalars);
}

Trainer::~Trainer() {
    m_backend.drop_graphs(this); // they hold this plan's addresses
}

std::int64_t Trainer::steps_per_epoch() const {
    return (m_data->train_count + m_experiment.batch_size - 1) / m_experiment.batch_size;
}

MemoryByCategory Trainer::memory() const {
    MemoryByCategory memory = m_plan->memory;
    memory[MemCategory::Data] += m_data->bytes;
    return memory;
}

void Trainer::advance_device_position() {
    StepScalars mirror;
    mirror.batch_position = m_device_position;
    mirror.batch_stride = m_experiment.batch_size;
    mirror.epoch_examples = m_epoch_wrap;
    advance_batch_position(mirror); // the rule finish_step applies on the device
    m_device_position = mirror.batch_position;
}

StepScalars Trainer::step_once(std::int64_t offset) {
    enqueue_step(offset);
    return m_backend.read_scalars(m_plan->tensor(m_plan->scalars));
}

RunContext Trainer::training_context(std::int64_t offset, std::int64_t step, double* weight) const {
    RunContext ctx;
    ctx.training = true;
    ctx.seed = m_experiment.seed;
    ctx.step = static_cast<std::uint64_t>(step);
    const std::int64_t count = std::min(m_experiment.batch_size, m_data->train_count - offset);
    BatchShard shard{offset, count, 1.0};
    if (m_comm) {
        shard = batch_shard(offset, count, m_local_batch, m_comm->rank());
        // Dropout masks hash (seed, step, element of the local batch): without this, row i of
        // every rank's shard would share one mask. Rank 0 keeps the run's own seed.
        ctx.seed += static_cast<std::uint64_t>(m_comm->rank()) * 0x9E3779B97F4A7C15ull;
    }
    ctx.batch = {&m_data->train_images, &m_data->train_labels, &m_data->train_perm, shard.offset,
                 shard.count};
    // One process, in order: the device's batch_position holds `offset` (see enqueue_step).
    ctx.batch.device_position = !m_comm && offset == m_device_position;
    if (weight) *weight = shard.weight;
    return ctx;
}

void Trainer::enqueue_step(std::int64_t offset) {
    double weight = 1.0;
    RunContext ctx = training_context(offset, ++m_global_step, &weight);
    advance_device_position(); // finish_step moves the device's copy, in every mode
    if (m_sync) {
        m_sync->begin_step(m_backend, weight, m_global_step);
        ctx.hooks = m_sync.get();
    }
    // The first step runs eagerly: it builds the engine's plans (cuBLASLt and cuDNN choices),
    // which a capture must not do. After it, a step is a function of its batch position alone
    // (the permutation and Adam's t live in device memory), so one graph per position replays.
    // A data-parallel step calls host-side hooks (the allreduce) between its kernels, which a
    // graph cannot hold: such steps stay eager.
    if (!m_graph.capture || m_sync || m_global_step == 1) {
        m_plan->train_step(m_backend, ctx);
        return;
    }
    // Steps in order read their batch position on the device, so they differ only by the batch's
    // size: one graph for the full batches, one for a short last batch. A step out of order (a
    // caller that did not wrap_at_full_batches) bakes its offset in: one graph per offset.
    const auto key = ctx.batch.device_position
                         ? static_cast<std::uint64_t>(ctx.batch.count)
                         : (std::uint64_t{1} << 62) | static_cast<std::uint64_t>(offset);
    if (m_backend.replay_graph(this, key)) return;
    m_backend.begin_graph_capture();
    try {
        m_plan->train_step(m_backend, ctx);
    } catch (...) {
        m_backend.abort_graph_capture();
        throw;
    }
    m_backend.end_graph_capture(this, key);
    m_backend.replay_graph(this, key); // the capture recorded the step without running it
}

std::vector<double> Trainer::profile_step(std::int64_t offset) {
    if (m_sync)
        throw Error(ErrorKind::Config,
                    "profile: a data-parallel run cannot be profiled step by step; profile it in "
                    "one process");
    RunContext ctx = training_context(offset, ++m_global_step, nullptr);
    advance_device_position();
    std::vector<double> ms;
    m_plan->train_step_timed(m_backend, ctx, ms);
    return ms;
}

GradientHistogram Trainer::gradient_histogram(std::int64_t offset) {
    if (!m_histograms) m_histograms = std::make_unique<GradientHistogramProbe>(*m_plan, m_backend);
    // The context step_once() will build next, so the binned gradients are that step's own
    // (this rank's shard of it in a data-parallel run: the histogram is taken before the sum).
    const RunContext ctx = training_context(offset, m_global_step + 1, nullptr);
    // The extra pass must leave the run as it found it: a training forward moves the state the
    // step will read (Plan::forward_state), and a second move made a run that records histograms
    // (the GUI, `train --metrics`) differ from the same run without them.
    const std::vector<TensorId> persistent = m_plan->forward_state();
    std::vector<std::vector<unsigned char>> kept(persistent.size());
    for (std::size_t i = 0; i < persistent.size(); ++i) {
        const Tensor& t = m_plan->tensor(persistent[i]);
        kept[i].resize(t.bytes());
        m_backend.download(t, kept[i].data());
    }
    m_plan->forward_backward(m_backend, ctx);
    for (std::size_t i = 0; i < persistent.size(); ++i)
        m_backend.upload(kept[i].data(), m_plan->tensor(persistent[i]));
    // The gradients carry the scale the coming step uses (StepScalars::loss_scale).
    const double scale = m_backend.read_scalars(m_plan->tensor(m_plan->scalars)).loss_scale;
    return m_histograms->collect(m_global_step + 1, scale);
}

EvalResult Trainer::evaluate() {
    Tensor& scalars = m_plan->tensor(m_plan->scalars);
    const StepScalars saved = m_backend.read_scalars(scalars);
    m_backend.begin_step(scalars);
    // Every rank evaluates the whole test set (its weights are every rank's weights).
    const std::int64_t batch = m_local_batch;
    for (std::int64_t offset = 0; offset < m_data->test_count; offset += batch) {
        RunContext ctx;
        ctx.training = false;
        ctx.seed = m_experiment.seed;
        ctx.batch = {&m_data->test_images, &m_data->test_labels, &m_data->test_perm, offset,
                     std::min(batch, m_data->test_count - offset)};
        m_plan->eval_batch(m_backend, ctx);
    }
    const StepScalars result = m_backend.read_scalars(scalars);
    // Evaluation must not disturb the training state (loss scale, counters).
    m_backend.write_scalars(saved, scalars);
    EvalResult out;
    out.examples = result.examples;
    out.loss = result.examples ? result.loss_sum / static_cast<double>(result.examples) : 0.0;
    out.accuracy = result.examples
                       ? static_cast<double>(result.correct) / static_cast<double>(result.examples)
                       : 0.0;
    return out;
}

RunSummary Trainer::run(TrainControl& control, const TrainerCallbacks& callbacks) {
    auto log = [&](const std::string& line) {
        if (callbacks.on_log) callbacks.on_log(line);
    };
    RunSummary summary;
    summary.val_loss = summary.val_accuracy = std::nan("");
    if (!m_graph.note.empty()) log(m_graph.note); // what the graph flag does on this engine
    const std::int64_t batch = m_experiment.batch_size;
    const std::int64_t per_epoch = steps_per_epoch();
    const std::int64_t max_steps = m_experiment.max_steps;
    const DeviceInfo& device = m_backend.info();
    const MemoryByCategory memory = this->memory();
    std::vector<double> all_step_ms;
    std::vector<std::int32_t> perm(static_cast<std::size_t>(m_data->train_count));
    std::int64_t consecutive_skips = 0;
    double train_seconds = 0;
    bool stop = false;
    // Steps enqueued whose readout has not been read yet (at most `lag` between steps).
    struct PendingStep {
        std::int64_t step = 0;
        int slot = 0;
        Clock::time_point start;
        std::int64_t next_offset = 0; // where the device's batch position must stand after it
    };
    std::deque<PendingStep> pending;
    const int lag = std::clamp(m_backend.readout_lag(), 0, kReadoutSlots - 2);

    for (int epoch = 1; epoch <= m_experiment.epochs && !stop; ++epoch) {
        control.enter_phase(RunPhase::Training);
        // Seeded Fisher-Yates: the same seed gives the same batches on every engine.
        for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int32_t>(i);
        std::uint64_t rng =
            m_experiment.seed * 0x2545F4914F6CDD1Dull + static_cast<std::uint64_t>(epoch);
        for (std::size_t i = perm.size() - 1; i > 0; --i)
            std::swap(perm[i], perm[splitmix(rng) % (i + 1)]);
        m_backend.upload(perm.data(), m_data->train_perm);

        EpochRecord record;
        record.epoch = epoch;
        double loss_sum = 0, correct = 0, examples = 0;
        std::vector<double> epoch_ms;
        // Turns the oldest in-flight step's readout into its StepRecord; true = stop the run.
        auto process_oldest = [&]() -> bool {
            const PendingStep done = pending.front();
            pending.pop_front();
            const StepReadout readout = m_backend.read_readout(done.slot);
            StepScalars scalars = readout.scalars;
            if (!m_sync && scalars.batch_position != done.next_offset)
                throw Error(ErrorKind::Internal,
                            "after step " + std::to_string(done.step) +
                                " the engine's batch position is " +
                                std::to_string(scalars.batch_position) + ", the trainer's " +
                                std::to_string(done.next_offset) +
                                ": a step read another batch than planned. Please report this");
            double step_ms = readout.device_ms >= 0 ? readout.device_ms : ms_since(done.start);
            RankStats ranks_stats;
            if (m_sync) {
                // Every rank gets every rank's numbers, so all of them compute the same global
                // loss and take the same divergence decision below.
                ranks_stats =
                    exchange_step_stats(*m_comm, scalars, step_ms, m_sync->last_ms(), done.step);
                scalars.loss_sum = ranks_stats.loss_sum;
                scalars.correct = ranks_stats.correct;
                scalars.examples = ranks_stats.examples;
                step_ms = ranks_stats.slowest_step_ms;
            }

            StepRecord step;
            step.step = done.step;
            step.epoch = epoch;
            step.loss =
                scalars.examples ? scalars.loss_sum / static_cast<double>(scalars.examples) : 0.0;
            step.accuracy = scalars.examples ? static_cast<double>(scalars.correct) /
                                                   static_cast<double>(scalars.examples)
                                             : 0.0;
            step.step_ms = step_ms;
            step.samples_per_s =
                step_ms > 0 ? static_cast<double>(scalars.examples) / (step_ms / 1000.0) : 0.0;
            step.loss_scale = scalars.scale_used;
            step.skipped = scalars.skipped != 0;
            step.good_steps = scalars.good_steps;
            for (std::size_t p : m_backward_order)
                if (scalars.nonfinite_mask & nonfinite_bit(static_cast<std::int64_t>(p)))
                    step.overflowed.push_back(m_plan->params[p].name);
            // The counters count this step already: undo it to name the rate it used.
            step.learning_rate = learning_rate_at(m_experiment.optimizer,
                                                  scalars.iterations - (step.skipped ? 0 : 1),
                                                  scalars.skipped_total - (step.skipped ? 1 : 0));
            step.memory = memory;
            step.device_mem_used = m_backend.memory_in_use();
            step.device_mem_total = device.memory_total;
            if (m_sync) {
                step.ranks = m_comm->size();
                step.rank_step_ms = ranks_stats.step_ms;
                step.rank_skipped = ranks_stats.skipped;
                step.allreduce_ms = ranks_stats.slowest_allreduce_ms;
                step.allreduce_bytes = m_sync->bytes_per_step();
            }
            summary.peak_memory = std::max(summary.peak_memory, step.device_mem_used);
            if (callbacks.on_step) callbacks.on_step(step);
            const std::int64_t quant_every = m_experiment.quant_every;
            if (callbacks.on_quant && !m_plan->quant.empty() && quant_every > 0 &&
                (step.step == 1 || step.step % quant_every == 0))
                callbacks.on_quant(quant_record(step.step));

            loss_sum += scalars.loss_sum;
            correct += static_cast<double>(scalars.correct);
            examples += static_cast<double>(scalars.examples);
            epoch_ms.push_back(step_ms);
            all_step_ms.push_back(step_ms);
            train_seconds += step_ms / 1000.0;
            record.seconds += step_ms / 1000.0;
            record.steps += 1;
            record.loss_scale = scalars.loss_scale;
            if (step.skipped) {
                record.skipped_steps += 1;
                summary.skipped_steps += 1;
            }
            consecutive_skips = step.skipped ? consecutive_skips + 1 : 0;

            std::string diverged;
            if (!std::isfinite(step.loss) && !step.skipped)
                diverged = "the training loss became " +
                           std::string(std::isnan(step.loss) ? "NaN" : "inf") + " at step " +
                           std::to_string(step.step) + " and the update was applied";
            else if (consecutive_skips >= kMaxConsecutiveSkips)
                diverged = std::to_string(consecutive_skips) +
                           " steps in a row had non-finite gradients (loss scale now " +
                           std::to_string(scalars.loss_scale) + ")";
            if (!diverged.empty() && summary.status != RunStatus::Diverged) {
                summary.status = RunStatus::Diverged;
                summary.message =
                    "training diverged: " + diverged + ". " + divergence_advice(m_experiment);
                log(summary.message);
                if (m_experiment.on_divergence == DivergencePolicy::Stop) return true;
            }
            return false;
        };
        for (std::int64_t s = 0; s < per_epoch; ++s) {
            while (!pending.empty() && control.paused()) stop = process_oldest() || stop;
            if (stop) break;
            if (control.paused() && !control.stop_requested()) {
                control.set_parked(true); // every step before this one has been reported
                while (control.paused() && !control.stop_requested())
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                control.set_parked(false);
            }
            // Ranks stop together: one rank's Ctrl-C must not leave the others in an allreduce.
            const bool stop_requested =
                m_comm ? m_comm->allreduce_max(control.stop_requested() ? 1 : 0) != 0
                       : control.stop_requested();
            if (stop_requested || (max_steps > 0 && m_global_step >= max_steps)) {
                stop = true;
                if (stop_requested) {
                    summary.status = RunStatus::Stopped;
                    summary.message =
                        "stopped by the user at step " + std::to_string(m_global_step);
                }
                break;
            }
            const std::int64_t every = m_experiment.histogram_every;
            if (callbacks.on_histogram && every > 0 && m_global_step % every == 0)
                callbacks.on_histogram(gradient_histogram(s * batch)); // outside the step's time
            // The step is only enqueued; its scalars are read `lag` steps later (at once on the
            // CPU), so a GPU step never waits for the host.
            const int slot = static_cast<int>(m_global_step % kReadoutSlots);
            m_backend.step_started(slot);
            const auto start = Clock::now();
            enqueue_step(s * batch);
            m_backend.enqueue_readout(m_plan->tensor(m_plan->scalars), slot);
            pending.push_back({m_global_step, slot, start, m_device_position});
            while (static_cast<int>(pending.size()) > lag && !stop) stop = process_oldest();
            if (stop) break;
        }
        while (!pending.empty()) stop = process_oldest() || stop; // the steps still in flight
        if (record.steps == 0) break;
        record.loss = examples > 0 ? loss_sum / examples : 0.0;
        record.accuracy = examples > 0 ? correct / examples : 0.0;
        record.median_step_ms = median(epoch_ms);
        control.enter_phase(RunPhase::Validating);
        const EvalResult eval = evaluate();
        record.val_loss = eval.loss;
        record.val_accuracy = eval.accuracy;
        summary.epochs = stop ? summary.epochs : epoch;
        summary.train_loss = record.loss;
        summary.train_accuracy = record.accuracy;
        summary.val_loss = eval.loss;
        summary.val_accuracy = eval.accuracy;
        if (summary.seconds_to_97 < 0 && eval.accuracy >= 0.97)
            summary.seconds_to_97 = train_seconds;
        if (callbacks.on_epoch) callbacks.on_epoch(record);
    }
    summary.steps = m_global_step;
    summary.seconds = train_seconds;
    summary.median_step_ms = median(all_step_ms);
    summary.samples_per_s = summary.median_step_ms > 0
                                ? static_cast<double>(batch) / (summary.median_step_ms / 1000.0)
                                : 0.0;
    if (summary.status == RunStatus::Completed && max_steps > 0 && m_global_step >= max_steps)
        summary.message = "stopped after max_steps = " + std::to_string(max_steps);
    return summary;
}

QuantRecord Trainer::quant_record(std::int64_t step) const {
    QuantRecord record;
    record.step = step;
    for (const PlanQuant& q : m_plan->quant) {
        double v[kQuantStatsValues] = {};
        m_backend.download(m_plan->tensor(q.stats), v);
        QuantTensorRecord t;
        t.layer = q.layer;
        // A column-wise copy (for the GEMM reducing along the other dimension) reports as its own
        // role, "activation_columnwise" (TE's name), so each role's series stays one tensor.
        t.role = std::string(quant_role_name(q.role)) + (q.columnwise ? "_columnwise" : "");
        t.format = describe_quant_spec(q.spec);
        t.amax = v[0];
        t.scale = v[1];
        t.count = static_cast<std::int64_t>(v[4]);
        t.blocks = static_cast<std::int64_t>(v[5]);
        t.clipped = v[4] > 0 ? v[2] / v[4] : 0.0;
        t.flushed = v[4] > 0 ? v[3] / v[4] : 0.0;
        record.tensors.push_back(std::move(t));
    }
    return record;
}

} // namespace mantissa
