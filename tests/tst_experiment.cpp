// Tests for experiment files: the shipped presets load, every field survives a write/read round
// trip, and each kind of mistake a user makes is an Error(Config) naming the field's path.

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/train/experiment.h"
#include "tests/unit/error_of.h"
#include "tests/unit/files.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/unit_test.h"

using mantissa::Error;
using mantissa::ErrorKind;
using mantissa::Experiment;
using mantissa::LayerType;
using namespace mantissa::unit;

namespace {

std::string resource(const std::string& name) {
    return (std::string(MANTISSA_SOURCE_DIR "/resources/experiments/") + name);
}

// A valid experiment every bad-input row starts from; each row changes one thing in it.
const char* const kBase = R"({
  "name": "base",
  "model": {
    "input": [28, 28, 1],
    "layers": [
      {"type": "Flatten"},
      {"type": "Dense", "units": 128, "activation": "relu"},
      {"type": "Conv2D", "filters": 8, "kernel": 3},
      {"type": "MaxPool2D"},
      {"type": "Activation", "name": "softmax", "activation": "softmax", "dtype": "float32"}
    ]
  },
  "policy": "mixed_float16",
  "loss_scale": {"mode": "dynamic"},
  "optimizer": {"type": "rmsprop", "learning_rate": 0.001},
  "batch_size": 128,
  "epochs": 3
})";

// Every field set away from its default, so the round trip exercises all of them.
Experiment everythingSet() {
    Experiment e;
    e.name = "everything \"quoted\" / ünïcode";
    e.model.input = {28, 28, 1};
    mantissa::LayerSpec conv;
    conv.type = LayerType::Conv2D;
    conv.name = "stem";
    conv.filters = 16;
    conv.kernel[0] = 5;
    conv.kernel[1] = 3;
    conv.stride[0] = 2;
    conv.stride[1] = 1;
    conv.padding = "same";
    conv.activation = mantissa::Activation::Gelu;
    conv.dtype = "mixed_bfloat16";
    mantissa::LayerSpec pool;
    pool.type = LayerType::MaxPool2D;
    pool.pool[0] = 3;
    pool.pool[1] = 2;
    pool.stride[0] = 1;
    pool.stride[1] = 2;
    mantissa::LayerSpec flat;
    flat.type = LayerType::Flatten;
    mantissa::LayerSpec drop;
    drop.type = LayerType::Dropout;
    drop.rate = 0.1 + 0.2; // not exactly 0.3: tests that doubles print with full precision
    mantissa::LayerSpec dense;
    dense.type = LayerType::Dense;
    dense.units = 10;
    dense.activation = mantissa::Activation::Tanh;
    mantissa::LayerSpec act;
    act.type = LayerType::Activation;
    act.activation = mantissa::Activation::Softmax;
    act.dtype = "float32";
    mantissa::LayerSpec bn;
    bn.type = LayerType::BatchNormalization;
    bn.momentum = 0.9;
    bn.epsilon = 1e-5;
    bn.dtype = "float16"; // forced 16-bit statistics
    mantissa::LayerSpec ln;
    ln.type = LayerType::LayerNormalization;
    ln.epsilon = 1e-6;
    e.model.layers = {conv, bn, pool, flat, drop, ln, dense, act};
    e.policy = "mixed_float16";
    e.loss_scale = {mantissa::LossScaleMode::Fixed, 1024.0, 77, 3.0, 0.5};
    // PyTorch's convention: written only when it is not keras.
    e.optimizer = mantissa::optimizer_defaults(mantissa::OptimizerType::SGD,
                                               mantissa::OptimizerConvention::PyTorch);
    e.optimizer.learning_rate = 1.0 / 3.0;
    e.optimizer.momentum = 0.95;
    e.optimizer.nesterov = true;
    e.batch_size = 1000000;
    e.epochs = 10000;
    e.seed = std::numeric_limits<std::uint64_t>::max();
    e.device = "cuda:1";
    e.tf32 = true;
    e.graph = true;
    e.max_steps = 12345;
    e.histogram_every = 7;
    e.on_divergence = mantissa::DivergencePolicy::Continue;
    return e;
}

} // namespace

