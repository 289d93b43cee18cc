// Tests for the metrics JSONL reader and the metrics exporters: what MetricsJsonlWriter writes
// reads back field for field, a run cut short stays readable, and damage names its line.

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/plan/plan.h"
#include "core/records/metrics_export.h"
#include "core/records/metrics_jsonl.h"
#include "core/records/metrics_reader.h"
#include "core/train/gradient_histogram.h"
#include "core/train/quant_record.h"
#include "tests/unit/cli.h"
#include "tests/unit/error_of.h"
#include "tests/unit/files.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

namespace {

StepRecord step(std::int64_t n, int epoch) {
    StepRecord s;
    s.step = n;
    s.epoch = epoch;
    s.loss = 2.5 / static_cast<double>(n);
    s.accuracy = 0.1 * static_cast<double>(n % 10);
    s.step_ms = 1.25 + static_cast<double>(n);
    s.samples_per_s = 1000.0 / s.step_ms;
    s.loss_scale = 32768;
    s.skipped = n == 2;
    s.good_steps = n == 2 ? 0 : n;
    s.learning_rate = 0.001;
    s.memory[MemCategory::Weights] = 1000;
    s.memory[MemCategory::Data] = 47040000;
    s.device_mem_used = 12345;
    s.device_mem_total = 99999;
    return s;
}

EpochRecord epoch(int n) {
    EpochRecord e;
    e.epoch = n;
    e.steps = 3;
    e.loss = 0.5 / n;
    e.accuracy = 0.9;
    e.val_loss = 0.25 / n;
    e.val_accuracy = 0.95;
    e.seconds = 1.5;
    e.median_step_ms = 2.0;
    e.skipped_steps = n == 1 ? 1 : 0;
    e.loss_scale = 16384;
    return e;
}

RunSummary summary() {
    RunSummary s;
    s.status = RunStatus::Stopped;
    s.message = "stopped by the user";
    s.steps = 6;
    s.epochs = 2;
    s.train_loss = 0.25;
    s.train_accuracy = 0.9;
    s.val_loss = 0.125;
    s.val_accuracy = 0.95;
    s.seconds = 3;
    s.median_step_ms = 2;
    s.samples_per_s = 64000;
    s.skipped_steps = 1;
    s.seconds_to_97 = -1;
    s.peak_memory = 4096;
    return s;
}

// Writes a run of two epochs of three steps with the real writer; `finish` adds the summary.
std::string write_run(const std::string& path, bool finish) {
    Experiment e = load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");
    e.policy = "mixed_bfloat16";
    DeviceInfo device{"cpu", "CPU (test)", false, 1 << 20};
    Plan plan; // an empty plan: the header's layer table is not what this test reads
    MemoryByCategory memory;
    memory[MemCategory::Activations] = 777;
    {
        MetricsJsonlWriter writer(path);
        writer.write_header(e, device, plan, memory);
        for (int ep = 1; ep <= 2; ++ep) {
            for (int i = 1; i <= 3; ++i) writer.write_step(step((ep - 1) * 3 + i, ep));
            writer.write_epoch(epoch(ep));
        }
        writer.write_log("a log line");
        if (finish) writer.write_summary(summary());
    }
    return mantissa::read_file(path);
}

// Two tensors of an mxfp8 run at `n`: dense_1's activation and gradient (whose amax is not finite).
QuantRecord quant(std::int64_t n) {
    QuantRecord q;
    q.step = n;
    QuantTensorRecord a;
    a.layer = "dense_1";
    a.role = "activation";
    a.format = "mxfp8_e4m3 1×32 blocks, \"e8m0\" scales";
    a.amax = 3.5 * static_cast<double>(n);
    a.scale = 0.0078125;
    a.clipped = 0.25;
    a.flushed = 0.125;
    a.count = 4096;
    a.blocks = 128;
    QuantTensorRecord g = a;
    g.role = "gradient";
    g.amax = std::numeric_limits<double>::infinity();
    g.scale = 65536;
    g.clipped = 0;
    g.flushed = 0.5;
    q.tensors = {a, g};
    return q;
}

} // namespace

