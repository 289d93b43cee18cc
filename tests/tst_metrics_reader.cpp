// Tests for the metrics JSONL reader and the metrics exporters: what MetricsJsonlWriter writes
// reads back field for field, a run cut short stays readable, and damage names its line.
#include <QtTest>

#include <QTemporaryDir>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/plan/plan.h"
#include "core/records/metrics_export.h"
#include "core/records/metrics_jsonl.h"
#include "core/records/metrics_reader.h"
#include "core/train/gradient_histogram.h"
#include "tests/error_capture.h"

using namespace mantissa;
using mantissa::test::errorOf;

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
std::string write_run(const QString& path, bool finish) {
    Experiment e = load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");
    e.policy = "mixed_bfloat16";
    DeviceInfo device{"cpu", "CPU (test)", false, 1 << 20};
    Plan plan; // an empty plan: the header's layer table is not what this test reads
    MemoryByCategory memory;
    memory[MemCategory::Activations] = 777;
    {
        MetricsJsonlWriter writer(path.toStdString());
        writer.write_header(e, device, plan, memory);
        for (int ep = 1; ep <= 2; ++ep) {
            for (int i = 1; i <= 3; ++i) writer.write_step(step((ep - 1) * 3 + i, ep));
            writer.write_epoch(epoch(ep));
        }
        writer.write_log("a log line");
        if (finish) writer.write_summary(summary());
    }
    return read_file(path.toStdString());
}

} // namespace

// Captured from the writer and exporter before the mapping was a table (commit ce9895b).
#define GOLDEN_STEP                                                                                \
    R"({"accuracy":0.1,"device_mem_total":99999,"device_mem_used":12345,"epoch":1,"good_steps":1,"loss":2.5,"loss_scale":32768.0,"mem":{"activations":0,"data":47040000,"gradients":0,"master":0,"optimizer":0,"total":47041000,"weights":1000,"workspace":0},"samples_per_s":444.44444444444446,"skipped":false,"step":1,"step_ms":2.25,"type":"step"})"
#define GOLDEN_PARALLEL                                                                            \
    R"({"accuracy":0.7000000000000001,"allreduce_bytes":4096,"allreduce_ms":0.75,"device_mem_total":99999,"device_mem_used":12345,"epoch":3,"good_steps":7,"loss":0.35714285714285715,"loss_scale":32768.0,"mem":{"activations":0,"data":47040000,"gradients":0,"master":0,"optimizer":0,"total":47041000,"weights":1000,"workspace":0},"rank_skipped":[false,false],"rank_step_ms":[1.5,2.5],"ranks":2,"samples_per_s":121.21212121212122,"skipped":false,"step":7,"step_ms":8.25,"type":"step"})"
#define GOLDEN_EPOCH                                                                               \
    R"({"accuracy":0.9,"epoch":1,"loss":0.5,"loss_scale":16384.0,"median_step_ms":2.0,"seconds":1.5,"skipped_steps":1,"steps":3,"type":"epoch","val_accuracy":0.95,"val_loss":0.25})"
#define GOLDEN_SUMMARY                                                                             \
    R"({"epochs":2,"median_step_ms":2.0,"message":"stopped by the user","peak_memory":4096,"samples_per_s":64000.0,"seconds":3.0,"seconds_to_97":null,"skipped_steps":1,"status":"stopped","steps":6,"train_accuracy":0.9,"train_loss":0.25,"type":"summary","val_accuracy":0.95,"val_loss":0.125})"
#define GOLDEN_REACHED                                                                             \
    R"({"epochs":2,"median_step_ms":2.0,"message":"stopped by the user","peak_memory":4096,"samples_per_s":64000.0,"seconds":3.0,"seconds_to_97":2.5,"skipped_steps":1,"status":"stopped","steps":6,"train_accuracy":0.9,"train_loss":0.25,"type":"summary","val_accuracy":0.95,"val_loss":0.125})"
#define GOLDEN_HISTOGRAM                                                                           \
    R"({"all":{"activation":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2],"weight":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},"bins":{"max_exponent":47,"min_exponent":-80,"non_finite":129,"zero":0},"layers":[{"activation":[3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"name":"dense_1","weight":null}],"loss_scale":8.0,"step":4,"type":"histogram"})"
#define GOLDEN_CSV_ROW                                                                             \
    R"(2,1,1.25,0.20000000000000001,3.25,307.69230769230768,32768,1,0,47041000,12345,0.25,0.94999999999999996)"
