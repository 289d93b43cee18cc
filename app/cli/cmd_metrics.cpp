// `mantissa-cli metrics`: a run's metrics JSONL as CSV (per step, per epoch) and as one JSON
// document. Each output is written atomically.
#include <cstdio>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/io/metrics_export.h"

namespace mantissa::cli {

int run_metrics(const Args& args) {
    ArgParser parser("metrics", "Export a run's metrics JSONL (train --metrics) as CSV and JSON.");
    parser.add_option("--in", "FILE", "the metrics JSONL to read");
    parser.add_option("--csv", "FILE", "one row per training step");
    parser.add_option("--epochs-csv", "FILE", "one row per epoch (like Keras's CSVLogger)");
    parser.add_option("--json", "FILE", "the whole run as one JSON document");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    if (!parser.has("--in")) throw UsageError("--in: a metrics JSONL file is required");
    if (!parser.has("--csv") && !parser.has("--epochs-csv") && !parser.has("--json"))
        throw UsageError("--csv: give at least one of --csv, --epochs-csv or --json");
    MetricsRun run;
    try {
        run = read_metrics_jsonl(parser.value("--in"));
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::Io) throw;
        throw UsageError(std::string("--in: ") + e.what());
    }
    if (run.truncated_tail)
        std::fprintf(stderr, "note: %s ends in a cut-off line (ignored)\n", run.source.c_str());
    if (!run.complete)
        std::fprintf(stderr, "note: %s has no summary: the run did not finish\n",
                     run.source.c_str());
    auto write = [](const std::string& path, const std::string& text) {
        write_file_atomic(path, text);
        std::printf("wrote %s\n", path.c_str());
    };
    if (parser.has("--csv")) write(parser.value("--csv"), metrics_csv(run, "step"));
    if (parser.has("--epochs-csv")) write(parser.value("--epochs-csv"), metrics_csv(run, "epoch"));
    if (parser.has("--json")) write(parser.value("--json"), metrics_json(run));
    return 0;
}

} // namespace mantissa::cli
