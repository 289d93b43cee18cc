// Weights and metrics export/import: independent readers (tests/check_exports.py: NumPy, its own
// safetensors parser, python3-onnx's checker and a NumPy ONNX evaluator), import validation with
// named errors, atomic writes under failure and SIGKILL, and the eval/export/metrics commands.

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

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
#include "tests/unit/cli.h"
#include "tests/unit/files.h"
#include "tests/unit/process.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
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

// BatchNormalization after a Dense (epsilon 1e-2: the graph must carry the layer's own) and
// LayerNormalization after a Dense, under a mixed policy: float32 variables and statistics, so the
// float16 ONNX normalizes in float32 between casts. Momentum 0.9 lets the moving statistics,
// which evaluation and the ONNX graph use, settle within the short run (with 0.99 a fifth of
// their initial 0 and 1 would remain after 150 steps).
const Trained& norm_mlp() {
    static const Trained t = train(experiment_for(
        "export-norm-mlp",
        {{28, 28, 1},
         {flatten(), dense(32), batchnorm(0.9, 1e-2), activation(Activation::Relu), dense(16),
          layernorm(), activation(Activation::Gelu), dense(10, Activation::Softmax)}},
        "mixed_float16", 150));
    return t;
}

// BatchNormalization after a Conv2D and LayerNormalization after one, both over the channels of
// NCHW values (ONNX's BatchNormalization axis 1; LayerNormalization's 1x1 Conv of channel means),
// in float32.
const Trained& norm_cnn() {
    static const Trained t = train(experiment_for(
        "export-norm-cnn",
        {{28, 28, 1},
         {conv(8, 3), batchnorm(0.9), activation(Activation::Relu), maxpool(2),
          conv(8, 3, Activation::Relu), layernorm(), flatten(), dense(10, Activation::Softmax)}},
        "float32", 120));
    return t;
}

// Both on a (1, 28, 28) input, which no Conv2D puts in NCHW: the graph keeps Keras's NHWC there
// and transposes the last axis (28) to axis 1 and back around each normalization.
const Trained& norm_nhwc() {
    static const Trained t = train(experiment_for(
        "export-norm-nhwc",
        {{1, 28, 28}, {layernorm(), batchnorm(0.9), flatten(), dense(10, Activation::Softmax)}},
        "float32", 120));
    return t;
}

// A python3 that has NumPy and onnx (Debian's python3-numpy / python3-onnx live in
// /usr/bin/python3, which a pyenv shim on PATH may hide).
std::string python() {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("MANTISSA_PYTHON"); env && *env) candidates.push_back(env);
    candidates.push_back("/usr/bin/python3");
    candidates.push_back("python3");
    for (const std::string& p : candidates) {
        ProcessOptions options;
        options.timeout_ms = 60000;
        if (run_process(p, {"-c", "import numpy, onnx"}, options).status == 0) return p;
    }
    return {};
}

// QString::number(v, 'f', 4).
std::string fixed4(double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.4f", v);
    return buffer;
}

// The plain files in `dir` (QDir::entryList(QDir::Files)), sorted.
std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string bytes_of(const std::string& path) {
    return mantissa::read_file(path);
}

void write_bytes(const std::string& path, const std::string& bytes) {
    CHECK(write_file(path, bytes));
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

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return (e.what());
    }
    return "(no error)";
}

} // namespace

class TestExport {

public:
    void initTestCase() {
        CHECK_MSG(onnx_export_available(),
                  "this build has no ONNX export: install libonnx-dev libprotobuf-dev");
        CHECK(!m_dir.path().empty());
    }

