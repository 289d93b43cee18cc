// Tests for experiment files: the shipped presets load, every field survives a write/read round
// trip, and each kind of mistake a user makes is an Error(Config) naming the field's path.
#include <QtTest>

#include "tests/error_capture.h"

#include <QDir>
#include <QTemporaryDir>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/train/experiment.h"

using mantissa::Error;
using mantissa::ErrorKind;
using mantissa::Experiment;
using mantissa::LayerType;

using mantissa::test::errorOf;

namespace {

std::string resource(const QString& name) {
    return (QStringLiteral(MANTISSA_SOURCE_DIR "/resources/experiments/") + name).toStdString();
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
    e.model.layers = {conv, pool, flat, drop, dense, act};
    e.policy = "mixed_float16";
    e.loss_scale = {mantissa::LossScaleMode::Fixed, 1024.0, 77, 3.0, 0.5};
    e.optimizer = mantissa::optimizer_defaults(mantissa::OptimizerType::SGD);
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

class TestExperiment : public QObject {
    Q_OBJECT

private slots:
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
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("layers");
    QTest::addColumn<QString>("policy");
    QTest::newRow("seed-mlp") << "seed-mlp.json" << 5 << "mixed_float16";
    QTest::newRow("mlp-small") << "mlp-small.json" << 5 << "float32";
    QTest::newRow("cnn") << "cnn.json" << 8 << "mixed_float16";
    QTest::newRow("deep-sigmoid") << "deep-sigmoid.json" << 11 << "mixed_float16";
}

void TestExperiment::resourcesLoad() {
    QFETCH(QString, file);
    QFETCH(int, layers);
    QFETCH(QString, policy);
    const Experiment e = mantissa::load_experiment(resource(file));
    QCOMPARE(int(e.model.layers.size()), layers);
    QCOMPARE(QString::fromStdString(e.policy), policy);
    QCOMPARE(e.dataset, std::string("mnist"));
    QCOMPARE(e.device, std::string("auto"));
    QCOMPARE(e.seed, std::uint64_t{42});
    // The Keras guide's rule: the output softmax computes in float32 whatever the policy.
    QCOMPARE(e.model.layers.back().type, LayerType::Activation);
    QCOMPARE(e.model.layers.back().activation, mantissa::Activation::Softmax);
    QCOMPARE(e.model.layers.back().dtype.value_or(""), std::string("float32"));
    mantissa::validate_experiment(e);
}

void TestExperiment::seedMlpIsTheKerasGuideModel() {
    const Experiment e = mantissa::load_experiment(resource("seed-mlp.json"));
    QCOMPARE(e.model.input, (mantissa::Shape{28, 28, 1}));
    QCOMPARE(e.model.layers[0].type, LayerType::Flatten);
    QCOMPARE(e.model.layers[1].units, std::int64_t{4096});
    QCOMPARE(e.model.layers[1].activation, mantissa::Activation::Relu);
    QCOMPARE(e.model.layers[2].units, std::int64_t{4096});
    QCOMPARE(e.model.layers[3].units, std::int64_t{10});
    QCOMPARE(e.model.layers[3].activation, mantissa::Activation::Linear);
    QCOMPARE(e.optimizer.type, mantissa::OptimizerType::RMSprop);
    QCOMPARE(e.optimizer.learning_rate, 0.001);
    QCOMPARE(e.batch_size, std::int64_t{8192});
    QCOMPARE(e.epochs, 5);

    const Experiment cnn = mantissa::load_experiment(resource("cnn.json"));
    QCOMPARE(cnn.optimizer.type, mantissa::OptimizerType::Adam);
    QCOMPARE(cnn.model.layers[0].filters, std::int64_t{32});
    QCOMPARE(cnn.model.layers[2].filters, std::int64_t{64});
    QCOMPARE(cnn.model.layers[1].pool[0], std::int64_t{2});
    QCOMPARE(cnn.model.layers[1].stride[0], std::int64_t{0}); // 0: the default, the pool size
}

void TestExperiment::roundTrip_data() {
    QTest::addColumn<QString>("file"); // empty: the everything-set experiment built in code
    QTest::newRow("seed-mlp") << "seed-mlp.json";
    QTest::newRow("mlp-small") << "mlp-small.json";
    QTest::newRow("cnn") << "cnn.json";
    QTest::newRow("every field set") << "";
    QTest::newRow("defaults") << "-";
}

void TestExperiment::roundTrip() {
    QFETCH(QString, file);
    Experiment e;
    if (file == "-")
        e = Experiment{};
    else if (file.isEmpty())
        e = everythingSet();
    else
        e = mantissa::load_experiment(resource(file));
    const std::string text = mantissa::experiment_to_json(e);
    const Experiment back = mantissa::experiment_from_json(text, "roundtrip.json");
    QVERIFY2(back == e, text.c_str());
    QCOMPARE(mantissa::experiment_to_json(back), text); // a fixed point
    QVERIFY(text.find("\"format_version\": 1") != std::string::npos);
    QVERIFY(text.find("\n  \"name\"") != std::string::npos); // pretty, two-space indent
}

void TestExperiment::saveAndLoad() {
    QTemporaryDir tmp;
    const std::string path = tmp.filePath("mine.json").toStdString();
    const Experiment e = everythingSet();
    mantissa::save_experiment(e, path);
    QVERIFY(mantissa::load_experiment(path) == e);
    Experiment changed = e;
    changed.epochs = 7;
    mantissa::save_experiment(changed, path); // overwrite in place
    QCOMPARE(mantissa::load_experiment(path).epochs, 7);
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"mine.json"});
}