class TestExperiment {

public:
    void resourcesLoad_data();
    void resourcesLoad();
    void seedMlpIsTheKerasGuideModel();
    void roundTrip_data();
    void roundTrip();
    void saveAndLoad();
    void defaults();
    void layerTypeNames();
    void badField_data();
    void badField();
    void badText_data();
    void badText();
    void unreadableFile();
};

void TestExperiment::resourcesLoad_data() {
    add_column<std::string>("file");
    add_column<int>("layers");
    add_column<std::string>("policy");
    new_row("seed-mlp") << "seed-mlp.json" << 5 << "mixed_float16";
    new_row("mlp-small") << "mlp-small.json" << 5 << "float32";
    new_row("cnn") << "cnn.json" << 8 << "mixed_float16";
    new_row("deep-sigmoid") << "deep-sigmoid.json" << 11 << "mixed_float16";
    new_row("mnist-fast") << "mnist-fast.json" << 8 << "float32";
    new_row("mlp-batchnorm") << "mlp-batchnorm.json" << 9 << "mixed_float16";
}

void TestExperiment::resourcesLoad() {
    FETCH(std::string, file);
    FETCH(int, layers);
    FETCH(std::string, policy);
    const Experiment e = mantissa::load_experiment(resource(file));
    CHECK_EQ(int(e.model.layers.size()), layers);
    CHECK_EQ((e.policy), policy);
    CHECK_EQ(e.dataset, std::string("mnist"));
    CHECK_EQ(e.device, std::string("auto"));
    CHECK_EQ(e.seed, std::uint64_t{42});
    // The Keras guide's rule: the output softmax computes in float32 whatever the policy.
    CHECK_EQ(e.model.layers.back().type, LayerType::Activation);
    CHECK_EQ(e.model.layers.back().activation, mantissa::Activation::Softmax);
    CHECK_EQ(e.model.layers.back().dtype.value_or(""), std::string("float32"));
    mantissa::validate_experiment(e);
}

void TestExperiment::seedMlpIsTheKerasGuideModel() {
    const Experiment e = mantissa::load_experiment(resource("seed-mlp.json"));
    CHECK_EQ(e.model.input, (mantissa::Shape{28, 28, 1}));
    CHECK_EQ(e.model.layers[0].type, LayerType::Flatten);
    CHECK_EQ(e.model.layers[1].units, std::int64_t{4096});
    CHECK_EQ(e.model.layers[1].activation, mantissa::Activation::Relu);
    CHECK_EQ(e.model.layers[2].units, std::int64_t{4096});
    CHECK_EQ(e.model.layers[3].units, std::int64_t{10});
    CHECK_EQ(e.model.layers[3].activation, mantissa::Activation::Linear);
    CHECK_EQ(e.optimizer.type, mantissa::OptimizerType::RMSprop);
    CHECK_EQ(e.optimizer.learning_rate, 0.001);
    CHECK_EQ(e.batch_size, std::int64_t{8192});
    CHECK_EQ(e.epochs, 5);

    const Experiment cnn = mantissa::load_experiment(resource("cnn.json"));
    CHECK_EQ(cnn.optimizer.type, mantissa::OptimizerType::Adam);
    CHECK_EQ(cnn.model.layers[0].filters, std::int64_t{32});
    CHECK_EQ(cnn.model.layers[2].filters, std::int64_t{64});
    CHECK_EQ(cnn.model.layers[1].pool[0], std::int64_t{2});
    CHECK_EQ(cnn.model.layers[1].stride[0], std::int64_t{0}); // 0: the default, the pool size
}

void TestExperiment::roundTrip_data() {
    add_column<std::string>("file"); // empty: the everything-set experiment built in code
    new_row("seed-mlp") << "seed-mlp.json";
    new_row("mlp-small") << "mlp-small.json";
    new_row("cnn") << "cnn.json";
    new_row("every field set") << "";
    new_row("defaults") << "-";
}

