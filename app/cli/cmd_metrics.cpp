// `mantissa-cli metrics`: a run's metrics JSONL as CSV (a row per step), its quant records as a
// second, long-format CSV and the whole run as one JSON document, with the same reader and writers
// the app's run history uses. Each output is written atomically.
#include <cstdio>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "core/error.h"
#include "core/records/metrics_export.h"
#include "core/records/metrics_reader.h"

namespace mantissa::cli {

int run_metrics(const Args& args) {
    ArgParser parser("metrics", "Export a run's metrics JSONL (train --metrics) as CSV and JSON.");
    parser.add_option("--in", "FILE", "the metrics JSONL to read");
    parser.add_option("--csv", "FILE",
                      "one row per training step (validation on each epoch's last step)");
    parser.add_option("--quant-csv", "FILE",
                      "quantised policies: one row per tensor per quant record (step, layer, role, "
                      "format, amax, scale, clipped, flushed, count, blocks)");
    parser.add_option("--json", "FILE", "the whole run as one JSON document");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    if (!parser.has("--in")) throw UsageError("--in: a metrics JSONL file is required");
    if (!parser.has("--csv") && !parser.has("--json") && !parser.has("--quant-csv"))
        throw UsageError("--csv: give at least one of --csv, --quant-csv or --json");
    const std::string source = parser.value("--in");
    RunMetrics run;
    try {
        run = read_metrics_jsonl(source);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::Io) throw;
        throw UsageError(std::string("--in: ") + e.what());
    }
    if (run.truncated_tail)
        std::fprintf(stderr, "note: %s ends in a cut-off line (ignored)\n", source.c_str());
    if (!run.complete())
        std::fprintf(stderr, "note: %s has no summary: the run did not finish\n", source.c_str());
    const std::string name = run.config ? run.config->name : source;
    const std::string status = run.summary ? run_status_name(run.summary->status) : "incomplete";
    if (parser.has("--csv")) {
        export_metrics_csv(run, parser.value("--csv"));
        std::printf("wrote %s\n", parser.value("--csv").c_str());
    }
    if (parser.has("--quant-csv")) {
        if (run.quant.empty())
            std::fprintf(stderr, "note: %s has no quant records: its policy does not quantise\n",
                         source.c_str());
        export_quant_csv(run, parser.value("--quant-csv"));
        std::printf("wrote %s\n", parser.value("--quant-csv").c_str());
    }
    if (parser.has("--json")) {
        export_metrics_json(run, name, status, parser.value("--json"));
        std::printf("wrote %s\n", parser.value("--json").c_str());
    }
    return 0;
}

} // namespace mantissa::cli