void TestExperiment::defaults() {
    // Only a model: everything else takes the documented defaults.
    const Experiment e = mantissa::experiment_from_json(
        R"({"model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 10}]}})",
        "min.json");
    const Experiment d;
    QCOMPARE(e.policy, d.policy);
    QCOMPARE(e.batch_size, d.batch_size);
    QCOMPARE(e.epochs, d.epochs);
    QCOMPARE(e.model.input, (mantissa::Shape{28, 28, 1}));
    QVERIFY(e.optimizer == d.optimizer);
    QVERIFY(e.loss_scale == d.loss_scale);
    QCOMPARE(e.histogram_every, std::int64_t{50});

    // Omitted optimizer fields take Keras's defaults for the chosen type.
    const Experiment sgd = mantissa::experiment_from_json(
        R"({"model": {"layers": []}, "optimizer": {"type": "SGD"}})", "sgd.json");
    QCOMPARE(sgd.optimizer.type, mantissa::OptimizerType::SGD);
    QCOMPARE(sgd.optimizer.learning_rate, 0.01);
    QCOMPARE(sgd.optimizer.momentum, 0.0);

    // Keras spellings, a scalar kernel, 128.0 as an integer, a missing version meaning 1.
    const Experiment keras = mantissa::experiment_from_json(
        R"({"model": {"layers": [
              {"type": "Convolution2D", "filters": 4, "kernel": 5, "strides": [2, 1]},
              {"type": "MaxPooling2D", "pool_size": [3, 2]},
              {"type": "Dense", "units": 128.0}]}})",
        "keras.json");
    QCOMPARE(keras.model.layers[0].type, LayerType::Conv2D);
    QCOMPARE(keras.model.layers[0].kernel[0], std::int64_t{5});
    QCOMPARE(keras.model.layers[0].kernel[1], std::int64_t{5});
    QCOMPARE(keras.model.layers[0].stride[0], std::int64_t{2});
    QCOMPARE(keras.model.layers[0].stride[1], std::int64_t{1});
    QCOMPARE(keras.model.layers[1].type, LayerType::MaxPool2D);
    QCOMPARE(keras.model.layers[1].pool[0], std::int64_t{3});
    QCOMPARE(keras.model.layers[1].pool[1], std::int64_t{2});
    QCOMPARE(keras.model.layers[1].stride[0], std::int64_t{0}); // default: the pool size
    QCOMPARE(keras.model.layers[2].units, std::int64_t{128});
}

void TestExperiment::layerTypeNames() {
    using mantissa::layer_type_from_name;
    QCOMPARE(layer_type_from_name("dense"), LayerType::Dense);
    QCOMPARE(layer_type_from_name("DENSE"), LayerType::Dense);
    QCOMPARE(layer_type_from_name("maxpool2d"), LayerType::MaxPool2D);
    QCOMPARE(layer_type_from_name("MaxPooling2D"), LayerType::MaxPool2D);
    QCOMPARE(layer_type_from_name("Conv2D"), LayerType::Conv2D);
    QCOMPARE(layer_type_from_name("convolution2d"), LayerType::Conv2D);
    QCOMPARE(layer_type_from_name("Dropout"), LayerType::Dropout);
    QCOMPARE(layer_type_from_name("activation"), LayerType::Activation);
    QCOMPARE(layer_type_from_name("Flatten"), LayerType::Flatten);
    for (LayerType t : {LayerType::Flatten, LayerType::Dense, LayerType::Activation,
                        LayerType::Dropout, LayerType::Conv2D, LayerType::MaxPool2D})
        QCOMPARE(layer_type_from_name(mantissa::layer_type_name(t)), t);
    const QString msg = errorOf([] { mantissa::layer_type_from_name("LSTM"); }, ErrorKind::Config);
    QVERIFY2(msg.contains("'LSTM'") && msg.contains("Flatten, Dense"), qPrintable(msg));
}