    // NumPy, a separate safetensors parser and onnx (checker + NumPy evaluation) read what Mantissa
    // wrote and agree with its values and its test accuracy.
    void python_reads_exports_data() {
        add_column<std::string>("model");
        new_row("mlp mixed_float16") << "mlp";
        new_row("cnn float32") << "cnn";
        new_row("normalizations after Dense mixed_float16") << "norm-mlp";
        new_row("normalizations after Conv2D float32") << "norm-cnn";
        new_row("normalizations on a (1, 28, 28) input float32") << "norm-nhwc";
    }
    void python_reads_exports() {
        FETCH(std::string, model);
        const std::string py = python();
        CHECK_MSG(!py.empty(), "no python3 with numpy and onnx: apt-get install python3-numpy "
                               "python3-onnx (./mantissa.sh installs them)");
        const Trained& t = model == "mlp"        ? mlp()
                           : model == "cnn"      ? cnn()
                           : model == "norm-mlp" ? norm_mlp()
                           : model == "norm-cnn" ? norm_cnn()
                                                 : norm_nhwc();
        // The normalization models' float32 files also run in OpenCV DNN (when the python3 has
        // cv2): the runtime tests' fixture trains no model with these layers.
        const bool opencv = model.starts_with("norm-");
        CHECK_MSG(t.eval.accuracy > 0.5, "the briefly trained model should beat chance clearly");
        const std::string base = m_dir.file(model);

        json spec;
        spec["mnist"] = find_data_dir("");
        spec["policy"] = t.model.experiment.policy;
        spec["version"] = mantissa_version();
        spec["test_accuracy"] = t.eval.accuracy;
        spec["architecture"] = json::parse(experiment_to_json(t.model.experiment))["model"];
        for (const WeightTensor& w : t.model.weights.tensors) {
            CHECK(w.dtype == DType::Float32); // float32 masters under mixed_float16 too
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
        json onnx32 = out(".onnx", "float32", std::nullopt);
        if (opencv) onnx32["opencv"] = true;
        spec["onnx"] = {onnx32, out("-f16.onnx", "float16", DType::Float16)};
        const std::string spec_path = base + "-spec.json";
        write_file_atomic(spec_path, spec.dump());

        // stderr after stdout (QProcess::MergedChannels interleaved them; only the text matters).
        ProcessOptions options;
        options.timeout_ms = 600000;
        const ProcessResult checked =
            run_process(py, {MANTISSA_SOURCE_DIR "/tests/check_exports.py", spec_path}, options);
        const std::string output = checked.out + checked.err;
        for (const std::string& line : split_lines(output))
            if (line.starts_with("accuracy ") || line.starts_with("FAIL"))
                std::printf("INFO   : %s\n", line.c_str());
        CHECK_MSG(checked.status == 0, (output));
        CHECK(contains(output, "0 failure(s)"));
    }

    // What a safetensors file holds comes back bit for bit, and evaluating it in a fresh trainer
    // gives exactly the loss and accuracy measured before the export.
    void safetensors_round_trip() {
        const Trained& t = mlp();
        const std::string path = m_dir.file("round.safetensors");
        export_weights(t.model, path);
        const TrainedModel back = load_trained_model(path);
        CHECK(back.experiment == t.model.experiment);
        CHECK_EQ(back.test_accuracy, t.eval.accuracy);
        CHECK_EQ(back.weights.tensors.size(), t.model.weights.tensors.size());
        for (std::size_t i = 0; i < back.weights.tensors.size(); ++i) {
            const WeightTensor& a = back.weights.tensors[i];
            const WeightTensor& b = t.model.weights.tensors[i];
            CHECK_EQ(a.name, b.name);
            CHECK(a.dtype == b.dtype);
            CHECK(a.shape == b.shape);
            CHECK(a.data == b.data);
        }
        BackendChoice cpu = create_backend("cpu");
        Trainer fresh(back.experiment, mnist(), *cpu.backend);
        CHECK(fresh.evaluate().accuracy != t.eval.accuracy); // untrained differs
        fresh.load_weights(back.weights, path);
        const EvalResult again = fresh.evaluate();
        CHECK_EQ(again.accuracy, t.eval.accuracy);
        CHECK_EQ(again.loss, t.eval.loss);
    }

    // Corrupt or truncated files fail with a message naming the file and what is wrong.
    void corrupt_safetensors_data() {
        add_column<std::string>("kind");
        add_column<std::string>("expected");
        new_row("empty") << "empty"
                         << "8-byte header length";
        new_row("header cut") << "header cut"
                              << "truncated or not a safetensors file";
        new_row("data cut") << "data cut"
                            << "the file is truncated";
        new_row("bad json") << "bad json"
                            << "not valid JSON";
        new_row("unknown dtype") << "unknown dtype"
                                 << "dtype 'Q8' is not one";
        new_row("offsets disagree with shape")
            << "offsets"
            << "data_offsets [0, 8] span 8 bytes, but F32 [3] needs 12";
        new_row("metadata not strings") << "metadata"
                                        << "__metadata__.x must be a string";
        // Found writing the fuzz target: the element count overflowed int64 (UB), or the byte count
        // wrapped to the 0 bytes the offsets claim and a tensor of 2^62 floats loaded with no data.
        new_row("shape overflows int64")
            << "numel overflow"
            << "shape [4294967296,4294967296,0] of F32 has more bytes than a 64-bit size can count";
        new_row("header nested 100000 deep") << "deep"
                                             << "the header nests deeper than 64 levels";
        new_row("byte count wraps")
            << "bytes wrap"
            << "shape [4611686018427387904] of F32 has more bytes than a 64-bit size can count";
    }
    void corrupt_safetensors() {
        FETCH(std::string, kind);
        FETCH(std::string, expected);
        const std::string good_path = m_dir.file("good.safetensors");
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
        const std::string path = m_dir.file("corrupt.safetensors");
        write_bytes(path, bytes);
        const std::string message = error_of([&] { read_safetensors(path); });
        CHECK_MSG(contains(message, expected), (message));
        CHECK_MSG(message.starts_with((path)), (message));
    }

    // Names, shapes and dtypes are checked against the model, and the error says which tensor and
    // what was expected against what the file holds.
    void import_validation_data() {
        add_column<std::string>("change");
        add_column<std::string>("policy");
        add_column<bool>("allow_rounding");
        add_column<std::string>("expected"); // empty: loads
        new_row("as saved") << "none"
                            << "float32" << false << "";
        new_row("missing tensor") << "drop dense_1.bias"
                                  << "float32" << false << "tensor 'dense_1.bias' is missing";
        new_row("wrong shape") << "reshape conv2d_2.kernel"
                               << "float32" << false
                               << "tensor 'conv2d_2.kernel': expected shape (3, 3, 4, 8), "
                                  "found (3, 3, 8, 4)";
        new_row("extra tensor") << "add dense_9.kernel"
                                << "float32" << false << "unexpected tensor 'dense_9.kernel'";
        new_row("integer dtype") << "int conv2d_1.bias"
                                 << "float32" << false
                                 << "tensor 'conv2d_1.bias': expected a floating dtype";
        new_row("narrowing refused")
            << "none"
            << "float16" << false
            << "tensor 'conv2d_1.kernel': expected float16 (the variable dtype of policy "
               "'float16'), found float32";
        new_row("narrowing allowed") << "none"
                                     << "float16" << true << "";
        new_row("widening float16 -> float64") << "to float16"
                                               << "float64" << false << "";
    }
    void import_validation() {
        FETCH(std::string, change);
        FETCH(std::string, policy);
        FETCH(bool, allow_rounding);
        FETCH(std::string, expected);
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
        e.policy = policy;
        SmallPlan small(e);
        LoadWeightsOptions options;
        options.allow_rounding = allow_rounding;
        const std::string message = error_of([&] {
            load_model_weights(*small.plan, *small.cpu.backend, w, "w.safetensors", options);
        });
        if (expected.empty()) {
            CHECK_EQ(message, std::string("(no error)"));
            const ModelWeights back = read_model_weights(*small.plan, *small.cpu.backend);
            const WeightTensor want =
                converted(*w.find("dense_1.kernel"), back.find("dense_1.kernel")->dtype);
            CHECK(back.find("dense_1.kernel")->data == want.data);
        } else {
            CHECK_MSG(message.starts_with("w.safetensors: "), (message));
            CHECK_MSG(contains(message, expected), (message));
        }
    }

    // An export that fails midway, or whose process is killed midway, leaves the previous file
    // under the final name untouched.
    void interrupted_write_keeps_old_file() {
        const std::string dir = m_dir.file("atomic");
        CHECK(std::filesystem::create_directories(dir));
        const std::string path = (dir + "/model.safetensors");
        export_weights(cnn().model, path);
        const std::string old = bytes_of(path);
        const std::string big(1 << 20, 'x');

        const std::string thrown = error_of([&] {
            write_file_atomic(path, [&](const ByteSink& sink) {
                sink(big);
                throw Error(ErrorKind::Io, "disk full (simulated)");
            });
        });
        CHECK_EQ(thrown, std::string("disk full (simulated)"));
        CHECK(bytes_of(path) == old);
        CHECK_EQ(files_in(dir), std::vector<std::string>{"model.safetensors"});

        const pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) { // killed after half of a new export reached the disk
            write_file_atomic(path, [&](const ByteSink& sink) {
                sink(big);
                ::raise(SIGKILL);
                sink(big);
            });
            _exit(0); // not reached
        }
        int status = 0;
        CHECK_EQ(waitpid(child, &status, 0), child);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        CHECK(bytes_of(path) == old);
        CHECK(load_trained_model(path).weights.tensors.size() ==
              cnn().model.weights.tensors.size());
    }

