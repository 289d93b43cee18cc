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
#include "core/error.h"
#include "core/export/weights_export.h"
#include "core/io/safetensors.h"
#include "core/run/run_session.h"

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
    // MPI ranks train on the CPU engine ("auto" must not put two of them on one GPU); NCCL ranks
    // each on their own GPU.
    if (parallel.enabled()) experiment_options.device = parallel.device;
    const Experiment experiment = experiment_options;
    const bool root = parallel.is_root();
    const bool quiet = parser.has("--quiet") || !root;
    // Bad export arguments fail now, not after an hour of training.
    const std::vector<std::string> exports = parser.values("--export");
    check_export_paths(exports, "--export");
    ExportOptions export_options;
    export_options.dtype = export_dtype_option(parser, "--export-dtype");

    // NCCL starts collectively on the open engines: the ranks first agree each opened its GPU,
    // then attach NCCL to it before the session is built on that engine.
    DeviceChoice nccl_device;
    if (parallel.uses_nccl) {
        std::exception_ptr device_error;
        try {
            nccl_device = open_cli_device(experiment.device);
        } catch (...) {
            device_error = std::current_exception();
        }
        int device_status = 0;
        if (setup_failed_somewhere(parallel, device_error, &device_status)) return device_status;
        attach_nccl(parallel, *nccl_device.backend);
    }
    // Setup may fail on one rank only (a file missing on one host): the ranks agree on it below
    // before any of them trains, so none is left waiting in a collective.
    const bool tty = isatty(STDOUT_FILENO) && !quiet;
    std::int64_t per_epoch = 0;
    int current_epoch = 0;
    RunSessionOptions options;
    options.experiment = experiment;
    options.parallel = parallel.options;
    if (parser.has("--metrics")) options.metrics_path = parser.value("--metrics");
    RunCallbacks& callbacks = options.callbacks;
    callbacks.on_step = [&](const StepRecord& r) {
        if (r.step == parallel.fail_step && parallel.rank() == parallel.fail_rank)
            throw Error(ErrorKind::Device, "test failure injected by MANTISSA_TEST_FAIL_RANK");
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
        if (quiet) return;
        std::printf(
            "%s%lld/%lld - %.1fs - %.2fms/step - loss: %.4f - accuracy: %.4f - val_loss: %.4f - "
            "val_accuracy: %.4f - loss_scale: %g - skipped: %lld\n",
            tty ? "\r" : "", static_cast<long long>(r.steps), static_cast<long long>(per_epoch),
            r.seconds, r.median_step_ms, r.loss, r.accuracy, r.val_loss, r.val_accuracy,
            r.loss_scale, static_cast<long long>(r.skipped_steps));
        std::fflush(stdout);
    };
    callbacks.on_log = [&](const std::string& line) {
        if (root) std::fprintf(stderr, "%s\n", line.c_str());
    };
    std::unique_ptr<RunSession> session;
    std::exception_ptr setup_error;
    try {
        options.engine.device =
            nccl_device.backend ? std::move(nccl_device) : open_cli_device(experiment.device);
        options.data.dir = parser.value("--data");
        if (parser.has("--weights")) {
            const std::string path = parser.value("--weights");
            SafetensorsFile file;
            try {
                file = read_safetensors(path);
            } catch (const Error& e) {
                if (e.kind() != ErrorKind::Io) throw;
                throw UsageError(std::string("--weights: ") + e.what());
            }
            StartingWeights start;
            start.weights = std::move(file.weights);
            start.source = path;
            start.options.allow_rounding = parser.has("--allow-rounding");
            options.initial_weights = std::move(start);
        }
        session = std::make_unique<RunSession>(std::move(options));
    } catch (...) {
        setup_error = std::current_exception();
    }
    int setup_status = 0;
    if (setup_failed_somewhere(parallel, setup_error, &setup_status)) return setup_status;
    Backend& backend = session->backend();
    const Plan& plan = session->plan();
    per_epoch = session->steps_per_epoch();
    const std::string note = session->device_choice() ? session->device_choice()->note : "";

    if (!quiet) {
        std::printf("Mantissa: %s on %s\n", experiment.name.c_str(), backend.info().name.c_str());
        if (!note.empty()) std::printf("note: %s\n", note.c_str());
        std::printf("Policy %s · %s lr %g · batch %lld · loss scaling %s", plan.policy.name.c_str(),
                    optimizer_type_name(plan.optimizer.type), plan.optimizer.learning_rate,
                    static_cast<long long>(experiment.batch_size),
                    loss_scale_mode_name(plan.loss_scale.mode));
        if (plan.loss_scale.mode != LossScaleMode::None)
            std::printf(" (initial %g)", plan.loss_scale.initial);
        std::printf("\n");
        const OptimizerConfig& optimizer = session->trainer().experiment().optimizer;
        if (optimizer.schedule.kind != ScheduleKind::Constant) // with OneCycle's derived length
            std::printf("Learning rate: %s\n",
                        describe_schedule(optimizer.schedule, optimizer.learning_rate).c_str());
        if (parallel.enabled())
            std::printf("Data parallel: %d ranks x %lld examples (global batch %lld) · allreduce "
                        "%s · %s\n",
                        parallel.size(),
                        static_cast<long long>(session->trainer().local_batch_size()),
                        static_cast<long long>(experiment.batch_size),
                        std::string(dtype_name(parallel.options.allreduce_dtype)).c_str(),
                        parallel.communicator->name().c_str());
        print_plan_summary(stdout, *plan.spec, session->memory());
        std::fflush(stdout);
    }

    TrainControl control;
    const StopOnInterrupt interrupt(control); // until the exports below are written
    RunOutcome outcome;
    try {
        outcome = session->run(control);
    } catch (...) {
        fail_all_ranks(parallel, std::current_exception()); // one process: rethrows
    }
    const RunSummary& summary = outcome.summary;
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
        for (const std::string& path : exports) {
            export_weights(outcome.model, path, export_options);
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