void TestExperiment::badField_data() {
    QTest::addColumn<QString>("pointer"); // a JSON pointer into kBase
    QTest::addColumn<QString>("value");   // JSON to put there; empty: remove the field
    QTest::addColumn<QString>("expected");

    QTest::newRow("wrong type")
        << "/batch_size"
        << R"("128")"
        << R"(batch_size: expected an integer from 1 to 1000000, got the string "128")";
    QTest::newRow("zero batch") << "/batch_size"
                                << "0"
                                << "batch_size: expected an integer from 1 to 1000000, got 0";
    QTest::newRow("huge batch") << "/batch_size"
                                << "1e12"
                                << "batch_size: expected an integer";
    QTest::newRow("zero epochs") << "/epochs"
                                 << "0"
                                 << "epochs: expected an integer from 1";
    QTest::newRow("unknown top-level field") << "/batchsize"
                                             << "64"
                                             << "batchsize: unknown field; valid fields";
    QTest::newRow("unknown layer field")
        << "/model/layers/1/unitz"
        << "64"
        << "model.layers[1].unitz: unknown field; valid fields for Dense: type, name, units, "
           "activation, dtype";
    QTest::newRow("field of another layer type") << "/model/layers/0/units"
                                                 << "64"
                                                 << "model.layers[0].units: unknown field";
    QTest::newRow("unknown layer type") << "/model/layers/1/type"
                                        << R"("Densee")"
                                        << "model.layers[1].type: unknown layer type 'Densee'";
    QTest::newRow("layer type not a string") << "/model/layers/1/type"
                                             << "3"
                                             << "model.layers[1].type: expected a string, got 3";
    QTest::newRow("negative units") << "/model/layers/1/units"
                                    << "-4"
                                    << "model.layers[1].units: expected a positive integer, got -4";
    QTest::newRow("fractional units") << "/model/layers/1/units"
                                      << "12.5"
                                      << "model.layers[1].units: expected";
    QTest::newRow("missing units") << "/model/layers/1/units"
                                   << ""
                                   << "model.layers[1]: missing field 'units'";
    QTest::newRow("unknown activation") << "/model/layers/1/activation"
                                        << R"("relu6")"
                                        << "model.layers[1].activation: unknown activation";
    QTest::newRow("bad kernel") << "/model/layers/2/kernel"
                                << "[3]"
                                << "model.layers[2].kernel: expected an integer or [height, width]";
    QTest::newRow("zero kernel") << "/model/layers/2/kernel"
                                 << "[3, 0]"
                                 << "model.layers[2].kernel[1]: expected a positive integer, got 0";
    QTest::newRow("zero strides") << "/model/layers/2/strides"
                                  << "0"
                                  << "model.layers[2].strides: expected a positive integer, got 0";
    QTest::newRow("bad padding") << "/model/layers/2/padding"
                                 << R"("full")"
                                 << R"(model.layers[2].padding: expected "valid" or "same")";
    QTest::newRow("dropout rate 1") << "/model/layers/1"
                                    << R"({"type": "Dropout", "rate": 1})"
                                    << "model.layers[1].rate: expected a number in [0, 1), got 1";
    QTest::newRow("unknown layer dtype") << "/model/layers/4/dtype"
                                         << R"("float12")"
                                         << "model.layers[4].dtype: unknown";
    QTest::newRow("duplicate layer names") << "/model/layers/1/name"
                                           << R"("softmax")"
                                           << "model.layers[4].name";
    QTest::newRow("unknown model field") << "/model/inputs"
                                         << "[28, 28]"
                                         << "model.inputs: unknown field";
    QTest::newRow("zero input dimension") << "/model/input/1"
                                          << "0"
                                          << "model.input[1]: expected a positive integer";
    QTest::newRow("missing model") << "/model"
                                   << ""
                                   << "model: missing";
    QTest::newRow("unknown policy") << "/policy"
                                    << R"("mixed_float12")"
                                    << "policy: unknown";
    QTest::newRow("bad loss-scale mode") << "/loss_scale/mode"
                                         << R"("sometimes")"
                                         << "loss_scale.mode: unknown loss scale mode 'sometimes'";
    QTest::newRow("negative initial scale") << "/loss_scale/initial"
                                            << "-1"
                                            << "loss_scale.initial must be";
    QTest::newRow("unknown loss-scale field") << "/loss_scale/floor"
                                              << "1"
                                              << "loss_scale.floor: unknown field";
    QTest::newRow("NaN learning rate as a string")
        << "/optimizer/learning_rate"
        << R"("NaN")"
        << R"(optimizer.learning_rate: expected a number, got the string "NaN")";
    QTest::newRow("negative learning rate") << "/optimizer/learning_rate"
                                            << "-0.1"
                                            << "optimizer.learning_rate must be";
    QTest::newRow("rho out of range") << "/optimizer/rho"
                                      << "1.5"
                                      << "optimizer.rho must be";
    QTest::newRow("option of another optimizer")
        << "/optimizer/nesterov"
        << "true"
        << "optimizer.nesterov: unknown field; valid fields for rmsprop";
    QTest::newRow("unknown optimizer") << "/optimizer/type"
                                       << R"("adagrad")"
                                       << "optimizer.type: unknown optimizer 'adagrad'";
    QTest::newRow("bool as string") << "/tf32"
                                    << R"("yes")"
                                    << R"(tf32: expected true or false, got the string "yes")";
    QTest::newRow("negative seed") << "/seed"
                                   << "-1"
                                   << "seed: expected a non-negative integer, got -1";
    QTest::newRow("bad device") << "/device"
                                << R"("gpu")"
                                << "device: expected";
    QTest::newRow("negative histogram_every")
        << "/histogram_every"
        << "-1"
        << "histogram_every: expected an integer >= 0, got -1";
    QTest::newRow("fractional histogram_every")
        << "/histogram_every"
        << "2.5"
        << "histogram_every: expected an integer >= 0, got 2.5";
    QTest::newRow("bad divergence policy") << "/on_divergence"
                                           << R"("maybe")"
                                           << "on_divergence: expected \"stop\" or \"continue\"";
    QTest::newRow("unknown dataset") << "/dataset"
                                     << R"("cifar10")"
                                     << "dataset: unknown dataset";
    QTest::newRow("newer format") << "/format_version"
                                  << "2"
                                  << "format_version: this file is format_version 2, written by "
                                     "a newer Mantissa";
    QTest::newRow("format version 0") << "/format_version"
                                      << "0"
                                      << "format_version: expected";
}