    void format_by_extension_data() {
        add_column<std::string>("path");
        add_column<std::string>("format"); // empty: rejected
        new_row("safetensors") << "a/model.safetensors"
                               << "safetensors";
        new_row("upper case") << "MODEL.ONNX"
                              << "ONNX";
        new_row("npz") << "w.npz"
                       << "NPZ";
        new_row("pytorch") << "w.pt"
                           << "";
        new_row("no extension") << "npz"
                                << "";
    }
    void format_by_extension() {
        FETCH(std::string, path);
        FETCH(std::string, format);
        if (format.empty()) {
            const std::string message = error_of([&] { weights_format_for_path(path); });
            CHECK_MSG(contains(message, "'" + path + "': unknown weights format"), (message));
        } else {
            CHECK_EQ(std::string(weights_format_name(weights_format_for_path(path))), format);
        }
    }

    void export_rejects_dtypes_a_format_lacks() {
        const std::string base = m_dir.file("lack");
        CHECK(contains(
            error_of([&] { export_weights(cnn().model, base + ".npz", {DType::BFloat16}); }),
            "NumPy has no bfloat16"));
        CHECK(contains(
            error_of([&] { export_weights(cnn().model, base + ".onnx", {DType::Float64}); }),
            "ONNX export writes float32 or float16"));
        CHECK(!exists(base + ".npz"));
    }