// Captured from the writer and exporter before the mapping was a table (commit ce9895b); the
// learning rate joined the step records with the schedules (issue 29).
#define GOLDEN_STEP                                                                                \
    R"({"accuracy":0.1,"device_mem_total":99999,"device_mem_used":12345,"epoch":1,"good_steps":1,"learning_rate":0.001,"loss":2.5,"loss_scale":32768.0,"mem":{"activations":0,"data":47040000,"gradients":0,"master":0,"optimizer":0,"total":47041000,"weights":1000,"workspace":0},"samples_per_s":444.44444444444446,"skipped":false,"step":1,"step_ms":2.25,"type":"step"})"
#define GOLDEN_PARALLEL                                                                            \
    R"({"accuracy":0.7000000000000001,"allreduce_bytes":4096,"allreduce_ms":0.75,"device_mem_total":99999,"device_mem_used":12345,"epoch":3,"good_steps":7,"learning_rate":0.001,"loss":0.35714285714285715,"loss_scale":32768.0,"mem":{"activations":0,"data":47040000,"gradients":0,"master":0,"optimizer":0,"total":47041000,"weights":1000,"workspace":0},"rank_skipped":[false,false],"rank_step_ms":[1.5,2.5],"ranks":2,"samples_per_s":121.21212121212122,"skipped":false,"step":7,"step_ms":8.25,"type":"step"})"
#define GOLDEN_EPOCH                                                                               \
    R"({"accuracy":0.9,"epoch":1,"loss":0.5,"loss_scale":16384.0,"median_step_ms":2.0,"seconds":1.5,"skipped_steps":1,"steps":3,"type":"epoch","val_accuracy":0.95,"val_loss":0.25})"
#define GOLDEN_SUMMARY                                                                             \
    R"({"epochs":2,"median_step_ms":2.0,"message":"stopped by the user","peak_memory":4096,"samples_per_s":64000.0,"seconds":3.0,"seconds_to_97":null,"skipped_steps":1,"status":"stopped","steps":6,"train_accuracy":0.9,"train_loss":0.25,"type":"summary","val_accuracy":0.95,"val_loss":0.125})"
#define GOLDEN_REACHED                                                                             \
    R"({"epochs":2,"median_step_ms":2.0,"message":"stopped by the user","peak_memory":4096,"samples_per_s":64000.0,"seconds":3.0,"seconds_to_97":2.5,"skipped_steps":1,"status":"stopped","steps":6,"train_accuracy":0.9,"train_loss":0.25,"type":"summary","val_accuracy":0.95,"val_loss":0.125})"
#define GOLDEN_HISTOGRAM                                                                           \
    R"({"all":{"activation":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2],"weight":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},"bins":{"max_exponent":47,"min_exponent":-80,"non_finite":129,"zero":0},"layers":[{"activation":[3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"name":"dense_1","weight":null}],"loss_scale":8.0,"step":4,"type":"histogram"})"
#define GOLDEN_CSV_ROW                                                                             \
    R"(2,1,1.25,0.20000000000000001,3.25,307.69230769230768,32768,1,0,0.001,47041000,12345,0.25,0.94999999999999996)"
#define GOLDEN_EXPORT_STEP                                                                         \
    R"({"step":1,"epoch":1,"loss":2.5,"accuracy":0.1,"step_ms":2.25,"samples_per_s":444.44444444444446,"loss_scale":32768.0,"skipped":false,"good_steps":1,"learning_rate":0.001,"device_mem_used":12345,"device_mem_total":99999})"
#define GOLDEN_EXPORT_EPOCH                                                                        \
    R"({"epoch":1,"steps":3,"loss":0.5,"accuracy":0.9,"val_loss":0.25,"val_accuracy":0.95,"seconds":1.5,"median_step_ms":2.0,"skipped_steps":1,"loss_scale":16384.0})"
#define GOLDEN_EXPORT_SUMMARY                                                                      \
    R"({"status":"stopped","message":"stopped by the user","steps":6,"epochs":2,"train_loss":0.25,"train_accuracy":0.9,"val_loss":0.125,"val_accuracy":0.95,"seconds":3.0,"median_step_ms":2.0,"samples_per_s":64000.0,"skipped_steps":1,"seconds_to_97":null,"peak_memory":4096})"