void TestExperiment::roundTrip() {
    FETCH(std::string, file);
    Experiment e;
    if (file == "-")
        e = Experiment{};
    else if (file.empty())
        e = everythingSet();
    else
        e = mantissa::load_experiment(resource(file));
    const std::string text = mantissa::experiment_to_json(e);
    const Experiment back = mantissa::experiment_from_json(text, "roundtrip.json");
    CHECK_MSG(back == e, text.c_str());
    CHECK_EQ(mantissa::experiment_to_json(back), text); // a fixed point
    CHECK(text.find("\"format_version\": 1") != std::string::npos);
    CHECK(text.find("\n  \"name\"") != std::string::npos); // pretty, two-space indent
}

void TestExperiment::saveAndLoad() {
    TempDir tmp;
    const std::string path = tmp.file("mine.json");
    const Experiment e = everythingSet();
    mantissa::save_experiment(e, path);
    CHECK(mantissa::load_experiment(path) == e);
    Experiment changed = e;
    changed.epochs = 7;
    mantissa::save_experiment(changed, path); // overwrite in place
    CHECK_EQ(mantissa::load_experiment(path).epochs, 7);
    std::vector<std::string> files; // no temporary file left behind
    for (const auto& entry : std::filesystem::directory_iterator(tmp.path()))
        if (!entry.is_directory()) files.push_back(entry.path().filename().string());
    CHECK_EQ(files, std::vector<std::string>{"mine.json"});
}

void TestExperiment::defaults() {
    // Only a model: everything else takes the documented defaults.
    const Experiment e = mantissa::experiment_from_json(
        R"({"model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 10}]}})",
        "min.json");
    const Experiment d;
    CHECK_EQ(e.policy, d.policy);
    CHECK_EQ(e.batch_size, d.batch_size);
    CHECK_EQ(e.epochs, d.epochs);
    CHECK_EQ(e.model.input, (mantissa::Shape{28, 28, 1}));
    CHECK(e.optimizer == d.optimizer);
    CHECK(e.loss_scale == d.loss_scale);
    CHECK_EQ(e.histogram_every, std::int64_t{50});

    // Omitted optimizer fields take Keras's defaults for the chosen type.
    const Experiment sgd = mantissa::experiment_from_json(
        R"({"model": {"layers": []}, "optimizer": {"type": "SGD"}})", "sgd.json");
    CHECK_EQ(sgd.optimizer.type, mantissa::OptimizerType::SGD);
    CHECK_EQ(sgd.optimizer.learning_rate, 0.01);
    CHECK_EQ(sgd.optimizer.momentum, 0.0);
    // ... and the convention's defaults: PyTorch's RMSprop.
    const Experiment torch = mantissa::experiment_from_json(
        R"({"model": {"layers": []}, "optimizer": {"type": "rmsprop", "convention": "pytorch"}})",
        "torch.json");
    CHECK_EQ(torch.optimizer.convention, mantissa::OptimizerConvention::PyTorch);
    CHECK_EQ(torch.optimizer.learning_rate, 0.01);
    CHECK_EQ(torch.optimizer.rho, 0.99);
    CHECK_EQ(torch.optimizer.epsilon, 1e-8);

    // Keras spellings, a scalar kernel, 128.0 as an integer, a missing version meaning 1.
    const Experiment keras = mantissa::experiment_from_json(
        R"({"model": {"layers": [
              {"type": "Convolution2D", "filters": 4, "kernel": 5, "strides": [2, 1]},
              {"type": "MaxPooling2D", "pool_size": [3, 2]},
              {"type": "Dense", "units": 128.0}]}})",
        "keras.json");
    CHECK_EQ(keras.model.layers[0].type, LayerType::Conv2D);
    CHECK_EQ(keras.model.layers[0].kernel[0], std::int64_t{5});
    CHECK_EQ(keras.model.layers[0].kernel[1], std::int64_t{5});
    CHECK_EQ(keras.model.layers[0].stride[0], std::int64_t{2});
    CHECK_EQ(keras.model.layers[0].stride[1], std::int64_t{1});
    CHECK_EQ(keras.model.layers[1].type, LayerType::MaxPool2D);
    CHECK_EQ(keras.model.layers[1].pool[0], std::int64_t{3});
    CHECK_EQ(keras.model.layers[1].pool[1], std::int64_t{2});
    CHECK_EQ(keras.model.layers[1].stride[0], std::int64_t{0}); // default: the pool size
    CHECK_EQ(keras.model.layers[2].units, std::int64_t{128});
}

