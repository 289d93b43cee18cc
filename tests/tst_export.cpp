// Weights and metrics export/import: independent readers (tests/check_exports.py: NumPy, its own
// safetensors parser, python3-onnx's checker and a NumPy ONNX evaluator), import validation with
// named errors, atomic writes under failure and SIGKILL, and the eval/export/metrics commands.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "core/backend/factory/backend_factory.h"
#include "core/error.h"
#include "core/export/onnx_export.h"
#include "core/export/weights_export.h"
#include "core/io/atomic_file.h"
#include "core/io/npz.h"
#include "core/io/safetensors.h"
#include "core/nn/model.h"
#include "core/plan/compile.h"
#include "core/plan/plan_weights.h"
#include "core/records/trained_model.h"
#include "core/train/trainer.h"
#include "test_support.h"

using namespace mantissa;
using namespace mantissa::test;
using nlohmann::json;

namespace {

// A model trained briefly on real MNIST, with what Mantissa measured for it.
struct Trained {
    TrainedModel model;
    EvalResult eval;
};

const Mnist& mnist() {
    static const Mnist data = load_mnist(find_data_dir(""));
    return data;
}

Experiment experiment_for(const std::string& name, ModelSpec spec, const std::string& policy,
                          std::int64_t steps) {
    Experiment e;
    e.name = name;
    e.model = std::move(spec);
    e.policy = policy;
    e.optimizer = optimizer_defaults(OptimizerType::Adam);
    e.optimizer.learning_rate = 2e-3;
    e.batch_size = 64;
    e.epochs = 1;
    e.max_steps = steps;
    e.device = "cpu";
    return e;
}

Trained train(const Experiment& e) {
    BackendChoice cpu = create_backend("cpu");
    Trainer trainer(e, mnist(), *cpu.backend);
    TrainControl control;
    trainer.run(control, {});
    Trained out;
    out.eval = trainer.evaluate();
    out.model = trained_model(trainer, out.eval.loss, out.eval.accuracy);
    return out;
}

// Every layer type and activation the ONNX graph emits, under a mixed policy (float32 masters).
const Trained& mlp() {
    static const Trained t = train(experiment_for(
        "export-mlp",
        {{28, 28, 1},
         {flatten(), dense(32, Activation::Gelu), dropout(0.1), dense(16, Activation::Tanh),
          dense(16, Activation::Sigmoid), dense(10, Activation::Softmax)}},
        "mixed_float16", 150));
    return t;
}

// Convolutions with "same" padding and stride 2 (asymmetric pads), pooling, and a flatten from
// NHWC, in float32.
const Trained& cnn() {
    static const Trained t = train(
        experiment_for("export-cnn",
                       {{28, 28, 1},
                        {conv(4, 3, Activation::Relu, 2, "same"), conv(8, 3, Activation::Relu),
                         maxpool(2), flatten(), dense(10, Activation::Softmax)}},
                       "float32", 120));
    return t;
}

// A python3 that has NumPy and onnx (Debian's python3-numpy / python3-onnx live in
// /usr/bin/python3, which a pyenv shim on PATH may hide).
QString python() {
    QStringList candidates;
    if (!qEnvironmentVariableIsEmpty("MANTISSA_PYTHON"))
        candidates << qEnvironmentVariable("MANTISSA_PYTHON");
    candidates << "/usr/bin/python3"
               << "python3";
    for (const QString& p : candidates) {
        QProcess process;
        process.start(p, {"-c", "import numpy, onnx"});
        if (process.waitForFinished(60000) && process.exitStatus() == QProcess::NormalExit &&
            process.exitCode() == 0)
            return p;
    }
    return {};
}

std::string bytes_of(const std::string& path) {
    return read_file(path);
}

void write_bytes(const std::string& path, const std::string& bytes) {
    QFile f(QString::fromStdString(path));
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes.data(), static_cast<qint64>(bytes.size())),
             static_cast<qint64>(bytes.size()));
}

// A safetensors file from a header and a data buffer, for the corruption cases.
std::string safetensors_bytes(const json& header, const std::string& data) {
    std::string text = header.dump();
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i)
        out[static_cast<std::size_t>(i)] = static_cast<char>(text.size() >> (8 * i));
    return out + text + data;
}