void TestExperiment::badField() {
    QFETCH(QString, pointer);
    QFETCH(QString, value);
    QFETCH(QString, expected);
    nlohmann::json j = nlohmann::json::parse(kBase);
    const nlohmann::json::json_pointer ptr(pointer.toStdString());
    if (value.isEmpty())
        j[ptr.parent_pointer()].erase(ptr.back());
    else
        j[ptr] = nlohmann::json::parse(value.toStdString());
    const std::string text = j.dump(2);
    const QString msg =
        errorOf([&] { mantissa::experiment_from_json(text, "test.json"); }, ErrorKind::Config);
    QVERIFY2(msg.startsWith("test.json: "), qPrintable(msg));
    QVERIFY2(msg.contains(expected), qPrintable(msg + "\n-- expected to contain: " + expected));
}

void TestExperiment::badText_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("missing comma") << "{\n  \"name\": \"x\"\n  \"epochs\": 3\n}"
                                   << "test.json: line 3, column 10: invalid JSON";
    QTest::newRow("trailing comma") << "{\"model\": {\"layers\": []},\n}"
                                    << "test.json: line 2, column 1: invalid JSON";
    QTest::newRow("unterminated") << "{\"model\": "
                                  << "test.json: line 1, column 11: invalid JSON";
    QTest::newRow("empty file") << ""
                                << "test.json: line 1, column 1: invalid JSON";
    QTest::newRow("huge learning rate")
        << "{\"model\": {\"layers\": []},\n \"optimizer\": {\"type\": \"adam\", "
           "\"learning_rate\": 1e999}}"
        << "test.json: line 2, column 49: invalid JSON: number overflow parsing '1e999'";
    QTest::newRow("top-level array") << "[1, 2]"
                                     << "test.json: expected a JSON object";
    QTest::newRow("duplicate field") << R"({"epochs": 3, "epochs": 4, "model": {"layers": []}})"
                                     << "test.json: field 'epochs' appears twice";
    // The depth guard of the shared strict reader (core/io/strict_json.h), once only lessons'.
    QTest::newRow("nested 100000 deep")
        << "{\"model\": " + QString("[").repeated(100000) + QString("]").repeated(100000) + "}"
        << "test.json: invalid JSON: it nests deeper than 64 levels";
}

void TestExperiment::badText() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const QString msg =
        errorOf([&] { mantissa::experiment_from_json(text.toStdString(), "test.json"); },
                ErrorKind::Config);
    QVERIFY2(msg.contains(expected), qPrintable(msg + "\n-- expected to contain: " + expected));
}

void TestExperiment::unreadableFile() {
    QTemporaryDir tmp;
    const std::string path = tmp.filePath("nope.json").toStdString();
    const QString msg = errorOf([&] { mantissa::load_experiment(path); }, ErrorKind::Io);
    QVERIFY2(msg.contains(QString::fromStdString(path)), qPrintable(msg));
}

QTEST_GUILESS_MAIN(TestExperiment)
#include "tst_experiment.moc"