void TestExperiment::layerTypeNames() {
    using mantissa::layer_type_from_name;
    CHECK_EQ(layer_type_from_name("dense"), LayerType::Dense);
    CHECK_EQ(layer_type_from_name("DENSE"), LayerType::Dense);
    CHECK_EQ(layer_type_from_name("maxpool2d"), LayerType::MaxPool2D);
    CHECK_EQ(layer_type_from_name("MaxPooling2D"), LayerType::MaxPool2D);
    CHECK_EQ(layer_type_from_name("Conv2D"), LayerType::Conv2D);
    CHECK_EQ(layer_type_from_name("convolution2d"), LayerType::Conv2D);
    CHECK_EQ(layer_type_from_name("Dropout"), LayerType::Dropout);
    CHECK_EQ(layer_type_from_name("activation"), LayerType::Activation);
    CHECK_EQ(layer_type_from_name("Flatten"), LayerType::Flatten);
    CHECK_EQ(layer_type_from_name("BatchNormalization"), LayerType::BatchNormalization);
    CHECK_EQ(layer_type_from_name("batchnorm"), LayerType::BatchNormalization);
    CHECK_EQ(layer_type_from_name("layernormalization"), LayerType::LayerNormalization);
    CHECK_EQ(layer_type_from_name("LayerNorm"), LayerType::LayerNormalization);
    for (LayerType t : {LayerType::Flatten, LayerType::Dense, LayerType::Activation,
                        LayerType::Dropout, LayerType::Conv2D, LayerType::MaxPool2D,
                        LayerType::BatchNormalization, LayerType::LayerNormalization})
        CHECK_EQ(layer_type_from_name(mantissa::layer_type_name(t)), t);
    const std::string msg =
        error_of([] { mantissa::layer_type_from_name("LSTM"); }, ErrorKind::Config);
    CHECK_MSG(contains(msg, "'LSTM'") && contains(msg, "Flatten, Dense"), (msg));
}