// The plan of a model (CPU, batch 1) to validate imports against, without a dataset.
struct SmallPlan {
    BackendChoice cpu = create_backend("cpu");
    std::unique_ptr<Model> model;
    std::unique_ptr<Plan> plan;
    explicit SmallPlan(const Experiment& e) {
        model = std::make_unique<Model>(e.model, policy_from_name(e.policy));
        CompileOptions options;
        options.policy = policy_from_name(e.policy);
        options.batch_size = 1;
        plan = compile(*model, options, *cpu.backend);
    }
};

QString error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return "(no error)";
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QVERIFY2(onnx_export_available(),
                 "this build has no ONNX export: install libonnx-dev libprotobuf-dev");
        QVERIFY(m_dir.isValid());
    }

    // NumPy, a separate safetensors parser and onnx (checker + NumPy evaluation) read what Mantissa
    // wrote and agree with its values and its test accuracy.
    void python_reads_exports_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("mlp mixed_float16") << "mlp";
        QTest::newRow("cnn float32") << "cnn";
    }
    void python_reads_exports() {
        QFETCH(QString, model);
        const QString py = python();
        QVERIFY2(!py.isEmpty(), "no python3 with numpy and onnx: apt-get install python3-numpy "
                                "python3-onnx (./mantissa.sh installs them)");
        const Trained& t = model == "mlp" ? mlp() : cnn();
        QVERIFY2(t.eval.accuracy > 0.5, "the briefly trained model should beat chance clearly");
        const std::string base = m_dir.filePath(model).toStdString();

        json spec;
        spec["mnist"] = find_data_dir("");
        spec["policy"] = t.model.experiment.policy;
        spec["version"] = mantissa_version();
        spec["test_accuracy"] = t.eval.accuracy;
        spec["architecture"] = json::parse(experiment_to_json(t.model.experiment))["model"];
        for (const WeightTensor& w : t.model.weights.tensors) {
            QVERIFY(w.dtype == DType::Float32); // float32 masters under mixed_float16 too
            spec["tensors"][w.name] = {{"shape", w.shape}, {"values", values_as_double(w)}};
        }
        auto out = [&](const std::string& suffix, const char* dtype, std::optional<DType> convert) {
            const std::string path = base + suffix;
            export_weights(t.model, path, ExportOptions{convert});
            return json{{"path", path}, {"dtype", dtype}};
        };
        spec["safetensors"] = {out(".safetensors", "F32", std::nullopt),
                               out("-bf16.safetensors", "BF16", DType::BFloat16),
                               out("-f16.safetensors", "F16", DType::Float16)};
        spec["npz"] = {out(".npz", "F32", std::nullopt), out("-f16.npz", "F16", DType::Float16),
                       out("-f64.npz", "F64", DType::Float64)};
        spec["onnx"] = {out(".onnx", "float32", std::nullopt),
                        out("-f16.onnx", "float16", DType::Float16)};
        const std::string spec_path = base + "-spec.json";
        write_file_atomic(spec_path, spec.dump());

        QProcess process;
        process.setProcessChannelMode(QProcess::MergedChannels);
        process.start(py, {QStringLiteral(MANTISSA_SOURCE_DIR "/tests/check_exports.py"),
                           QString::fromStdString(spec_path)});
        QVERIFY(process.waitForFinished(600000));
        const QString output = QString::fromUtf8(process.readAll());
        for (const QString& line : output.split('\n'))
            if (line.startsWith("accuracy ") || line.startsWith("FAIL")) qInfo().noquote() << line;
        QVERIFY2(process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0,
                 qPrintable(output));
        QVERIFY(output.contains("0 failure(s)"));
    }

    // What a safetensors file holds comes back bit for bit, and evaluating it in a fresh trainer
    // gives exactly the loss and accuracy measured before the export.
    void safetensors_round_trip() {
        const Trained& t = mlp();
        const std::string path = m_dir.filePath("round.safetensors").toStdString();
        export_weights(t.model, path);
        const TrainedModel back = load_trained_model(path);
        QVERIFY(back.experiment == t.model.experiment);
        QCOMPARE(back.test_accuracy, t.eval.accuracy);
        QCOMPARE(back.weights.tensors.size(), t.model.weights.tensors.size());
        for (std::size_t i = 0; i < back.weights.tensors.size(); ++i) {
            const WeightTensor& a = back.weights.tensors[i];
            const WeightTensor& b = t.model.weights.tensors[i];
            QCOMPARE(a.name, b.name);
            QVERIFY(a.dtype == b.dtype);
            QVERIFY(a.shape == b.shape);
            QVERIFY(a.data == b.data);
        }
        BackendChoice cpu = create_backend("cpu");
        Trainer fresh(back.experiment, mnist(), *cpu.backend);
        QVERIFY(fresh.evaluate().accuracy != t.eval.accuracy); // untrained differs
        fresh.load_weights(back.weights, path);
        const EvalResult again = fresh.evaluate();
        QCOMPARE(again.accuracy, t.eval.accuracy);
        QCOMPARE(again.loss, t.eval.loss);
    }

    // Corrupt or truncated files fail with a message naming the file and what is wrong.
    void corrupt_safetensors_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty") << "empty"
                               << "8-byte header length";
        QTest::newRow("header cut") << "header cut"
                                    << "truncated or not a safetensors file";
        QTest::newRow("data cut") << "data cut"
                                  << "the file is truncated";
        QTest::newRow("bad json") << "bad json"
                                  << "not valid JSON";
        QTest::newRow("unknown dtype") << "unknown dtype"
                                       << "dtype 'Q8' is not one";
        QTest::newRow("offsets disagree with shape")
            << "offsets"
            << "data_offsets [0, 8] span 8 bytes, but F32 [3] needs 12";
        QTest::newRow("metadata not strings") << "metadata"
                                              << "__metadata__.x must be a string";
        // Found writing the fuzz target: the element count overflowed int64 (UB), or the byte count
        // wrapped to the 0 bytes the offsets claim and a tensor of 2^62 floats loaded with no data.
        QTest::newRow("shape overflows int64")
            << "numel overflow"
            << "shape [4294967296,4294967296,0] of F32 has more bytes than a 64-bit size can count";
        QTest::newRow("header nested 100000 deep") << "deep"
                                                   << "the header nests deeper than 64 levels";
        QTest::newRow("byte count wraps")
            << "bytes wrap"
            << "shape [4611686018427387904] of F32 has more bytes than a 64-bit size can count";
    }
    void corrupt_safetensors() {
        QFETCH(QString, kind);
        QFETCH(QString, expected);
        const std::string good_path = m_dir.filePath("good.safetensors").toStdString();
        export_weights(cnn().model, good_path);
        const std::string good = bytes_of(good_path);
        std::string bytes;
        const std::string twelve(12, '\0');
        if (kind == "empty")
            bytes = "";
        else if (kind == "header cut")
            bytes = good.substr(0, 40);
        else if (kind == "data cut")
            bytes = good.substr(0, good.size() - 7);
        else if (kind == "bad json")
            bytes = safetensors_bytes(json("x"), "").replace(8, 3, "{no");
        else if (kind == "unknown dtype")
            bytes = safetensors_bytes(
                {{"w", {{"dtype", "Q8"}, {"shape", {3}}, {"data_offsets", {0, 3}}}}}, "abc");
        else if (kind == "offsets")
            bytes = safetensors_bytes(
                {{"w", {{"dtype", "F32"}, {"shape", {3}}, {"data_offsets", {0, 8}}}}}, twelve);
        else if (kind == "metadata")
            bytes = safetensors_bytes({{"__metadata__", {{"x", 1}}}}, "");
        else if (kind == "numel overflow")
            bytes = safetensors_bytes({{"w",
                                        {{"dtype", "F32"},
                                         {"shape", {4294967296LL, 4294967296LL, 0}},
                                         {"data_offsets", {0, 0}}}}},
                                      "");
        else if (kind == "deep") {
            // Found by hand with the fuzz target: the error message dumped the shape
            // recursively and overflowed the stack.
            const std::string text = R"({"w":{"dtype":"F32","shape":)" + std::string(100000, '[') +
                                     std::string(100000, ']') + "}}";
            bytes = std::string(8, '\0') + text;
            for (int i = 0; i < 8; ++i)
                bytes[static_cast<std::size_t>(i)] = static_cast<char>(text.size() >> (8 * i));
        } else if (kind == "bytes wrap")
            bytes = safetensors_bytes({{"w",
                                        {{"dtype", "F32"},
                                         {"shape", {4611686018427387904LL}},
                                         {"data_offsets", {0, 0}}}}},
                                      "");
        const std::string path = m_dir.filePath("corrupt.safetensors").toStdString();
        write_bytes(path, bytes);
        const QString message = error_of([&] { read_safetensors(path); });
        QVERIFY2(message.contains(expected), qPrintable(message));
        QVERIFY2(message.startsWith(QString::fromStdString(path)), qPrintable(message));
    }

    // Names, shapes and dtypes are checked against the model, and the error says which tensor and
    // what was expected against what the file holds.
    void import_validation_data() {
        QTest::addColumn<QString>("change");
        QTest::addColumn<QString>("policy");
        QTest::addColumn<bool>("allow_rounding");
        QTest::addColumn<QString>("expected"); // empty: loads
        QTest::newRow("as saved") << "none"
                                  << "float32" << false << "";
        QTest::newRow("missing tensor") << "drop dense_1.bias"
                                        << "float32" << false << "tensor 'dense_1.bias' is missing";
        QTest::newRow("wrong shape") << "reshape conv2d_2.kernel"
                                     << "float32" << false
                                     << "tensor 'conv2d_2.kernel': expected shape (3, 3, 4, 8), "
                                        "found (3, 3, 8, 4)";
        QTest::newRow("extra tensor") << "add dense_9.kernel"
                                      << "float32" << false << "unexpected tensor 'dense_9.kernel'";
        QTest::newRow("integer dtype")
            << "int conv2d_1.bias"
            << "float32" << false << "tensor 'conv2d_1.bias': expected a floating dtype";
        QTest::newRow("narrowing refused")
            << "none"
            << "float16" << false
            << "tensor 'conv2d_1.kernel': expected float16 (the variable dtype of policy "
               "'float16'), found float32";
        QTest::newRow("narrowing allowed") << "none"
                                           << "float16" << true << "";
        QTest::newRow("widening float16 -> float64") << "to float16"
                                                     << "float64" << false << "";
    }
    void import_validation() {
        QFETCH(QString, change);
        QFETCH(QString, policy);
        QFETCH(bool, allow_rounding);
        QFETCH(QString, expected);
        ModelWeights w = cnn().model.weights;
        auto find = [&](const char* name) {
            for (WeightTensor& t : w.tensors)
                if (t.name == name) return &t;
            return static_cast<WeightTensor*>(nullptr);
        };
        if (change == "drop dense_1.bias")
            w.tensors.erase(w.tensors.begin() + (find("dense_1.bias") - w.tensors.data()));
        else if (change == "reshape conv2d_2.kernel")
            find("conv2d_2.kernel")->shape = {3, 3, 8, 4};
        else if (change == "add dense_9.kernel") {
            w.tensors.push_back(w.tensors.back());
            w.tensors.back().name = "dense_9.kernel";
        } else if (change == "int conv2d_1.bias")
            find("conv2d_1.bias")->dtype = DType::Int32;
        else if (change == "to float16")
            for (WeightTensor& t : w.tensors) t = converted(t, DType::Float16);

        Experiment e = cnn().model.experiment;
        e.policy = policy.toStdString();
        SmallPlan small(e);
        LoadWeightsOptions options;
        options.allow_rounding = allow_rounding;
        const QString message = error_of([&] {
            load_model_weights(*small.plan, *small.cpu.backend, w, "w.safetensors", options);
        });
        if (expected.isEmpty()) {
            QCOMPARE(message, QString("(no error)"));
            const ModelWeights back = read_model_weights(*small.plan, *small.cpu.backend);
            const WeightTensor want =
                converted(*w.find("dense_1.kernel"), back.find("dense_1.kernel")->dtype);
            QVERIFY(back.find("dense_1.kernel")->data == want.data);
        } else {
            QVERIFY2(message.startsWith("w.safetensors: "), qPrintable(message));
            QVERIFY2(message.contains(expected), qPrintable(message));
        }
    }

    // An export that fails midway, or whose process is killed midway, leaves the previous file
    // under the final name untouched.
    void interrupted_write_keeps_old_file() {
        const QString dir = m_dir.filePath("atomic");
        QVERIFY(QDir().mkpath(dir));
        const std::string path = (dir + "/model.safetensors").toStdString();
        export_weights(cnn().model, path);
        const std::string old = bytes_of(path);
        const std::string big(1 << 20, 'x');

        const QString thrown = error_of([&] {
            write_file_atomic(path, [&](const ByteSink& sink) {
                sink(big);
                throw Error(ErrorKind::Io, "disk full (simulated)");
            });
        });
        QCOMPARE(thrown, QString("disk full (simulated)"));
        QVERIFY(bytes_of(path) == old);
        QCOMPARE(QDir(dir).entryList(QDir::Files), QStringList{"model.safetensors"});

        const pid_t child = fork();
        QVERIFY(child >= 0);
        if (child == 0) { // killed after half of a new export reached the disk
            write_file_atomic(path, [&](const ByteSink& sink) {
                sink(big);
                ::raise(SIGKILL);
                sink(big);
            });
            _exit(0); // not reached
        }
        int status = 0;
        QCOMPARE(waitpid(child, &status, 0), child);
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        QVERIFY(bytes_of(path) == old);
        QVERIFY(load_trained_model(path).weights.tensors.size() ==
                cnn().model.weights.tensors.size());
    }

    void format_by_extension_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("format"); // empty: rejected
        QTest::newRow("safetensors") << "a/model.safetensors"
                                     << "safetensors";
        QTest::newRow("upper case") << "MODEL.ONNX"
                                    << "ONNX";
        QTest::newRow("npz") << "w.npz"
                             << "NPZ";
        QTest::newRow("pytorch") << "w.pt"
                                 << "";
        QTest::newRow("no extension") << "npz"
                                      << "";
    }
    void format_by_extension() {
        QFETCH(QString, path);
        QFETCH(QString, format);
        if (format.isEmpty()) {
            const QString message = error_of([&] { weights_format_for_path(path.toStdString()); });
            QVERIFY2(message.contains("'" + path + "': unknown weights format"),
                     qPrintable(message));
        } else {
            QCOMPARE(QString(weights_format_name(weights_format_for_path(path.toStdString()))),
                     format);
        }
    }

    void export_rejects_dtypes_a_format_lacks() {
        const std::string base = m_dir.filePath("lack").toStdString();
        QVERIFY(error_of([&] {
                    export_weights(cnn().model, base + ".npz", {DType::BFloat16});
                }).contains("NumPy has no bfloat16"));
        QVERIFY(error_of([&] {
                    export_weights(cnn().model, base + ".onnx", {DType::Float64});
                }).contains("ONNX export writes float32 or float16"));
        QVERIFY(!QFile::exists(QString::fromStdString(base + ".npz")));
    }

    // The commands: eval of an exported file reproduces the accuracy, export converts it, metrics
    // writes CSV/JSON, and bad arguments exit 2 naming the argument.
    void cli_eval_export_metrics() {
        const Trained& t = mlp();
        const QString weights = m_dir.filePath("cli.safetensors");
        export_weights(t.model, weights.toStdString());

        CliRun r = run_cli({"eval", "--weights", weights, "--device", "cpu"});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        QVERIFY2(
            r.out.contains("10000 test images - loss: " + QString::number(t.eval.loss, 'f', 4) +
                           " - accuracy: " + QString::number(t.eval.accuracy, 'f', 4)),
            qPrintable(r.out));

        const QString onnx_out = m_dir.filePath("cli.onnx"), npz_out = m_dir.filePath("cli.npz");
        r = run_cli({"export", "--weights", weights, "--out", onnx_out, "--out", npz_out});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        QVERIFY(QFile::exists(onnx_out) && QFile::exists(npz_out));

        const QString f16 = m_dir.filePath("cli-f16.safetensors");
        r = run_cli({"export", "--weights", weights, "--out", f16, "--dtype", "float16"});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        QVERIFY(read_safetensors(f16.toStdString()).weights.tensors.front().dtype ==
                DType::Float16);

        // train --weights continues from the saved weights: one step at a negligible learning rate
        // keeps the saved accuracy (a fresh start would be near 10%).
        const QString config = m_dir.filePath("cli.json");
        save_experiment(t.model.experiment, config.toStdString());
        r = run_cli({"train", "--config", config, "--weights", weights, "--max-steps", "1", "--lr",
                     "1e-9", "--quiet"});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        const QRegularExpression accuracy_re("test accuracy ([0-9.]+)%");
        const QRegularExpressionMatch match = accuracy_re.match(r.out);
        QVERIFY2(match.hasMatch(), qPrintable(r.out));
        QVERIFY2(std::abs(match.captured(1).toDouble() / 100.0 - t.eval.accuracy) <= 0.002,
                 qPrintable(r.out));

        // metrics: a real run's JSONL (two steps) as CSV and JSON; without its summary line the
        // run reads as incomplete and says so.
        const QString jsonl = m_dir.filePath("cli.jsonl");
        r = run_cli(
            {"train", "--config", config, "--max-steps", "2", "--quiet", "--metrics", jsonl});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        const QString csv = m_dir.filePath("cli.csv"), js = m_dir.filePath("cli-run.json");
        r = run_cli({"metrics", "--in", jsonl, "--csv", csv, "--json", js});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        const QStringList rows =
            QString::fromStdString(read_file(csv.toStdString())).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 3); // header + 2 steps
        QVERIFY2(rows[0].startsWith("step,epoch,loss,accuracy"), qPrintable(rows[0]));
        QVERIFY(rows[1].startsWith("1,1,"));
        const json doc = json::parse(read_file(js.toStdString()));
        QCOMPARE(doc["steps"].size(), std::size_t(2));
        QCOMPARE(doc["status"].get<std::string>(), std::string("completed"));
        QVERIFY(!r.err.contains("has no summary"));
        std::string text = read_file(jsonl.toStdString());
        text.erase(text.rfind('\n', text.size() - 2) + 1); // the last line is the summary
        write_bytes(jsonl.toStdString(), text);
        r = run_cli({"metrics", "--in", jsonl, "--csv", csv});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        QVERIFY(r.err.contains("has no summary"));
    }

    void cli_bad_arguments_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        QTest::newRow("eval without weights") << QStringList{"eval"} << "--weights: ";
        QTest::newRow("eval unreadable weights")
            << QStringList{"eval", "--weights", "/nonexistent/w.safetensors"}
            << "--weights: cannot read";
        QTest::newRow("eval corrupt weights")
            << QStringList{"eval", "--weights", QStringLiteral(MANTISSA_SOURCE_DIR "/README.md")}
            << "README.md: the header length says";
        QTest::newRow("export without out")
            << QStringList{"export", "--weights", "w.safetensors"} << "--out: ";
        QTest::newRow("export bad extension")
            << QStringList{"export", "--weights", "w.safetensors", "--out", "w.pt"}
            << "--out: 'w.pt'";
        QTest::newRow("export bad dtype")
            << QStringList{"export", "--weights", "w.safetensors", "--out",
                           "w.npz",  "--dtype",   "int32"}
            << "--dtype: 'int32'";
        QTest::newRow("train bad export")
            << QStringList{"train", "--config",
                           QStringLiteral(MANTISSA_SOURCE_DIR
                                          "/resources/experiments/mlp-small.json"),
                           "--export", "w.h5"}
            << "--export: 'w.h5'";
        QTest::newRow("train unreadable weights")
            << QStringList{"train",
                           "--config",
                           QStringLiteral(MANTISSA_SOURCE_DIR
                                          "/resources/experiments/mlp-small.json"),
                           "--weights",
                           "/nonexistent/w.safetensors",
                           "--max-steps",
                           "1"}
            << "--weights: cannot read";
        QTest::newRow("metrics without output")
            << QStringList{"metrics", "--in", "x.jsonl"} << "--csv: ";
        QTest::newRow("metrics unreadable")
            << QStringList{"metrics", "--in", "/nonexistent.jsonl", "--csv", "x.csv"}
            << "--in: cannot read";
    }
    void cli_bad_arguments() {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        const CliRun r = run_cli(args);
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
    }

    void cli_help_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("eval") << "eval"
                              << "--weights";
        QTest::newRow("export") << "export"
                                << "--out FILE";
        QTest::newRow("metrics") << "metrics"
                                 << "--json FILE";
        QTest::newRow("train") << "train"
                               << "--export FILE";
    }
    void cli_help() {
        QFETCH(QString, command);
        QFETCH(QString, mentions);
        const CliRun r = run_cli({command, "--help"});
        QCOMPARE(r.status, 0);
        QVERIFY2(r.out.contains(mentions), qPrintable(r.out));
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