class TestMetricsReader {

public:
    void roundTrip() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        write_run(path, true);
        const RunMetrics run = read_metrics_jsonl(path);
        CHECK(run.complete());
        CHECK(!run.truncated_tail);
        CHECK(run.config.has_value());
        CHECK_EQ((run.config->policy), std::string("mixed_bfloat16"));
        CHECK_EQ((run.config->name), std::string("mlp-small"));
        CHECK_EQ((run.device_id), std::string("cpu"));
        CHECK_EQ((run.device_name), std::string("CPU (test)"));
        CHECK_EQ(run.device_memory_total, std::size_t(1 << 20));
        CHECK_EQ(run.memory[MemCategory::Activations], std::size_t(777));
        CHECK_EQ(run.steps.size(), std::size_t(6));
        for (std::size_t i = 0; i < run.steps.size(); ++i) {
            const StepRecord want = step(static_cast<std::int64_t>(i) + 1, i < 3 ? 1 : 2);
            const StepRecord& got = run.steps[i];
            CHECK_EQ(got.step, want.step);
            CHECK_EQ(got.epoch, want.epoch);
            CHECK_EQ(got.loss, want.loss); // JSON numbers round-trip doubles exactly
            CHECK_EQ(got.accuracy, want.accuracy);
            CHECK_EQ(got.step_ms, want.step_ms);
            CHECK_EQ(got.samples_per_s, want.samples_per_s);
            CHECK_EQ(got.loss_scale, want.loss_scale);
            CHECK_EQ(got.skipped, want.skipped);
            CHECK_EQ(got.good_steps, want.good_steps);
            CHECK_EQ(got.memory.bytes, want.memory.bytes);
            CHECK_EQ(got.device_mem_used, want.device_mem_used);
            CHECK_EQ(got.device_mem_total, want.device_mem_total);
        }
        CHECK_EQ(run.epochs.size(), std::size_t(2));
        CHECK_EQ(run.epochs[1].epoch, 2);
        CHECK_EQ(run.epochs[1].val_loss, 0.125);
        CHECK_EQ(run.epochs[0].skipped_steps, std::int64_t(1));
        CHECK_EQ(run.epochs[0].loss_scale, 16384.0);
        const RunSummary want = summary();
        CHECK_EQ(run.summary->status, RunStatus::Stopped);
        CHECK_EQ(run.summary->message, want.message);
        CHECK_EQ(run.summary->steps, want.steps);
        CHECK_EQ(run.summary->val_accuracy, want.val_accuracy);
        CHECK_EQ(run.summary->seconds_to_97, -1.0); // written as null
        CHECK_EQ(run.summary->peak_memory, want.peak_memory);
        CHECK_EQ(run.log.size(), std::size_t(1));
    }

    // A data-parallel run's header object and step fields read back; an ordinary run has
    // neither in the file (so older readers see the same lines) and reads as one rank.
    void dataParallelFieldsRoundTrip() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        {
            MetricsJsonlWriter writer(path);
            Experiment e;
            Plan plan;
            const DataParallelInfo info{2, "bfloat16", "MPI (test)"};
            writer.write_header(e, DeviceInfo{"cpu", "CPU", false, 1}, plan, {}, &info);
            StepRecord s = step(1, 1);
            s.ranks = 2;
            s.rank_step_ms = {1.5, 2.25};
            s.rank_skipped = {false, false};
            s.allreduce_ms = 0.75;
            s.allreduce_bytes = 236564;
            writer.write_step(s);
            writer.write_step(step(2, 1)); // ordinary step: no data-parallel fields
        }
        const std::string text = mantissa::read_file(path);
        const std::string second = text.substr(text.rfind("{\"accuracy\""));
        CHECK(second.find("ranks") == std::string::npos);
        CHECK(second.find("allreduce") == std::string::npos);
        const RunMetrics run = parse_metrics_jsonl(text, "dp.jsonl");
        CHECK(run.data_parallel.has_value());
        CHECK_EQ(run.data_parallel->ranks, 2);
        CHECK_EQ(run.data_parallel->allreduce_dtype, std::string("bfloat16"));
        CHECK_EQ(run.data_parallel->communicator, std::string("MPI (test)"));
        CHECK_EQ(run.steps[0].ranks, 2);
        CHECK_EQ(run.steps[0].rank_step_ms, std::vector<double>({1.5, 2.25}));
        CHECK_EQ(run.steps[0].rank_skipped, std::vector<bool>({false, false}));
        CHECK_EQ(run.steps[0].allreduce_ms, 0.75);
        CHECK_EQ(run.steps[0].allreduce_bytes, std::int64_t(236564));
        CHECK_EQ(run.steps[1].ranks, 1);
        CHECK(run.steps[1].rank_step_ms.empty());
        CHECK_EQ(run.steps[1].allreduce_bytes, std::int64_t(0));
        // Files written before data-parallel runs existed: no header object.
        TempDir old_dir;
        write_run(old_dir.file("old.jsonl"), true);
        CHECK(!read_metrics_jsonl(old_dir.file("old.jsonl")).data_parallel.has_value());
        // A damaged field names itself.
        const std::string bad = error_of(
            [] {
                parse_metrics_jsonl("{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":1,"
                                    "\"accuracy\":1,\"step_ms\":1,\"samples_per_s\":1,"
                                    "\"loss_scale\":1,\"skipped\":false,\"rank_step_ms\":3}\n",
                                    "x.jsonl");
            },
            ErrorKind::Data);
        CHECK_MSG(contains(bad, "x.jsonl: line 1: field 'rank_step_ms'"), (bad));
    }

    // The skipped-step ledger: a skipped step's overflowed gradients read back in their order;
    // a step without any has no field (older readers see the same lines); a damaged one names
    // itself.
    void overflowedGradientsRoundTrip() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        {
            MetricsJsonlWriter writer(path);
            Experiment e;
            Plan plan;
            writer.write_header(e, DeviceInfo{"cpu", "CPU", false, 1}, plan, {});
            StepRecord s = step(1, 1);
            s.skipped = true;
            s.overflowed = {"dense_3/bias", "dense_3/kernel", "dense_1/kernel"};
            writer.write_step(s);
            writer.write_step(step(2, 1));
        }
        const std::string text = mantissa::read_file(path);
        CHECK(text.substr(text.rfind("{\"accuracy\"")).find("overflowed") == std::string::npos);
        const RunMetrics run = parse_metrics_jsonl(text, "ledger.jsonl");
        CHECK_EQ(run.steps[0].overflowed,
                 std::vector<std::string>({"dense_3/bias", "dense_3/kernel", "dense_1/kernel"}));
        CHECK(run.steps[1].overflowed.empty());
        const std::string bad = error_of(
            [] {
                parse_metrics_jsonl("{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":1,"
                                    "\"accuracy\":1,\"step_ms\":1,\"samples_per_s\":1,"
                                    "\"loss_scale\":1,\"skipped\":true,\"overflowed\":[3]}\n",
                                    "x.jsonl");
            },
            ErrorKind::Data);
        CHECK_MSG(contains(bad, "x.jsonl: line 1: field 'overflowed'"), (bad));
    }

    void nonFiniteReadsAsNan() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        {
            MetricsJsonlWriter writer(path);
            StepRecord s = step(1, 1);
            s.loss = std::numeric_limits<double>::infinity();
            writer.write_step(s);
        }
        const RunMetrics run = read_metrics_jsonl(path);
        CHECK_EQ(run.steps.size(), std::size_t(1));
        CHECK(std::isnan(run.steps[0].loss));
    }

    void incompleteRunIsReadable() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        const std::string text = write_run(path, false);
        RunMetrics run = parse_metrics_jsonl(text, "m.jsonl");
        CHECK(!run.complete());
        CHECK_EQ(run.steps.size(), std::size_t(6));
        CHECK_EQ(run.epochs.size(), std::size_t(2));

        // Killed in the middle of a record: the half line is dropped, the rest still reads.
        const std::string cut = text + "{\"type\":\"step\",\"step\":7,\"epo";
        run = parse_metrics_jsonl(cut, "m.jsonl");
        CHECK(run.truncated_tail);
        CHECK_EQ(run.steps.size(), std::size_t(6));
        CHECK(!run.complete());
    }

    void unknownRecordTypesAreSkipped() {
        const std::string text =
            "{\"type\":\"future_record\",\"bins\":[1,2,3]}"
            "\n"
            "{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":1,\"accuracy\":0.5,"
            "\"step_ms\":2,\"samples_per_s\":3,\"loss_scale\":1,\"skipped\":false}"
            "\n";
        const RunMetrics run = parse_metrics_jsonl(text, "m.jsonl");
        CHECK_EQ(run.steps.size(), std::size_t(1));
        CHECK_EQ(run.steps[0].good_steps, std::int64_t(0)); // optional fields default
    }

    void corruptLineNamesTheLine_data() {
        add_column<std::string>("replace"); // what line 3 (a step) becomes
        add_column<std::string>("expected");
        new_row("not json") << "{\"type\": \"step\", oops}"
                            << "m.jsonl: line 3: not a JSON record";
        new_row("not an object") << "[1, 2]"
                                 << "m.jsonl: line 3: expected a JSON object, got array";
        new_row("no type") << "{\"step\": 1}"
                           << "m.jsonl: line 3: field 'type': missing";
        new_row("wrong type")
            << "{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":\"high\",\"accuracy\":0.5,"
               "\"step_ms\":2,"
               "\"samples_per_s\":3,\"loss_scale\":1,\"skipped\":false}"
            << "m.jsonl: line 3: field 'loss': expected a number, got string";
        new_row("missing field")
            << "{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":1,\"accuracy\":0.5}"
            << "m.jsonl: line 3: field 'step_ms': missing";
        new_row("bad status") << "{\"type\":\"summary\",\"status\":\"exploded\",\"steps\":1,"
                                 "\"train_loss\":1,\"train_accuracy\":1,\"val_loss\":1,"
                                 "\"val_accuracy\":1}"
                              << "m.jsonl: line 3: field 'status': unknown status "
                                 "'exploded'";
        new_row("negative bytes")
            << "{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":1,\"accuracy\":0.5,\"step_ms\":"
               "2,"
               "\"samples_per_s\":3,\"loss_scale\":1,\"skipped\":false,\"device_mem_used\":-4}"
            << "m.jsonl: line 3: field 'device_mem_used': expected a byte count >= 0";
    }

    void corruptLineNamesTheLine() {
        FETCH(std::string, replace);
        FETCH(std::string, expected);
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        std::string text = write_run(path, true);
        // Line 3 is the second step; a damaged line in the middle is an error, not a tail cut.
        std::size_t begin = 0;
        for (int i = 0; i < 2; ++i) begin = text.find('\n', begin) + 1;
        const std::size_t end = text.find('\n', begin);
        text.replace(begin, end - begin, replace);
        const std::string message =
            error_of([&] { parse_metrics_jsonl(text, "m.jsonl"); }, ErrorKind::Data);
        CHECK_MSG(message.starts_with(expected), (message));
    }

    void badConfigInHeaderNamesTheField() {
        const std::string text = "{\"type\":\"run\",\"config\":{\"name\":\"x\",\"batch_sise\":4}}"
                                 "\n";
        const std::string message =
            error_of([&] { parse_metrics_jsonl(text, "m.jsonl"); }, ErrorKind::Data);
        CHECK_MSG(contains(message, "m.jsonl: line 1") && contains(message, "batch_sise"),
                  (message));
    }

    // A record 100,000 levels deep overflowed the stack (the header's config is copied and
    // dumped recursively); it is now an error naming the line, and sane nesting still reads.
    void deeplyNestedRecordIsAnError() {
        const std::string deep = std::string(100000, '[') + std::string(100000, ']');
        const std::string text = "{\"type\":\"log\",\"message\":\"ok\"}\n"
                                 "{\"type\":\"run\",\"config\":{\"model\":" +
                                 deep + "}}\n";
        const std::string message =
            error_of([&] { parse_metrics_jsonl(text, "m.jsonl"); }, ErrorKind::Data);
        CHECK_MSG(message.starts_with("m.jsonl: line 2: the record nests deeper than 64 levels"),
                  (message));
        const std::string nested = "{\"type\":\"future_record\",\"x\":" + std::string(60, '[') +
                                   std::string(60, ']') + "}\n";
        CHECK_EQ(parse_metrics_jsonl(nested, "m.jsonl").steps.size(), std::size_t(0));
    }

    void missingFileIsAnIoError() {
        const std::string message =
            error_of([] { read_metrics_jsonl("/nonexistent/metrics.jsonl"); }, ErrorKind::Io);
        CHECK(contains(message, "/nonexistent/metrics.jsonl"));
    }

    void csvExport() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        write_run(path, true);
        const RunMetrics run = read_metrics_jsonl(path);
        const std::string csv_path = dir.file("out.csv");
        export_metrics_csv(run, csv_path);
        const std::vector<std::string> lines = split_lines(mantissa::read_file(csv_path));
        CHECK_EQ(lines.size(), 7); // header + 6 steps
        const std::vector<std::string> header = split(lines[0], ',');
        CHECK_EQ(header.front(), std::string("step"));
        CHECK_EQ(header.back(), std::string("val_accuracy"));
        auto column = [&](const char* name) {
            return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) -
                                            header.begin());
        };
        const std::vector<std::string> second = split(lines[2], ',');
        CHECK_EQ(second.size(), header.size());
        CHECK_EQ(std::stod(second[column("loss")]), step(2, 1).loss); // exact digits
        CHECK_EQ(second[column("skipped")], std::string("1"));
        CHECK_EQ(second[column("val_loss")], std::string()); // not the epoch's last step
        const std::vector<std::string> third = split(lines[3], ',');
        CHECK_EQ(std::stod(third[column("val_loss")]), 0.25);
        CHECK_EQ(std::stod(third[column("val_accuracy")]), 0.95);
    }

    void jsonExport() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        write_run(path, false);
        const RunMetrics run = read_metrics_jsonl(path);
        const std::string json_path = dir.file("out.json");
        export_metrics_json(run, "my run", "incomplete", json_path);
        const auto doc = nlohmann::json::parse(mantissa::read_file(json_path));
        CHECK_EQ((doc["format"].get<std::string>()), std::string("mantissa-metrics"));
        CHECK_EQ((doc["name"].get<std::string>()), std::string("my run"));
        CHECK_EQ((doc["status"].get<std::string>()), std::string("incomplete"));
        CHECK_EQ(doc["steps"].size(), std::size_t(6));
        CHECK_EQ(doc["steps"][1]["loss"].get<double>(), step(2, 1).loss);
        CHECK_EQ(doc["epochs"][1]["val_loss"].get<double>(), 0.125);
        CHECK(doc["summary"].is_null());
        CHECK_EQ((doc["config"]["policy"].get<std::string>()), std::string("mixed_bfloat16"));
    }

    // The record <-> JSON mapping is one table (core/records/metrics_record_json); the bytes of
    // the JSONL, the CSV header and the export's key order are what every file so far holds.
    void recordBytesAreStable() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        StepRecord parallel = step(7, 3);
        parallel.ranks = 2;
        parallel.rank_step_ms = {1.5, 2.5};
        parallel.rank_skipped = {false, false};
        parallel.allreduce_ms = 0.75;
        parallel.allreduce_bytes = 4096;
        RunSummary reached = summary();
        reached.seconds_to_97 = 2.5;
        GradientHistogram histogram;
        histogram.step = 4;
        histogram.loss_scale = 8;
        LayerGradientHistogram layer;
        layer.layer = "dense_1";
        layer.activation.bins[kHistogramZeroBin] = 3;
        histogram.layers.push_back(layer);
        histogram.all_activation.bins[kHistogramNonFiniteBin] = 2;
        {
            MetricsJsonlWriter writer(path);
            writer.write_step(step(1, 1));
            writer.write_step(parallel);
            writer.write_epoch(epoch(1));
            writer.write_summary(summary());
            writer.write_summary(reached);
            writer.write_histogram(histogram);
            writer.write_log("a log line");
        }
        const std::vector<std::string> lines = split(mantissa::read_file(path), '\n');
        CHECK_EQ(lines.size(), std::size_t(8));
        CHECK_EQ(lines[0], std::string(GOLDEN_STEP));
        CHECK_EQ(lines[1], std::string(GOLDEN_PARALLEL));
        CHECK_EQ(lines[2], std::string(GOLDEN_EPOCH));
        CHECK_EQ(lines[3], std::string(GOLDEN_SUMMARY));
        CHECK_EQ(lines[4], std::string(GOLDEN_REACHED));
        CHECK_EQ(lines[5], std::string(GOLDEN_HISTOGRAM));
        CHECK_EQ(lines[6], std::string(R"({"message":"a log line","type":"log"})"));

        RunMetrics run;
        run.steps = {step(1, 1), step(2, 1)};
        run.epochs = {epoch(1)};
        run.summary = summary();
        const std::vector<std::string> csv = split(metrics_to_csv(run), '\n');
        CHECK_EQ(csv.at(0), std::string("step,epoch,loss,accuracy,step_ms,samples_per_s,"
                                        "loss_scale,skipped,good_steps,learning_rate,mem_total,"
                                        "device_mem_used,val_loss,val_accuracy"));
        CHECK_EQ(csv.at(2), std::string(GOLDEN_CSV_ROW));
        const auto doc = nlohmann::ordered_json::parse(metrics_to_json(run, "r", "completed"));
        CHECK_EQ(doc["steps"][0].dump(), std::string(GOLDEN_EXPORT_STEP));
        CHECK_EQ(doc["epochs"][0].dump(), std::string(GOLDEN_EXPORT_EPOCH));
        CHECK_EQ(doc["summary"].dump(), std::string(GOLDEN_EXPORT_SUMMARY));
    }

    // The `quant` records (quantised policies) read back field for field, in order; a non-finite
    // amax was written as null and reads as NaN.
    void quantRecordsRoundTrip() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        {
            MetricsJsonlWriter writer(path);
            writer.write_step(step(1, 1));
            writer.write_quant(quant(1));
            writer.write_quant(quant(50));
        }
        const std::vector<std::string> lines = split(mantissa::read_file(path), '\n');
        CHECK(contains(lines.at(1), "\"type\":\"quant\""));
        CHECK(contains(lines.at(1), "\"amax\":null"));
        const RunMetrics run = read_metrics_jsonl(path);
        CHECK_EQ(run.quant.size(), std::size_t(2));
        CHECK_EQ(run.quant.at(1).step, std::int64_t(50));
        const QuantRecord expected = quant(50);
        CHECK_EQ(run.quant[1].tensors.size(), std::size_t(2));
        for (std::size_t i = 0; i < 2; ++i) {
            const QuantTensorRecord& got = run.quant[1].tensors[i];
            const QuantTensorRecord& want = expected.tensors[i];
            CHECK_EQ(got.layer, want.layer);
            CHECK_EQ(got.role, want.role);
            CHECK_EQ(got.format, want.format);
            if (i == 0) CHECK_EQ(got.amax, want.amax);
            CHECK_EQ(got.scale, want.scale);
            CHECK_EQ(got.clipped, want.clipped);
            CHECK_EQ(got.flushed, want.flushed);
            CHECK_EQ(got.count, want.count);
            CHECK_EQ(got.blocks, want.blocks);
        }
        CHECK(std::isnan(run.quant[1].tensors[1].amax));
    }

    void badQuantFieldNamesItsTensor_data() {
        add_column<std::string>("line");
        add_column<std::string>("expected");
        const std::string tensor =
            R"("layer":"dense_1","role":"weight","format":"f","scale":1,"clipped":0,)"
            R"("flushed":0,"count":8,"blocks":1)";
        new_row("amax a string") << R"({"type":"quant","step":3,"tensors":[{"amax":"big",)" +
                                        tensor + "}]}"
                                 << "q.jsonl: line 1: tensors[0]: field 'amax': expected a "
                                    "number, got string";
        new_row("amax missing") << R"({"type":"quant","step":3,"tensors":[{)" + tensor + "}]}"
                                << "q.jsonl: line 1: tensors[0]: field 'amax': missing";
        new_row("tensors not a list") << R"({"type":"quant","step":3,"tensors":{}})"
                                      << "q.jsonl: line 1: field 'tensors': expected an array";
        new_row("no step") << R"({"type":"quant","tensors":[]})"
                           << "q.jsonl: line 1: field 'step': missing";
    }

    void badQuantFieldNamesItsTensor() {
        FETCH(std::string, line);
        FETCH(std::string, expected);
        const std::string message =
            error_of([&] { parse_metrics_jsonl(line + "\n", "q.jsonl"); }, ErrorKind::Data);
        CHECK_MSG(message.starts_with(expected), (message));
    }

    // The quant CSV is long-format (a row per tensor per record) with the JSONL's field names; a
    // format holding commas and quotes is one quoted cell. The JSON export carries the records.
    void quantExports() {
        RunMetrics run;
        run.steps = {step(1, 1)};
        run.quant = {quant(1), quant(50)};
        const std::vector<std::string> csv = split_lines(quant_to_csv(run));
        CHECK_EQ(csv.size(), std::size_t(5));
        CHECK_EQ(csv.at(0),
                 std::string("step,layer,role,format,amax,scale,clipped,flushed,count,blocks"));
        CHECK_EQ(csv.at(1), std::string("1,dense_1,activation,\"mxfp8_e4m3 1×32 blocks, "
                                        "\"\"e8m0\"\" scales\",3.5,0.0078125,0.25,0.125,4096,"
                                        "128"));
        CHECK(csv.at(4).starts_with("50,dense_1,gradient,")); // the infinite amax: an empty cell
        CHECK(contains(csv.at(4), ",,65536,0,0.5,4096,128"));
        CHECK_EQ(split_lines(quant_to_csv(RunMetrics{})).size(), std::size_t(1)); // header only

        const auto doc = nlohmann::ordered_json::parse(metrics_to_json(run, "r", "completed"));
        CHECK_EQ(doc["quant"].size(), std::size_t(2));
        CHECK_EQ(doc["quant"][1]["step"].get<std::int64_t>(), std::int64_t(50));
        CHECK_EQ(doc["quant"][1]["tensors"][0]["amax"].get<double>(), 175.0);
        CHECK(doc["quant"][1]["tensors"][1]["amax"].is_null());
        CHECK_EQ((doc["quant"][0]["tensors"][1]["role"].get<std::string>()),
                 std::string("gradient"));
        // The metrics CSV keeps its columns: the quant data is only in the second CSV.
        CHECK(!contains(metrics_to_csv(run), "amax"));
    }

    // `mantissa-cli metrics --quant-csv` writes the long-format quant CSV; a run without quant
    // records gets the header and a note saying why.
    void cliWritesTheQuantCsv() {
        TempDir dir;
        const std::string jsonl = dir.file("run.jsonl"), csv = dir.file("quant.csv");
        {
            MetricsJsonlWriter writer(jsonl);
            writer.write_step(step(1, 1));
            writer.write_quant(quant(1));
        }
        ProcessResult r = run_cli({"metrics", "--in", jsonl, "--quant-csv", csv});
        CHECK_MSG(r.status == 0, (r.err));
        const std::vector<std::string> rows = split_lines(mantissa::read_file(csv));
        CHECK_EQ(rows.size(), std::size_t(3)); // header + dense_1 activation and gradient
        CHECK(rows.at(0).starts_with("step,layer,role,format,amax"));
        CHECK(rows.at(2).starts_with("1,dense_1,gradient,"));
        CHECK(!contains(r.err, "no quant records"));

        write_run(jsonl, true); // mixed_bfloat16: nothing quantised
        r = run_cli({"metrics", "--in", jsonl, "--quant-csv", csv});
        CHECK_MSG(r.status == 0, (r.err));
        CHECK_MSG(contains(r.err, "no quant records"), (r.err));
        CHECK_EQ(split_lines(mantissa::read_file(csv)).size(), std::size_t(1));
    }

    void exportToAnUnwritablePathNamesIt() {
        const RunMetrics run;
        const std::string message =
            error_of([&] { export_metrics_csv(run, "/nonexistent/dir/out.csv"); }, ErrorKind::Io);
        CHECK(contains(message, "/nonexistent/dir/out.csv"));
    }
};

MANTISSA_TEST_MAIN(TestMetricsReader, roundTrip, dataParallelFieldsRoundTrip,
                   overflowedGradientsRoundTrip, nonFiniteReadsAsNan, incompleteRunIsReadable,
                   unknownRecordTypesAreSkipped, corruptLineNamesTheLine,
                   badConfigInHeaderNamesTheField, deeplyNestedRecordIsAnError,
                   missingFileIsAnIoError, csvExport, jsonExport, recordBytesAreStable,
                   quantRecordsRoundTrip, badQuantFieldNamesItsTensor, quantExports,
                   cliWritesTheQuantCsv, exportToAnUnwritablePathNamesIt)