void TestExperiment::badField_data() {
    add_column<std::string>("pointer"); // a JSON pointer into kBase
    add_column<std::string>("value");   // JSON to put there; empty: remove the field
    add_column<std::string>("expected");

    new_row("wrong type")
        << "/batch_size"
        << R"("128")"
        << R"(batch_size: expected an integer from 1 to 1000000, got the string "128")";
    new_row("zero batch") << "/batch_size"
                          << "0"
                          << "batch_size: expected an integer from 1 to 1000000, got 0";
    new_row("huge batch") << "/batch_size"
                          << "1e12"
                          << "batch_size: expected an integer";
    new_row("zero epochs") << "/epochs"
                           << "0"
                           << "epochs: expected an integer from 1";
    new_row("unknown top-level field") << "/batchsize"
                                       << "64"
                                       << "batchsize: unknown field; valid fields";
    new_row("unknown layer field")
        << "/model/layers/1/unitz"
        << "64"
        << "model.layers[1].unitz: unknown field; valid fields for Dense: type, name, units, "
           "activation, dtype";
    new_row("field of another layer type") << "/model/layers/0/units"
                                           << "64"
                                           << "model.layers[0].units: unknown field";
    new_row("unknown layer type") << "/model/layers/1/type"
                                  << R"("Densee")"
                                  << "model.layers[1].type: unknown layer type 'Densee'";
    new_row("layer type not a string") << "/model/layers/1/type"
                                       << "3"
                                       << "model.layers[1].type: expected a string, got 3";
    new_row("negative units") << "/model/layers/1/units"
                              << "-4"
                              << "model.layers[1].units: expected a positive integer, got -4";
    new_row("fractional units") << "/model/layers/1/units"
                                << "12.5"
                                << "model.layers[1].units: expected";
    new_row("missing units") << "/model/layers/1/units"
                             << ""
                             << "model.layers[1]: missing field 'units'";
    new_row("unknown activation") << "/model/layers/1/activation"
                                  << R"("relu6")"
                                  << "model.layers[1].activation: unknown activation";
    new_row("bad kernel") << "/model/layers/2/kernel"
                          << "[3]"
                          << "model.layers[2].kernel: expected an integer or [height, width]";
    new_row("zero kernel") << "/model/layers/2/kernel"
                           << "[3, 0]"
                           << "model.layers[2].kernel[1]: expected a positive integer, got 0";
    new_row("zero strides") << "/model/layers/2/strides"
                            << "0"
                            << "model.layers[2].strides: expected a positive integer, got 0";
    new_row("bad padding") << "/model/layers/2/padding"
                           << R"("full")"
                           << R"(model.layers[2].padding: expected "valid" or "same")";
    new_row("batch normalization momentum 1")
        << "/model/layers/1"
        << R"({"type": "BatchNormalization", "momentum": 1})"
        << "model.layers[1].momentum: expected a number in [0, 1)";
    new_row("batch normalization negative momentum")
        << "/model/layers/1"
        << R"({"type": "batchnorm", "momentum": -0.1})"
        << "model.layers[1].momentum: expected a number in [0, 1), got -0.1";
    new_row("layer normalization epsilon 0")
        << "/model/layers/1"
        << R"({"type": "LayerNormalization", "epsilon": 0})"
        << "model.layers[1].epsilon: expected a number > 0, got 0";
    new_row("layer normalization has no momentum")
        << "/model/layers/1"
        << R"({"type": "LayerNormalization", "momentum": 0.9})"
        << "model.layers[1].momentum: unknown field";
    new_row("dropout rate 1") << "/model/layers/1"
                              << R"({"type": "Dropout", "rate": 1})"
                              << "model.layers[1].rate: expected a number in [0, 1), got 1";
    new_row("unknown layer dtype") << "/model/layers/4/dtype"
                                   << R"("float12")"
                                   << "model.layers[4].dtype: unknown";
    new_row("duplicate layer names") << "/model/layers/1/name"
                                     << R"("softmax")"
                                     << "model.layers[4].name";
    new_row("unknown model field") << "/model/inputs"
                                   << "[28, 28]"
                                   << "model.inputs: unknown field";
    new_row("zero input dimension") << "/model/input/1"
                                    << "0"
                                    << "model.input[1]: expected a positive integer";
    new_row("missing model") << "/model"
                             << ""
                             << "model: missing";
    new_row("unknown policy") << "/policy"
                              << R"("mixed_float12")"
                              << "policy: unknown";
    new_row("bad loss-scale mode") << "/loss_scale/mode"
                                   << R"("sometimes")"
                                   << "loss_scale.mode: unknown loss scale mode 'sometimes'";
    new_row("negative initial scale") << "/loss_scale/initial"
                                      << "-1"
                                      << "loss_scale.initial must be";
    new_row("unknown loss-scale field") << "/loss_scale/floor"
                                        << "1"
                                        << "loss_scale.floor: unknown field";
    new_row("NaN learning rate as a string")
        << "/optimizer/learning_rate"
        << R"("NaN")"
        << R"(optimizer.learning_rate: expected a number, got the string "NaN")";
    new_row("negative learning rate") << "/optimizer/learning_rate"
                                      << "-0.1"
                                      << "optimizer.learning_rate must be";
    new_row("rho out of range") << "/optimizer/rho"
                                << "1.5"
                                << "optimizer.rho must be";
    new_row("option of another optimizer")
        << "/optimizer/nesterov"
        << "true"
        << "optimizer.nesterov: unknown field; valid fields for rmsprop";
    new_row("unknown convention")
        << "/optimizer/convention"
        << R"("jax")"
        << "optimizer.convention: unknown optimizer convention 'jax'; valid conventions: keras, "
           "tf_keras_2, pytorch";
    new_row("unknown optimizer") << "/optimizer/type"
                                 << R"("adagrad")"
                                 << "optimizer.type: unknown optimizer 'adagrad'";
    new_row("bool as string") << "/tf32"
                              << R"("yes")"
                              << R"(tf32: expected true or false, got the string "yes")";
    new_row("negative seed") << "/seed"
                             << "-1"
                             << "seed: expected a non-negative integer, got -1";
    new_row("bad device") << "/device"
                          << R"("gpu")"
                          << "device: expected";
    new_row("negative histogram_every") << "/histogram_every"
                                        << "-1"
                                        << "histogram_every: expected an integer >= 0, got -1";
    new_row("fractional histogram_every") << "/histogram_every"
                                          << "2.5"
                                          << "histogram_every: expected an integer >= 0, got 2.5";
    new_row("bad divergence policy") << "/on_divergence"
                                     << R"("maybe")"
                                     << "on_divergence: expected \"stop\" or \"continue\"";
    new_row("unknown dataset") << "/dataset"
                               << R"("cifar10")"
                               << "dataset: unknown dataset";
    new_row("newer format") << "/format_version"
                            << "2"
                            << "format_version: this file is format_version 2, written by "
                               "a newer Mantissa";
    new_row("format version 0") << "/format_version"
                                << "0"
                                << "format_version: expected";
}

