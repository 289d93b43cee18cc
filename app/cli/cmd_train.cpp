// `mantissa-cli train`: runs an experiment headless with Keras-like progress, the metrics JSONL
// of ARCHITECTURE.md and --export of the weights. Exit 0 ok, 1 failed/diverged run, 2 bad input,
// 128 + the signal's number after a Ctrl-C (130) or SIGTERM (143) stopped it cleanly.
// With --data-parallel (under mpirun) every rank trains and rank 0 alone prints and writes.
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <unistd.h>

#include "app/cli/args.h"
#include "app/cli/cli_device.h"
#include "app/cli/commands.h"
#include "app/cli/data_parallel.h"
#include "app/cli/experiment_options.h"
#include "app/cli/interrupt.h"
#include "app/cli/plan_summary.h"
#include "app/cli/weights_input.h"
#include "core/backend/factory/backend_factory.h"
#include "core/data/mnist.h"
#include "core/error.h"
#include "core/io/metrics_jsonl.h"
#include "core/io/safetensors.h"
#include "core/io/weights_export.h"
#include "core/train/trainer.h"

namespace mantissa::cli {

int run_train(const Args& args) {
    ArgParser parser("train", "Train an experiment and print Keras-like progress per epoch.");
    add_experiment_options(parser);
    parser.add_option("--metrics", "FILE", "write step/epoch records as JSON lines to FILE");
    parser.add_option("--export", "FILE",
                      "after training, save the weights to FILE (.safetensors, .onnx or .npz)",
                      true);
    parser.add_option("--export-dtype", "D",
                      "convert exported weights: float32, float16, bfloat16 or float64 (default: "
                      "as stored; ONNX: float32)");
    parser.add_option("--weights", "FILE",
                      "start from these weights (.safetensors) instead of a fresh initialisation");
    parser.add_flag("--allow-rounding",
                    "with --weights: accept weights stored wider than the policy's variables");
    parser.add_flag("--quiet", "print only the final line");
    add_data_parallel_options(parser);
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    Experiment experiment_options = experiment_from_options(parser);
    ParallelRun parallel = start_data_parallel(parser, experiment_options.device);
    // The ranks train on the CPU engine: "auto" must not put two of them on one GPU.
    if (parallel.enabled()) experiment_options.device = "cpu";
    const Experiment experiment = experiment_options;
    const bool root = parallel.is_root();
    const bool quiet = parser.has("--quiet") || !root;
    // Bad export arguments fail now, not after an hour of training.
    const std::vector<std::string> exports = parser.values("--export");
    check_export_paths(exports, "--export");
    ExportOptions export_options;
    export_options.dtype = export_dtype_option(parser, "--export-dtype");

    DataParallelInfo parallel_info;
    if (parallel.enabled()) {
        parallel_info.ranks = parallel.size();
        parallel_info.allreduce_dtype = std::string(dtype_name(parallel.options.allreduce_dtype));
        parallel_info.communicator = parallel.communicator->name();
    }
    // Setup may fail on one rank only (a file missing on one host): the ranks agree on it below
    // before any of them trains, so none is left waiting in a collective.
    DeviceChoice choice;
    std::unique_ptr<Trainer> trainer_owner;
    std::unique_ptr<MetricsJsonlWriter> metrics;
    std::exception_ptr setup_error;
    try {
        choice = open_cli_device(experiment.device);
        const Mnist data = load_mnist(find_data_dir(parser.value("--data")));
        trainer_owner =
            std::make_unique<Trainer>(experiment, data, *choice.backend, parallel.options);
        if (parser.has("--weights")) {
            const std::string path = parser.value("--weights");
            SafetensorsFile file;
            try {
                file = read_safetensors(path);
            } catch (const Error& e) {
                if (e.kind() != ErrorKind::Io) throw;
                throw UsageError(std::string("--weights: ") + e.what());
            }
            LoadWeightsOptions load;
            load.allow_rounding = parser.has("--allow-rounding");
            trainer_owner->load_weights(file.weights, path, load);
        }
        if (parser.has("--metrics") && root) {
            metrics = std::make_unique<MetricsJsonlWriter>(parser.value("--metrics"));
            metrics->write_header(experiment, choice.backend->info(), trainer_owner->plan(),
                                  trainer_owner->memory(),
                                  parallel.enabled() ? &parallel_info : nullptr);
        }
    } catch (...) {
        setup_error = std::current_exception();
    }
    int setup_status = 0;
    if (setup_failed_somewhere(parallel, setup_error, &setup_status)) return setup_status;
    Backend& backend = *choice.backend;
    Trainer& trainer = *trainer_owner;
    const Plan& plan = trainer.plan();

    if (!quiet) {
        std::printf("Mantissa: %s on %s\n", experiment.name.c_str(), backend.info().name.c_str());
        if (!choice.note.empty()) std::printf("note: %s\n", choice.note.c_str());
        std::printf("Policy %s · %s lr %g · batch %lld · loss scaling %s", plan.policy.name.c_str(),
                    optimizer_type_name(plan.optimizer.type), plan.optimizer.learning_rate,
                    static_cast<long long>(experiment.batch_size),
                    loss_scale_mode_name(plan.loss_scale.mode));
        if (plan.loss_scale.mode != LossScaleMode::None)
            std::printf(" (initial %g)", plan.loss_scale.initial);
        std::printf("\n");
        if (parallel.enabled())
            std::printf("Data parallel: %d ranks x %lld examples (global batch %lld) · allreduce "
                        "%s · %s\n",
                        parallel.size(), static_cast<long long>(trainer.local_batch_size()),
                        static_cast<long long>(experiment.batch_size),
                        parallel_info.allreduce_dtype.c_str(), parallel_info.communicator.c_str());
        print_plan_summary(stdout, *plan.spec, trainer.memory());
        std::fflush(stdout);
    }

    const bool tty = isatty(STDOUT_FILENO) && !quiet;
    const std::int64_t per_epoch = trainer.steps_per_epoch();
    int current_epoch = 0;
    TrainerCallbacks callbacks;
    callbacks.on_step = [&](const StepRecord& r) {
        if (r.step == parallel.fail_step && parallel.rank() == parallel.fail_rank)
            throw Error(ErrorKind::Device, "test failure injected by MANTISSA_TEST_FAIL_RANK");
        if (metrics) {
            metrics->write_step(r);
            // If another rank dies, mpirun kills this one: what was written must be on disk.
            if (parallel.enabled()) metrics->flush();
        }
        if (!quiet && r.epoch != current_epoch) {
            current_epoch = r.epoch;
            std::printf("Epoch %d/%d\n", r.epoch, experiment.epochs);
            std::fflush(stdout); // a pipe (tee, a test) sees the epoch begin, not only end
        }
        if (tty && (r.step % 20 == 0)) {
            std::printf("\r%lld/%lld - loss: %.4f - accuracy: %.4f - loss_scale: %g ",
                        static_cast<long long>((r.step - 1) % per_epoch + 1),
                        static_cast<long long>(per_epoch), r.loss, r.accuracy, r.loss_scale);
            std::fflush(stdout);
        }
    };
    callbacks.on_epoch = [&](const EpochRecord& r) {
        if (metrics) metrics->write_epoch(r);
        if (quiet) return;
        std::printf(
            "%s%lld/%lld - %.1fs - %.2fms/step - loss: %.4f - accuracy: %.4f - val_loss: %.4f - "
            "val_accuracy: %.4f - loss_scale: %g - skipped: %lld\n",
            tty ? "\r" : "", static_cast<long long>(r.steps), static_cast<long long>(per_epoch),
            r.seconds, r.median_step_ms, r.loss, r.accuracy, r.val_loss, r.val_accuracy,
            r.loss_scale, static_cast<long long>(r.skipped_steps));
        std::fflush(stdout);
    };
    if (metrics)
        callbacks.on_histogram = [&](const GradientHistogram& h) { metrics->write_histogram(h); };
    callbacks.on_log = [&](const std::string& line) {
        if (metrics) metrics->write_log(line);
        if (root) std::fprintf(stderr, "%s\n", line.c_str());
    };
    TrainControl control;
    const StopOnInterrupt interrupt(control); // until the exports below are written
    RunSummary summary;
    try {
        summary = trainer.run(control, callbacks);
    } catch (...) {
        fail_all_ranks(parallel, std::current_exception()); // one process: rethrows
    }
    if (metrics) metrics->write_summary(summary);
    if (!root) // every rank took the same decisions; rank 0 reports and exports them
        return summary.status == RunStatus::Diverged ? 1
               : interrupt.signal_received() != 0    ? 128 + interrupt.signal_received()
                                                     : 0;

    std::printf("%s (%s): %s · test accuracy %.2f%% · test loss %.4f · median %.2f ms/step · %.0f "
                "samples/s · "
                "%lld skipped steps\n",
                experiment.name.c_str(), plan.policy.name.c_str(), run_status_name(summary.status),
                100.0 * summary.val_accuracy, summary.val_loss, summary.median_step_ms,
                summary.samples_per_s, static_cast<long long>(summary.skipped_steps));
    if (summary.status == RunStatus::Diverged) {
        std::fprintf(stderr, "mantissa-cli train: %s\n", summary.message.c_str());
        if (!exports.empty())
            std::fprintf(stderr, "mantissa-cli train: weights not exported: the run diverged\n");
        return 1;
    }
    if (!exports.empty()) {
        const TrainedModel model = trained_model(trainer, summary.val_loss, summary.val_accuracy);
        for (const std::string& path : exports) {
            export_weights(model, path, export_options);
            if (!quiet)
                std::printf("wrote %s (%s)\n", path.c_str(),
                            weights_format_name(weights_format_for_path(path)));
        }
    }
    // Stopped by a signal: everything is written, and the exit status says it did not finish.
    if (const int sig = interrupt.signal_received(); sig != 0) {
        std::fprintf(stderr, "mantissa-cli train: %s\n",
                     summary.status == RunStatus::Stopped
                         ? summary.message.c_str()
                         : "interrupted after the last step; the results were written in full");
        return 128 + sig;
    }
    return 0;
}

} // namespace mantissa::cli