    // The commands: eval of an exported file reproduces the accuracy, export converts it, metrics
    // writes CSV/JSON, and bad arguments exit 2 naming the argument.
    void cli_eval_export_metrics() {
        const Trained& t = mlp();
        const std::string weights = m_dir.file("cli.safetensors");
        export_weights(t.model, weights);

        ProcessResult r = run_cli({"eval", "--weights", weights, "--device", "cpu"});
        CHECK_MSG(r.status == 0, (r.err));
        CHECK_MSG(contains(r.out, "10000 test images - loss: " + fixed4(t.eval.loss) +
                                      " - accuracy: " + fixed4(t.eval.accuracy)),
                  (r.out));

        const std::string onnx_out = m_dir.file("cli.onnx"), npz_out = m_dir.file("cli.npz");
        r = run_cli({"export", "--weights", weights, "--out", onnx_out, "--out", npz_out});
        CHECK_MSG(r.status == 0, (r.err));
        CHECK(exists(onnx_out) && exists(npz_out));

        const std::string f16 = m_dir.file("cli-f16.safetensors");
        r = run_cli({"export", "--weights", weights, "--out", f16, "--dtype", "float16"});
        CHECK_MSG(r.status == 0, (r.err));
        CHECK(read_safetensors(f16).weights.tensors.front().dtype == DType::Float16);

        // train --weights continues from the saved weights: one step at a negligible learning rate
        // keeps the saved accuracy (a fresh start would be near 10%).
        const std::string config = m_dir.file("cli.json");
        save_experiment(t.model.experiment, config);
        r = run_cli({"train", "--config", config, "--weights", weights, "--max-steps", "1", "--lr",
                     "1e-9", "--quiet"});
        CHECK_MSG(r.status == 0, (r.err));
        const std::regex accuracy_re("test accuracy ([0-9.]+)%");
        std::smatch match;
        CHECK_MSG(std::regex_search(r.out, match, accuracy_re), (r.out));
        CHECK_MSG(std::abs(std::stod(match[1].str()) / 100.0 - t.eval.accuracy) <= 0.002, (r.out));

        // metrics: a real run's JSONL (two steps) as CSV and JSON; without its summary line the
        // run reads as incomplete and says so.
        const std::string jsonl = m_dir.file("cli.jsonl");
        r = run_cli(
            {"train", "--config", config, "--max-steps", "2", "--quiet", "--metrics", jsonl});
        CHECK_MSG(r.status == 0, (r.err));
        const std::string csv = m_dir.file("cli.csv"), js = m_dir.file("cli-run.json");
        r = run_cli({"metrics", "--in", jsonl, "--csv", csv, "--json", js});
        CHECK_MSG(r.status == 0, (r.err));
        std::vector<std::string> rows;
        for (const std::string& row : split(mantissa::read_file(csv), '\n'))
            if (!row.empty()) rows.push_back(row);
        CHECK_EQ(rows.size(), 3); // header + 2 steps
        CHECK_MSG(rows[0].starts_with("step,epoch,loss,accuracy"), (rows[0]));
        CHECK(rows[1].starts_with("1,1,"));
        const json doc = json::parse(mantissa::read_file(js));
        CHECK_EQ(doc["steps"].size(), std::size_t(2));
        CHECK_EQ(doc["status"].get<std::string>(), std::string("completed"));
        CHECK(!contains(r.err, "has no summary"));
        std::string text = mantissa::read_file(jsonl);
        text.erase(text.rfind('\n', text.size() - 2) + 1); // the last line is the summary
        write_bytes(jsonl, text);
        r = run_cli({"metrics", "--in", jsonl, "--csv", csv});
        CHECK_MSG(r.status == 0, (r.err));
        CHECK(contains(r.err, "has no summary"));
    }