void TestExperiment::badField() {
    FETCH(std::string, pointer);
    FETCH(std::string, value);
    FETCH(std::string, expected);
    nlohmann::json j = nlohmann::json::parse(kBase);
    const nlohmann::json::json_pointer ptr(pointer);
    if (value.empty())
        j[ptr.parent_pointer()].erase(ptr.back());
    else
        j[ptr] = nlohmann::json::parse(value);
    const std::string text = j.dump(2);
    const std::string msg =
        error_of([&] { mantissa::experiment_from_json(text, "test.json"); }, ErrorKind::Config);
    CHECK_MSG(msg.starts_with("test.json: "), (msg));
    CHECK_MSG(contains(msg, expected), (msg + "\n-- expected to contain: " + expected));
}

void TestExperiment::badText_data() {
    add_column<std::string>("text");
    add_column<std::string>("expected");
    new_row("missing comma") << "{\n  \"name\": \"x\"\n  \"epochs\": 3\n}"
                             << "test.json: line 3, column 10: invalid JSON";
    new_row("trailing comma") << "{\"model\": {\"layers\": []},\n}"
                              << "test.json: line 2, column 1: invalid JSON";
    new_row("unterminated") << "{\"model\": "
                            << "test.json: line 1, column 11: invalid JSON";
    new_row("empty file") << ""
                          << "test.json: line 1, column 1: invalid JSON";
    new_row("huge learning rate")
        << "{\"model\": {\"layers\": []},\n \"optimizer\": {\"type\": \"adam\", "
           "\"learning_rate\": 1e999}}"
        << "test.json: line 2, column 49: invalid JSON: number overflow parsing '1e999'";
    new_row("top-level array") << "[1, 2]"
                               << "test.json: expected a JSON object";
    new_row("duplicate field") << R"({"epochs": 3, "epochs": 4, "model": {"layers": []}})"
                               << "test.json: field 'epochs' appears twice";
    // The depth guard of the shared strict reader (core/io/strict_json.h), once only lessons'.
    new_row("nested 100000 deep") << "{\"model\": " + std::string(100000, '[') +
                                         std::string(100000, ']') + "}"
                                  << "test.json: invalid JSON: it nests deeper than 64 levels";
}

void TestExperiment::badText() {
    FETCH(std::string, text);
    FETCH(std::string, expected);
    const std::string msg =
        error_of([&] { mantissa::experiment_from_json(text, "test.json"); }, ErrorKind::Config);
    CHECK_MSG(contains(msg, expected), (msg + "\n-- expected to contain: " + expected));
}

void TestExperiment::unreadableFile() {
    TempDir tmp;
    const std::string path = tmp.file("nope.json");
    const std::string msg = error_of([&] { mantissa::load_experiment(path); }, ErrorKind::Io);
    CHECK_MSG(contains(msg, (path)), (msg));
}

MANTISSA_TEST_MAIN(TestExperiment, resourcesLoad, seedMlpIsTheKerasGuideModel, roundTrip,
                   saveAndLoad, defaults, layerTypeNames, badField, badText, unreadableFile)