#define GOLDEN_EXPORT_STEP                                                                         \
    R"({"step":1,"epoch":1,"loss":2.5,"accuracy":0.1,"step_ms":2.25,"samples_per_s":444.44444444444446,"loss_scale":32768.0,"skipped":false,"good_steps":1,"device_mem_used":12345,"device_mem_total":99999})"
#define GOLDEN_EXPORT_EPOCH                                                                        \
    R"({"epoch":1,"steps":3,"loss":0.5,"accuracy":0.9,"val_loss":0.25,"val_accuracy":0.95,"seconds":1.5,"median_step_ms":2.0,"skipped_steps":1,"loss_scale":16384.0})"
#define GOLDEN_EXPORT_SUMMARY                                                                      \
    R"({"status":"stopped","message":"stopped by the user","steps":6,"epochs":2,"train_loss":0.25,"train_accuracy":0.9,"val_loss":0.125,"val_accuracy":0.95,"seconds":3.0,"median_step_ms":2.0,"samples_per_s":64000.0,"skipped_steps":1,"seconds_to_97":null,"peak_memory":4096})"

class TestMetricsReader : public QObject {
    Q_OBJECT

private slots:
    void roundTrip() {
        QTemporaryDir dir;
        const QString path = dir.filePath("metrics.jsonl");
        write_run(path, true);
        const RunMetrics run = read_metrics_jsonl(path.toStdString());
        QVERIFY(run.complete());
        QVERIFY(!run.truncated_tail);
        QVERIFY(run.config.has_value());
        QCOMPARE(QString::fromStdString(run.config->policy), QString("mixed_bfloat16"));
        QCOMPARE(QString::fromStdString(run.config->name), QString("mlp-small"));
        QCOMPARE(QString::fromStdString(run.device_id), QString("cpu"));
        QCOMPARE(QString::fromStdString(run.device_name), QString("CPU (test)"));
        QCOMPARE(run.device_memory_total, std::size_t(1 << 20));
        QCOMPARE(run.memory[MemCategory::Activations], std::size_t(777));
        QCOMPARE(run.steps.size(), std::size_t(6));
        for (std::size_t i = 0; i < run.steps.size(); ++i) {
            const StepRecord want = step(static_cast<std::int64_t>(i) + 1, i < 3 ? 1 : 2);
            const StepRecord& got = run.steps[i];
            QCOMPARE(got.step, want.step);
            QCOMPARE(got.epoch, want.epoch);
            QCOMPARE(got.loss, want.loss); // JSON numbers round-trip doubles exactly
            QCOMPARE(got.accuracy, want.accuracy);
            QCOMPARE(got.step_ms, want.step_ms);
            QCOMPARE(got.samples_per_s, want.samples_per_s);
            QCOMPARE(got.loss_scale, want.loss_scale);
            QCOMPARE(got.skipped, want.skipped);
            QCOMPARE(got.good_steps, want.good_steps);
            QCOMPARE(got.memory.bytes, want.memory.bytes);
            QCOMPARE(got.device_mem_used, want.device_mem_used);
            QCOMPARE(got.device_mem_total, want.device_mem_total);
        }
        QCOMPARE(run.epochs.size(), std::size_t(2));
        QCOMPARE(run.epochs[1].epoch, 2);
        QCOMPARE(run.epochs[1].val_loss, 0.125);
        QCOMPARE(run.epochs[0].skipped_steps, std::int64_t(1));
        QCOMPARE(run.epochs[0].loss_scale, 16384.0);
        const RunSummary want = summary();
        QCOMPARE(run.summary->status, RunStatus::Stopped);
        QCOMPARE(run.summary->message, want.message);
        QCOMPARE(run.summary->steps, want.steps);
        QCOMPARE(run.summary->val_accuracy, want.val_accuracy);
        QCOMPARE(run.summary->seconds_to_97, -1.0); // written as null
        QCOMPARE(run.summary->peak_memory, want.peak_memory);
        QCOMPARE(run.log.size(), std::size_t(1));
    }