    void cli_bad_arguments_data() {
        add_column<std::vector<std::string>>("args");
        add_column<std::string>("expected");
        new_row("eval without weights") << std::vector<std::string>{"eval"} << "--weights: ";
        new_row("eval unreadable weights")
            << std::vector<std::string>{"eval", "--weights", "/nonexistent/w.safetensors"}
            << "--weights: cannot read";
        new_row("eval corrupt weights")
            << std::vector<std::string>{"eval", "--weights",
                                        std::string(MANTISSA_SOURCE_DIR "/README.md")}
            << "README.md: the header length says";
        new_row("export without out")
            << std::vector<std::string>{"export", "--weights", "w.safetensors"} << "--out: ";
        new_row("export bad extension")
            << std::vector<std::string>{"export", "--weights", "w.safetensors", "--out", "w.pt"}
            << "--out: 'w.pt'";
        new_row("export bad dtype")
            << std::vector<std::string>{"export", "--weights", "w.safetensors", "--out",
                                        "w.npz",  "--dtype",   "int32"}
            << "--dtype: 'int32'";
        new_row("train bad export")
            << std::vector<std::string>{"train", "--config",
                                        std::string(MANTISSA_SOURCE_DIR
                                                    "/resources/experiments/mlp-small.json"),
                                        "--export", "w.h5"}
            << "--export: 'w.h5'";
        new_row("train unreadable weights")
            << std::vector<std::string>{"train",
                                        "--config",
                                        std::string(MANTISSA_SOURCE_DIR
                                                    "/resources/experiments/mlp-small.json"),
                                        "--weights",
                                        "/nonexistent/w.safetensors",
                                        "--max-steps",
                                        "1"}
            << "--weights: cannot read";
        new_row("metrics without output")
            << std::vector<std::string>{"metrics", "--in", "x.jsonl"} << "--csv: ";
        new_row("metrics unreadable")
            << std::vector<std::string>{"metrics", "--in", "/nonexistent.jsonl", "--csv", "x.csv"}
            << "--in: cannot read";
    }
    void cli_bad_arguments() {
        FETCH(std::vector<std::string>, args);
        FETCH(std::string, expected);
        const ProcessResult r = run_cli(args);
        CHECK_EQ(r.status, 2);
        CHECK_MSG(contains(r.err, expected), (r.err));
    }

    void cli_help_data() {
        add_column<std::string>("command");
        add_column<std::string>("mentions");
        new_row("eval") << "eval"
                        << "--weights";
        new_row("export") << "export"
                          << "--out FILE";
        new_row("metrics") << "metrics"
                           << "--json FILE";
        new_row("train") << "train"
                         << "--export FILE";
    }
    void cli_help() {
        FETCH(std::string, command);
        FETCH(std::string, mentions);
        const ProcessResult r = run_cli({command, "--help"});
        CHECK_EQ(r.status, 0);
        CHECK_MSG(contains(r.out, mentions), (r.out));
    }

private:
    TempDir m_dir;
};

MANTISSA_TEST_MAIN(TestExport, python_reads_exports, safetensors_round_trip, corrupt_safetensors,
                   import_validation, interrupted_write_keeps_old_file, format_by_extension,
                   export_rejects_dtypes_a_format_lacks, cli_eval_export_metrics, cli_bad_arguments,
                   cli_help)