    // A data-parallel run's header object and step fields read back; an ordinary run has
    // neither in the file (so older readers see the same lines) and reads as one rank.
    void dataParallelFieldsRoundTrip() {
        QTemporaryDir dir;
        const QString path = dir.filePath("metrics.jsonl");
        {
            MetricsJsonlWriter writer(path.toStdString());
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
        const std::string text = read_file(path.toStdString());
        const std::string second = text.substr(text.rfind("{\"accuracy\""));
        QVERIFY(second.find("ranks") == std::string::npos);
        QVERIFY(second.find("allreduce") == std::string::npos);
        const RunMetrics run = parse_metrics_jsonl(text, "dp.jsonl");
        QVERIFY(run.data_parallel.has_value());
        QCOMPARE(run.data_parallel->ranks, 2);
        QCOMPARE(run.data_parallel->allreduce_dtype, std::string("bfloat16"));
        QCOMPARE(run.data_parallel->communicator, std::string("MPI (test)"));
        QCOMPARE(run.steps[0].ranks, 2);
        QCOMPARE(run.steps[0].rank_step_ms, std::vector<double>({1.5, 2.25}));
        QCOMPARE(run.steps[0].rank_skipped, std::vector<bool>({false, false}));
        QCOMPARE(run.steps[0].allreduce_ms, 0.75);
        QCOMPARE(run.steps[0].allreduce_bytes, std::int64_t(236564));
        QCOMPARE(run.steps[1].ranks, 1);
        QVERIFY(run.steps[1].rank_step_ms.empty());
        QCOMPARE(run.steps[1].allreduce_bytes, std::int64_t(0));
        // Files written before data-parallel runs existed: no header object.
        QTemporaryDir old_dir;
        write_run(old_dir.filePath("old.jsonl"), true);
        QVERIFY(!read_metrics_jsonl(old_dir.filePath("old.jsonl").toStdString())
                     .data_parallel.has_value());
        // A damaged field names itself.
        const QString bad = errorOf(
            [] {
                parse_metrics_jsonl("{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":1,"
                                    "\"accuracy\":1,\"step_ms\":1,\"samples_per_s\":1,"
                                    "\"loss_scale\":1,\"skipped\":false,\"rank_step_ms\":3}\n",
                                    "x.jsonl");
            },
            ErrorKind::Data);
        QVERIFY2(bad.contains("x.jsonl: line 1: field 'rank_step_ms'"), qPrintable(bad));
    }

    void nonFiniteReadsAsNan() {
        QTemporaryDir dir;
        const QString path = dir.filePath("metrics.jsonl");
        {
            MetricsJsonlWriter writer(path.toStdString());
            StepRecord s = step(1, 1);
            s.loss = std::numeric_limits<double>::infinity();
            writer.write_step(s);
        }
        const RunMetrics run = read_metrics_jsonl(path.toStdString());
        QCOMPARE(run.steps.size(), std::size_t(1));
        QVERIFY(std::isnan(run.steps[0].loss));
    }

    void incompleteRunIsReadable() {
        QTemporaryDir dir;
        const QString path = dir.filePath("metrics.jsonl");
        const std::string text = write_run(path, false);
        RunMetrics run = parse_metrics_jsonl(text, "m.jsonl");
        QVERIFY(!run.complete());
        QCOMPARE(run.steps.size(), std::size_t(6));
        QCOMPARE(run.epochs.size(), std::size_t(2));

        // Killed in the middle of a record: the half line is dropped, the rest still reads.
        const std::string cut = text + "{\"type\":\"step\",\"step\":7,\"epo";
        run = parse_metrics_jsonl(cut, "m.jsonl");
        QVERIFY(run.truncated_tail);
        QCOMPARE(run.steps.size(), std::size_t(6));
        QVERIFY(!run.complete());
    }

    void unknownRecordTypesAreSkipped() {
        const std::string text =
            "{\"type\":\"future_record\",\"bins\":[1,2,3]}"
            "\n"
            "{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":1,\"accuracy\":0.5,"
            "\"step_ms\":2,\"samples_per_s\":3,\"loss_scale\":1,\"skipped\":false}"
            "\n";
        const RunMetrics run = parse_metrics_jsonl(text, "m.jsonl");
        QCOMPARE(run.steps.size(), std::size_t(1));
        QCOMPARE(run.steps[0].good_steps, std::int64_t(0)); // optional fields default
    }

    void corruptLineNamesTheLine_data() {
        QTest::addColumn<QString>("replace"); // what line 3 (a step) becomes
        QTest::addColumn<QString>("expected");
        QTest::newRow("not json") << "{\"type\": \"step\", oops}"
                                  << "m.jsonl: line 3: not a JSON record";
        QTest::newRow("not an object") << "[1, 2]"
                                       << "m.jsonl: line 3: expected a JSON object, got array";
        QTest::newRow("no type") << "{\"step\": 1}"
                                 << "m.jsonl: line 3: field 'type': missing";
        QTest::newRow("wrong type")
            << "{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":\"high\",\"accuracy\":0.5,"
               "\"step_ms\":2,"
               "\"samples_per_s\":3,\"loss_scale\":1,\"skipped\":false}"
            << "m.jsonl: line 3: field 'loss': expected a number, got string";
        QTest::newRow("missing field")
            << "{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":1,\"accuracy\":0.5}"
            << "m.jsonl: line 3: field 'step_ms': missing";
        QTest::newRow("bad status") << "{\"type\":\"summary\",\"status\":\"exploded\",\"steps\":1,"
                                       "\"train_loss\":1,\"train_accuracy\":1,\"val_loss\":1,"
                                       "\"val_accuracy\":1}"
                                    << "m.jsonl: line 3: field 'status': unknown status "
                                       "'exploded'";
        QTest::newRow("negative bytes")
            << "{\"type\":\"step\",\"step\":1,\"epoch\":1,\"loss\":1,\"accuracy\":0.5,\"step_ms\":"
               "2,"
               "\"samples_per_s\":3,\"loss_scale\":1,\"skipped\":false,\"device_mem_used\":-4}"
            << "m.jsonl: line 3: field 'device_mem_used': expected a byte count >= 0";
    }

    void corruptLineNamesTheLine() {
        QFETCH(QString, replace);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path = dir.filePath("metrics.jsonl");
        std::string text = write_run(path, true);
        // Line 3 is the second step; a damaged line in the middle is an error, not a tail cut.
        std::size_t begin = 0;
        for (int i = 0; i < 2; ++i) begin = text.find('\n', begin) + 1;
        const std::size_t end = text.find('\n', begin);
        text.replace(begin, end - begin, replace.toStdString());
        const QString message =
            errorOf([&] { parse_metrics_jsonl(text, "m.jsonl"); }, ErrorKind::Data);
        QVERIFY2(message.startsWith(expected), qPrintable(message));
    }

    void badConfigInHeaderNamesTheField() {
        const std::string text = "{\"type\":\"run\",\"config\":{\"name\":\"x\",\"batch_sise\":4}}"
                                 "\n";
        const QString message =
            errorOf([&] { parse_metrics_jsonl(text, "m.jsonl"); }, ErrorKind::Data);
        QVERIFY2(message.contains("m.jsonl: line 1") && message.contains("batch_sise"),
                 qPrintable(message));
    }

    // A record 100,000 levels deep overflowed the stack (the header's config is copied and
    // dumped recursively); it is now an error naming the line, and sane nesting still reads.
    void deeplyNestedRecordIsAnError() {
        const std::string deep = std::string(100000, '[') + std::string(100000, ']');
        const std::string text = "{\"type\":\"log\",\"message\":\"ok\"}\n"
                                 "{\"type\":\"run\",\"config\":{\"model\":" +
                                 deep + "}}\n";
        const QString message =
            errorOf([&] { parse_metrics_jsonl(text, "m.jsonl"); }, ErrorKind::Data);
        QVERIFY2(message.startsWith("m.jsonl: line 2: the record nests deeper than 64 levels"),
                 qPrintable(message));
        const std::string nested = "{\"type\":\"future_record\",\"x\":" + std::string(60, '[') +
                                   std::string(60, ']') + "}\n";
        QCOMPARE(parse_metrics_jsonl(nested, "m.jsonl").steps.size(), std::size_t(0));
    }

    void missingFileIsAnIoError() {
        const QString message =
            errorOf([] { read_metrics_jsonl("/nonexistent/metrics.jsonl"); }, ErrorKind::Io);
        QVERIFY(message.contains("/nonexistent/metrics.jsonl"));
    }

    void csvExport() {
        QTemporaryDir dir;
        const QString path = dir.filePath("metrics.jsonl");
        write_run(path, true);
        const RunMetrics run = read_metrics_jsonl(path.toStdString());
        const QString csv_path = dir.filePath("out.csv");
        export_metrics_csv(run, csv_path.toStdString());
        const QStringList lines = QString::fromStdString(read_file(csv_path.toStdString()))
                                      .split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 7); // header + 6 steps
        const QStringList header = lines[0].split(',');
        QCOMPARE(header.front(), QString("step"));
        QCOMPARE(header.back(), QString("val_accuracy"));
        const QStringList second = lines[2].split(',');
        QCOMPARE(second.size(), header.size());
        QCOMPARE(second[header.indexOf("loss")].toDouble(), step(2, 1).loss); // exact digits
        QCOMPARE(second[header.indexOf("skipped")], QString("1"));
        QCOMPARE(second[header.indexOf("val_loss")], QString()); // not the epoch's last step
        const QStringList third = lines[3].split(',');
        QCOMPARE(third[header.indexOf("val_loss")].toDouble(), 0.25);
        QCOMPARE(third[header.indexOf("val_accuracy")].toDouble(), 0.95);
    }

    void jsonExport() {
        QTemporaryDir dir;
        const QString path = dir.filePath("metrics.jsonl");
        write_run(path, false);
        const RunMetrics run = read_metrics_jsonl(path.toStdString());
        const QString json_path = dir.filePath("out.json");
        export_metrics_json(run, "my run", "incomplete", json_path.toStdString());
        const auto doc = nlohmann::json::parse(read_file(json_path.toStdString()));
        QCOMPARE(QString::fromStdString(doc["format"].get<std::string>()),
                 QString("mantissa-metrics"));
        QCOMPARE(QString::fromStdString(doc["name"].get<std::string>()), QString("my run"));
        QCOMPARE(QString::fromStdString(doc["status"].get<std::string>()), QString("incomplete"));
        QCOMPARE(doc["steps"].size(), std::size_t(6));
        QCOMPARE(doc["steps"][1]["loss"].get<double>(), step(2, 1).loss);
        QCOMPARE(doc["epochs"][1]["val_loss"].get<double>(), 0.125);
        QVERIFY(doc["summary"].is_null());
        QCOMPARE(QString::fromStdString(doc["config"]["policy"].get<std::string>()),
                 QString("mixed_bfloat16"));
    }

    // The record <-> JSON mapping is one table (core/records/metrics_record_json); the bytes of
    // the JSONL, the CSV header and the export's key order are what every file so far holds.
    void recordBytesAreStable() {
        QTemporaryDir dir;
        const QString path = dir.filePath("metrics.jsonl");
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
            MetricsJsonlWriter writer(path.toStdString());
            writer.write_step(step(1, 1));
            writer.write_step(parallel);
            writer.write_epoch(epoch(1));
            writer.write_summary(summary());
            writer.write_summary(reached);
            writer.write_histogram(histogram);
            writer.write_log("a log line");
        }
        const QStringList lines = QString::fromStdString(read_file(path.toStdString())).split('\n');
        QCOMPARE(lines.size(), 8);
        QCOMPARE(lines[0], QString(GOLDEN_STEP));
        QCOMPARE(lines[1], QString(GOLDEN_PARALLEL));
        QCOMPARE(lines[2], QString(GOLDEN_EPOCH));
        QCOMPARE(lines[3], QString(GOLDEN_SUMMARY));
        QCOMPARE(lines[4], QString(GOLDEN_REACHED));
        QCOMPARE(lines[5], QString(GOLDEN_HISTOGRAM));
        QCOMPARE(lines[6], QString(R"({"message":"a log line","type":"log"})"));

        RunMetrics run;
        run.steps = {step(1, 1), step(2, 1)};
        run.epochs = {epoch(1)};
        run.summary = summary();
        const QString csv = QString::fromStdString(metrics_to_csv(run));
        QCOMPARE(csv.section('\n', 0, 0), QString("step,epoch,loss,accuracy,step_ms,samples_per_s,"
                                                  "loss_scale,skipped,good_steps,mem_total,"
                                                  "device_mem_used,val_loss,val_accuracy"));
        QCOMPARE(csv.section('\n', 2, 2), QString(GOLDEN_CSV_ROW));
        const auto doc = nlohmann::ordered_json::parse(metrics_to_json(run, "r", "completed"));
        QCOMPARE(QString::fromStdString(doc["steps"][0].dump()), QString(GOLDEN_EXPORT_STEP));
        QCOMPARE(QString::fromStdString(doc["epochs"][0].dump()), QString(GOLDEN_EXPORT_EPOCH));
        QCOMPARE(QString::fromStdString(doc["summary"].dump()), QString(GOLDEN_EXPORT_SUMMARY));
    }

    void exportToAnUnwritablePathNamesIt() {
        const RunMetrics run;
        const QString message =
            errorOf([&] { export_metrics_csv(run, "/nonexistent/dir/out.csv"); }, ErrorKind::Io);
        QVERIFY(message.contains("/nonexistent/dir/out.csv"));
    }
};

QTEST_APPLESS_MAIN(TestMetricsReader)
#include "tst_metrics_reader.moc"
