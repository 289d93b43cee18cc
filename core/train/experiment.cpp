// Experiment <-> JSON: a strict reader (unknown fields, wrong types and bad values are errors that
// name the field's path) and a writer whose output reads back to an identical Experiment.
#include "core/train/experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/io/strict_json.h"
#include "core/numeric/policy.h"
#include "core/text.h"

namespace mantissa {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Reading

// The experiment's fields on top of the shared field-path reader (core/io/strict_json.h).
class Reader : public JsonFieldReader {
public:
    using JsonFieldReader::JsonFieldReader;

    // Keras accepts `3` or `[3, 3]` for kernel, stride and pool sizes.
    void pair(const json& v, const std::string& path, std::int64_t out[2]) const {
        constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
        if (v.is_array()) {
            if (v.size() != 2)
                fail(path, "expected an integer or [height, width], got an array of " +
                               std::to_string(v.size()) + " values");
            out[0] = integer(v[0], path + "[0]", 1, kMax);
            out[1] = integer(v[1], path + "[1]", 1, kMax);
        } else if (v.is_number()) {
            out[0] = out[1] = integer(v, path, 1, kMax);
        } else {
            fail(path, "expected an integer or [height, width], got " + json_value_text(v));
        }
    }

    Experiment read(const json& root) const;
    // A schedule object in Keras's serialised form; sets `base` to its initial rate.
    LearningRateSchedule read_schedule(const json& v, const std::string& path, double& base) const;

private:
    LayerSpec read_layer(const json& v, const std::string& path) const;
    ModelSpec read_model(const json& v, const std::string& path) const;
    LossScaleConfig read_loss_scale(const json& v, const std::string& path) const;
    OptimizerConfig read_optimizer(const json& v, const std::string& path) const;
    RecipeOptions read_recipe(const json& v, const std::string& path) const;
};

// The fields each layer type takes, in the order the writer emits them.
std::vector<std::string> layer_fields(LayerType type) {
    switch (type) {
    case LayerType::Flatten:
        return {"type", "name", "dtype"};
    case LayerType::Dense:
        return {"type", "name", "units", "activation", "dtype"};
    case LayerType::Activation:
        return {"type", "name", "activation", "dtype"};
    case LayerType::Dropout:
        return {"type", "name", "rate", "dtype"};
    case LayerType::Conv2D:
        return {"type", "name", "filters", "kernel", "strides", "padding", "activation", "dtype"};
    case LayerType::MaxPool2D:
        return {"type", "name", "pool_size", "strides", "dtype"};
    case LayerType::BatchNormalization:
        return {"type", "name", "momentum", "epsilon", "dtype"};
    case LayerType::LayerNormalization:
        return {"type", "name", "epsilon", "dtype"};
    }
    return {};
}

// The fields each optimizer uses (Keras's argument names); the others would be silently ignored,
// so the reader rejects them.
std::vector<std::string> optimizer_fields(OptimizerType type) {
    switch (type) {
    case OptimizerType::SGD:
        return {"type", "convention", "learning_rate", "momentum", "nesterov"};
    case OptimizerType::RMSprop:
        return {"type", "convention", "learning_rate", "rho", "momentum", "epsilon", "centered"};
    case OptimizerType::Adam:
        return {"type", "convention", "learning_rate", "beta_1", "beta_2", "epsilon"};
    case OptimizerType::AdamW:
        return {"type",   "convention", "learning_rate", "beta_1",
                "beta_2", "epsilon",    "weight_decay"};
    }
    return {};
}

LayerSpec Reader::read_layer(const json& v, const std::string& path) const {
    object(v, path);
    if (!v.contains("type"))
        fail(path, "missing field 'type' (one of Flatten, Dense, Activation, Dropout, Conv2D, "
                   "MaxPool2D, BatchNormalization, LayerNormalization)");
    const std::string type_name = string(v["type"], path + ".type");
    LayerSpec layer;
    layer.type = named(path + ".type", [&] { return layer_type_from_name(type_name); });
    check_fields(v, path, layer_fields(layer.type),
                 std::string("for ") + layer_type_name(layer.type));

    auto require = [&](const char* key) {
        if (!v.contains(key))
            fail(path, std::string("missing field '") + key + "' (required for " +
                           layer_type_name(layer.type) + ")");
    };
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    // Ranges are left to validate_experiment() so that programmatic specs get the same checks;
    // here only what cannot be stored (a non-integer, a value beyond int64) is rejected.
    constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
    if (v.contains("name")) layer.name = string(v["name"], path + ".name");
    if (v.contains("dtype")) {
        const std::string dtype = string(v["dtype"], path + ".dtype");
        named(path + ".dtype", [&] { return policy_from_name(dtype); });
        layer.dtype = dtype;
    }
    if (v.contains("activation")) {
        const std::string act = string(v["activation"], path + ".activation");
        layer.activation = named(path + ".activation", [&] { return activation_from_name(act); });
    }
    switch (layer.type) {
    case LayerType::Flatten:
        break;
    case LayerType::Dense:
        require("units");
        layer.units = integer(v["units"], path + ".units", kMin, kMax);
        break;
    case LayerType::Activation:
        require("activation");
        break;
    case LayerType::Dropout:
        require("rate");
        layer.rate = number(v["rate"], path + ".rate");
        break;
    case LayerType::Conv2D:
        require("filters");
        require("kernel");
        layer.filters = integer(v["filters"], path + ".filters", kMin, kMax);
        pair(v["kernel"], path + ".kernel", layer.kernel);
        if (v.contains("strides")) pair(v["strides"], path + ".strides", layer.stride);
        if (v.contains("padding")) {
            layer.padding = string(v["padding"], path + ".padding");
            if (layer.padding != "valid" && layer.padding != "same")
                fail(path + ".padding",
                     "expected \"valid\" or \"same\", got " + json_value_text(v["padding"]));
        }
        break;
    case LayerType::MaxPool2D:
        if (v.contains("pool_size")) pair(v["pool_size"], path + ".pool_size", layer.pool);
        // Omitted strides stay 0, which means the pool size (Keras: non-overlapping windows).
        if (v.contains("strides")) pair(v["strides"], path + ".strides", layer.stride);
        break;
    case LayerType::BatchNormalization:
        if (v.contains("momentum")) layer.momentum = number(v["momentum"], path + ".momentum");
        [[fallthrough]];
    case LayerType::LayerNormalization:
        if (v.contains("epsilon")) layer.epsilon = number(v["epsilon"], path + ".epsilon");
        break;
    }
    return layer;
}

ModelSpec Reader::read_model(const json& v, const std::string& path) const {
    object(v, path);
    check_fields(v, path, {"input", "layers"}, "");
    ModelSpec model;
    if (v.contains("input")) {
        const json& in = array(v["input"], path + ".input");
        model.input.clear();
        for (std::size_t i = 0; i < in.size(); ++i)
            model.input.push_back(integer(in[i], path + ".input[" + std::to_string(i) + "]",
                                          std::numeric_limits<std::int64_t>::min(),
                                          std::numeric_limits<std::int64_t>::max()));
    }
    if (!v.contains("layers")) fail(path, "missing field 'layers' (the layer stack, a list)");
    const json& layers = array(v["layers"], path + ".layers");
    for (std::size_t i = 0; i < layers.size(); ++i)
        model.layers.push_back(read_layer(layers[i], path + ".layers[" + std::to_string(i) + "]"));
    return model;
}

LossScaleConfig Reader::read_loss_scale(const json& v, const std::string& path) const {
    object(v, path);
    check_fields(v, path, {"mode", "initial", "growth_interval", "factor", "min"}, "");
    LossScaleConfig config;
    if (v.contains("mode")) {
        const std::string mode = string(v["mode"], path + ".mode");
        config.mode = named(path + ".mode", [&] { return loss_scale_mode_from_name(mode); });
    }
    if (v.contains("initial")) config.initial = number(v["initial"], path + ".initial");
    if (v.contains("growth_interval"))
        config.growth_interval = static_cast<int>(
            integer(v["growth_interval"], path + ".growth_interval",
                    std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
    if (v.contains("factor")) config.factor = number(v["factor"], path + ".factor");
    if (v.contains("min")) config.min = number(v["min"], path + ".min");
    return config;
}

OptimizerConfig Reader::read_optimizer(const json& v, const std::string& path) const {
    object(v, path);
    if (!v.contains("type")) fail(path, "missing field 'type' (one of sgd, rmsprop, adam, adamw)");
    const std::string type_name = string(v["type"], path + ".type");
    const OptimizerType type =
        named(path + ".type", [&] { return optimizer_type_from_name(type_name); });
    check_fields(v, path, optimizer_fields(type), std::string("for ") + optimizer_type_name(type));
    OptimizerConvention convention = OptimizerConvention::Keras;
    if (v.contains("convention")) {
        const std::string name = string(v["convention"], path + ".convention");
        convention =
            named(path + ".convention", [&] { return optimizer_convention_from_name(name); });
    }
    // Omitted fields take the convention's defaults for this optimizer (Keras: SGD's learning
    // rate 0.01; PyTorch: RMSprop's 0.01 with rho (alpha) 0.99, epsilon 1e-8).
    OptimizerConfig config = optimizer_defaults(type, convention);
    auto num = [&](const char* key, double& out) {
        if (v.contains(key)) out = number(v[key], path + "." + key);
    };
    if (v.contains("learning_rate") && v["learning_rate"].is_object())
        config.schedule =
            read_schedule(v["learning_rate"], path + ".learning_rate", config.learning_rate);
    else
        num("learning_rate", config.learning_rate);
    num("momentum", config.momentum);
    num("rho", config.rho);
    num("beta_1", config.beta_1);
    num("beta_2", config.beta_2);
    num("epsilon", config.epsilon);
    num("weight_decay", config.weight_decay);
    if (v.contains("nesterov")) config.nesterov = boolean(v["nesterov"], path + ".nesterov");
    if (v.contains("centered")) config.centered = boolean(v["centered"], path + ".centered");
    return config;
}

// The fields each schedule's "config" takes (Keras's names; OneCycle: PyTorch's OneCycleLR's).
// The first is the base rate: the optimizer's learning_rate.
std::vector<std::string> schedule_fields(ScheduleKind kind) {
    switch (kind) {
    case ScheduleKind::Constant:
        return {"learning_rate"};
    case ScheduleKind::ExponentialDecay:
        return {"initial_learning_rate", "decay_steps", "decay_rate", "staircase", "name"};
    case ScheduleKind::PiecewiseConstantDecay:
        return {"boundaries", "values", "name"};
    case ScheduleKind::CosineDecay:
        return {"initial_learning_rate", "decay_steps",  "alpha",
                "warmup_target",         "warmup_steps", "name"};
    case ScheduleKind::PolynomialDecay:
        return {
            "initial_learning_rate", "decay_steps", "end_learning_rate", "power", "cycle", "name"};
    case ScheduleKind::OneCycle:
        return {"max_lr",     "total_steps",      "pct_start",  "anneal_strategy",
                "div_factor", "final_div_factor", "three_phase"};
    }
    return {};
}

LearningRateSchedule Reader::read_schedule(const json& v, const std::string& path,
                                           double& base) const {
    check_fields(v, path, {"class_name", "config", "module", "registered_name"},
                 "of a learning-rate schedule (Keras's serialised form: {\"class_name\": "
                 "\"CosineDecay\", \"config\": {...}})");
    if (!v.contains("class_name"))
        fail(path, "missing field 'class_name' (ExponentialDecay, PiecewiseConstantDecay, "
                   "CosineDecay, PolynomialDecay or OneCycle)");
    const std::string name = string(v["class_name"], path + ".class_name");
    const ScheduleKind kind =
        named(path + ".class_name", [&] { return schedule_kind_from_name(name); });
    LearningRateSchedule s = default_schedule(kind);
    const std::string cpath = path + ".config";
    const json empty = json::object();
    const json& c = v.contains("config") ? object(v["config"], cpath) : empty;
    check_fields(c, cpath, schedule_fields(kind), std::string("for ") + schedule_kind_name(kind));
    const auto num = [&](const char* key, double& out) {
        if (c.contains(key)) out = number(c[key], cpath + "." + key);
    };
    const auto flag = [&](const char* key, bool& out) {
        if (c.contains(key)) out = boolean(c[key], cpath + "." + key);
    };
    const auto required = [&](const char* key) {
        if (!c.contains(key)) fail(cpath, std::string("missing field '") + key + "'");
    };
    const std::string first = schedule_fields(kind).front();
    if (kind != ScheduleKind::PiecewiseConstantDecay && kind != ScheduleKind::Constant) {
        required(first.c_str());
        base = number(c[first], cpath + "." + first);
    }
    switch (kind) {
    case ScheduleKind::Constant:
        if (c.contains("learning_rate"))
            base = number(c["learning_rate"], cpath + ".learning_rate");
        break;
    case ScheduleKind::ExponentialDecay:
        required("decay_steps");
        required("decay_rate");
        num("decay_steps", s.decay_steps);
        num("decay_rate", s.decay_rate);
        flag("staircase", s.staircase);
        break;
    case ScheduleKind::PiecewiseConstantDecay: {
        required("boundaries");
        required("values");
        const json& b = array(c["boundaries"], cpath + ".boundaries");
        const json& values = array(c["values"], cpath + ".values");
        if (b.empty() || b.size() > static_cast<std::size_t>(kMaxScheduleBoundaries))
            fail(cpath + ".boundaries", "expected 1 to " + std::to_string(kMaxScheduleBoundaries) +
                                            " steps, got " + std::to_string(b.size()));
        if (values.size() != b.size() + 1)
            fail(cpath + ".values", "expected one more value than boundaries (" +
                                        std::to_string(b.size() + 1) + "), got " +
                                        std::to_string(values.size()));
        s.boundary_count = static_cast<int>(b.size());
        for (std::size_t i = 0; i < b.size(); ++i)
            s.boundaries[i] = number(b[i], element(cpath + ".boundaries", i));
        for (std::size_t i = 0; i < values.size(); ++i)
            s.values[i] = number(values[i], element(cpath + ".values", i));
        base = s.values[0];
        break;
    }
    case ScheduleKind::CosineDecay:
        required("decay_steps");
        num("decay_steps", s.decay_steps);
        num("alpha", s.alpha);
        num("warmup_steps", s.warmup_steps);
        if (c.contains("warmup_target") && !c["warmup_target"].is_null()) {
            s.has_warmup_target = true;
            num("warmup_target", s.warmup_target);
        }
        break;
    case ScheduleKind::PolynomialDecay:
        required("decay_steps");
        num("decay_steps", s.decay_steps);
        num("end_learning_rate", s.end_learning_rate);
        num("power", s.power);
        flag("cycle", s.cycle);
        break;
    case ScheduleKind::OneCycle:
        if (c.contains("total_steps") && !c["total_steps"].is_null())
            s.total_steps = integer(c["total_steps"], cpath + ".total_steps", 0,
                                    std::numeric_limits<std::int64_t>::max());
        num("pct_start", s.pct_start);
        num("div_factor", s.div_factor);
        num("final_div_factor", s.final_div_factor);
        flag("three_phase", s.three_phase);
        if (c.contains("anneal_strategy")) {
            const std::string a = string(c["anneal_strategy"], cpath + ".anneal_strategy");
            if (a != "cos" && a != "linear")
                fail(cpath + ".anneal_strategy",
                     "expected \"cos\" or \"linear\", got \"" + a + "\"");
            s.linear_anneal = a == "linear";
        }
        break;
    }
    return s; // ranges: validate_optimizer
}

// The frontier policies' options (core/numeric/quant_recipe): checked against the policy later.
RecipeOptions Reader::read_recipe(const json& v, const std::string& path) const {
    object(v, path);
    check_fields(v, path,
                 {"kind", "fp8_format", "history_len", "margin", "amax_compute", "scale_rule",
                  "weight_2d", "stochastic_gradients", "seed", "hadamard", "gemm"},
                 "of a recipe");
    RecipeOptions o;
    auto str = [&](const char* key, std::optional<std::string>& out) {
        if (v.contains(key)) out = string(v[key], path + "." + key);
    };
    auto num = [&](const char* key, std::optional<int>& out) {
        if (v.contains(key))
            out =
                static_cast<int>(integer(v[key], path + "." + key, std::numeric_limits<int>::min(),
                                         std::numeric_limits<int>::max()));
    };
    auto flag = [&](const char* key, std::optional<bool>& out) {
        if (v.contains(key)) out = boolean(v[key], path + "." + key);
    };
    str("kind", o.kind);
    str("fp8_format", o.fp8_format);
    num("history_len", o.history_len);
    num("margin", o.margin);
    str("amax_compute", o.amax_compute);
    str("scale_rule", o.scale_rule);
    flag("weight_2d", o.weight_2d);
    flag("stochastic_gradients", o.stochastic_gradients);
    flag("hadamard", o.hadamard);
    str("gemm", o.gemm);
    if (v.contains("seed")) o.seed = unsigned_integer(v["seed"], path + ".seed");
    return o;
}

Experiment Reader::read(const json& root) const {
    if (!root.is_object())
        throw Error(ErrorKind::Config, source() +
                                           ": expected a JSON object at the top level, got " +
                                           json_value_text(root));
    check_fields(root, "",
                 {"format_version", "name", "dataset", "model", "policy", "loss_scale", "optimizer",
                  "batch_size", "epochs", "seed", "device", "tf32", "graph", "max_steps",
                  "histogram_every", "on_divergence", "recipe", "quant_every"},
                 "of an experiment");
    // The version comes first: a newer file's other fields may mean something we cannot know.
    if (root.contains("format_version")) {
        const std::int64_t version = integer(root["format_version"], "format_version", 1,
                                             std::numeric_limits<std::int64_t>::max());
        if (version > kExperimentFormatVersion)
            fail("format_version", "this file is format_version " + std::to_string(version) +
                                       ", written by a newer Mantissa; this version reads "
                                       "format_version " +
                                       std::to_string(kExperimentFormatVersion) +
                                       ". Update Mantissa to open it.");
    }
    Experiment e;
    if (root.contains("name")) e.name = string(root["name"], "name");
    if (root.contains("dataset")) e.dataset = string(root["dataset"], "dataset");
    if (!root.contains("model"))
        fail("model", "missing; an experiment needs a model with an input shape and layers");
    e.model = read_model(root["model"], "model");
    if (root.contains("policy")) {
        e.policy = string(root["policy"], "policy");
        named("policy", [&] { return policy_from_name(e.policy); });
    }
    if (root.contains("recipe")) e.recipe = read_recipe(root["recipe"], "recipe");
    if (root.contains("quant_every"))
        e.quant_every = integer(root["quant_every"], "quant_every", 0,
                                std::numeric_limits<std::int64_t>::max());
    if (root.contains("loss_scale"))
        e.loss_scale = read_loss_scale(root["loss_scale"], "loss_scale");
    if (root.contains("optimizer")) e.optimizer = read_optimizer(root["optimizer"], "optimizer");
    if (root.contains("batch_size"))
        e.batch_size = integer(root["batch_size"], "batch_size", 1, 1000000);
    if (root.contains("epochs"))
        e.epochs = static_cast<int>(integer(root["epochs"], "epochs", 1, 10000));
    if (root.contains("seed")) e.seed = unsigned_integer(root["seed"], "seed");
    if (root.contains("device")) e.device = string(root["device"], "device");
    if (root.contains("tf32")) e.tf32 = boolean(root["tf32"], "tf32");
    if (root.contains("graph")) e.graph = boolean(root["graph"], "graph");
    if (root.contains("max_steps"))
        e.max_steps =
            integer(root["max_steps"], "max_steps", 0, std::numeric_limits<std::int64_t>::max());
    if (root.contains("histogram_every"))
        e.histogram_every = integer(root["histogram_every"], "histogram_every", 0,
                                    std::numeric_limits<std::int64_t>::max());
    if (root.contains("on_divergence")) {
        const std::string d = string(root["on_divergence"], "on_divergence");
        if (d == "stop")
            e.on_divergence = DivergencePolicy::Stop;
        else if (d == "continue")
            e.on_divergence = DivergencePolicy::Continue;
        else
            fail("on_divergence", "expected \"stop\" or \"continue\", got " +
                                      json_value_text(root["on_divergence"]));
    }
    try {
        validate_experiment(e);
    } catch (const Error& err) {
        throw Error(ErrorKind::Config, source() + ": " + err.what());
    }
    return e;
}

// ---------------------------------------------------------------------------------------------
// Validation messages, shared by the reader and by programmatic experiments.

[[noreturn]] void invalid(const std::string& path, const std::string& what) {
    throw Error(ErrorKind::Config, path + ": " + what);
}

void check_positive(const std::string& path, std::int64_t v) {
    if (v <= 0) invalid(path, "expected a positive integer, got " + std::to_string(v));
}

bool valid_device(const std::string& d) {
    if (d == "auto" || d == "cpu" || d == "cuda") return true;
    if (d.rfind("cuda:", 0) != 0 || d.size() == 5 || d.size() > 8) return false;
    for (std::size_t i = 5; i < d.size(); ++i)
        if (d[i] < '0' || d[i] > '9') return false;
    return true;
}

void validate_layer(const LayerSpec& l, const std::string& path) {
    // allow_default: {0, 0} is the layer's default (strides: 1 for Conv2D, the pool size for
    // MaxPool2D), so a spec built in code need not spell it out.
    auto pair_positive = [&](const char* field, const std::int64_t v[2],
                             bool allow_default = false) {
        if (allow_default && v[0] == 0 && v[1] == 0) return;
        for (int i = 0; i < 2; ++i)
            if (v[i] <= 0)
                invalid(path + "." + field, "expected positive sizes, got [" +
                                                std::to_string(v[0]) + ", " + std::to_string(v[1]) +
                                                "]");
    };
    if (l.dtype) {
        try {
            policy_from_name(*l.dtype);
        } catch (const Error& e) {
            invalid(path + ".dtype", e.what());
        }
    }
    switch (l.type) {
    case LayerType::Flatten:
    case LayerType::Activation:
        break;
    case LayerType::Dense:
        check_positive(path + ".units", l.units);
        break;
    case LayerType::Dropout:
        if (!(l.rate >= 0.0 && l.rate < 1.0))
            invalid(path + ".rate", "expected a number in [0, 1), got " + number_text(l.rate));
        break;
    case LayerType::Conv2D:
        check_positive(path + ".filters", l.filters);
        pair_positive("kernel", l.kernel);
        pair_positive("strides", l.stride, true);
        if (l.padding != "valid" && l.padding != "same")
            invalid(path + ".padding", "expected \"valid\" or \"same\", got \"" + l.padding + "\"");
        break;
    case LayerType::MaxPool2D:
        pair_positive("pool_size", l.pool);
        pair_positive("strides", l.stride, true);
        break;
    case LayerType::BatchNormalization:
        if (!(l.momentum >= 0.0 && l.momentum < 1.0))
            invalid(path + ".momentum", "expected a number in [0, 1), got " +
                                            number_text(l.momentum) +
                                            " (Keras's momentum: 0.99 keeps 99% of the moving "
                                            "statistics each step)");
        [[fallthrough]];
    case LayerType::LayerNormalization:
        if (!(l.epsilon > 0.0))
            invalid(path + ".epsilon", "expected a number > 0, got " + number_text(l.epsilon) +
                                           " (it keeps 1/sqrt(variance + epsilon) finite)");
        break;
    }
}

// ---------------------------------------------------------------------------------------------
// Writing

using ojson = nlohmann::ordered_json;

ojson pair_json(const std::int64_t v[2]) {
    return ojson::array({v[0], v[1]});
}

// Strides {0, 0} mean "the default" and are written by leaving the field out, as a user would.
bool has_stride(const LayerSpec& l) {
    return l.stride[0] != 0 || l.stride[1] != 0;
}

ojson layer_json(const LayerSpec& l) {
    ojson j;
    j["type"] = layer_type_name(l.type);
    if (!l.name.empty()) j["name"] = l.name;
    switch (l.type) {
    case LayerType::Flatten:
        break;
    case LayerType::Dense:
        j["units"] = l.units;
        j["activation"] = activation_name(l.activation);
        break;
    case LayerType::Activation:
        j["activation"] = activation_name(l.activation);
        break;
    case LayerType::Dropout:
        j["rate"] = l.rate;
        break;
    case LayerType::Conv2D:
        j["filters"] = l.filters;
        j["kernel"] = pair_json(l.kernel);
        if (has_stride(l)) j["strides"] = pair_json(l.stride);
        j["padding"] = l.padding;
        j["activation"] = activation_name(l.activation);
        break;
    case LayerType::MaxPool2D:
        j["pool_size"] = pair_json(l.pool);
        if (has_stride(l)) j["strides"] = pair_json(l.stride);
        break;
    case LayerType::BatchNormalization:
        j["momentum"] = l.momentum;
        j["epsilon"] = l.epsilon;
        break;
    case LayerType::LayerNormalization:
        j["epsilon"] = l.epsilon;
        break;
    }
    if (l.dtype) j["dtype"] = *l.dtype;
    return j;
}

// Keras's serialised form: {"class_name": "CosineDecay", "config": {...}}.
ojson schedule_json(const LearningRateSchedule& s, double base) {
    ojson c;
    switch (s.kind) {
    case ScheduleKind::Constant:
        c["learning_rate"] = base;
        break;
    case ScheduleKind::ExponentialDecay:
        c["initial_learning_rate"] = base;
        c["decay_steps"] = s.decay_steps;
        c["decay_rate"] = s.decay_rate;
        c["staircase"] = s.staircase;
        break;
    case ScheduleKind::PiecewiseConstantDecay: {
        ojson b = ojson::array(), values = ojson::array();
        for (int i = 0; i < s.boundary_count; ++i) b.push_back(s.boundaries[i]);
        for (int i = 0; i <= s.boundary_count; ++i) values.push_back(s.values[i]);
        c["boundaries"] = b;
        c["values"] = values;
        break;
    }
    case ScheduleKind::CosineDecay:
        c["initial_learning_rate"] = base;
        c["decay_steps"] = s.decay_steps;
        c["alpha"] = s.alpha;
        c["warmup_target"] = s.has_warmup_target ? ojson(s.warmup_target) : ojson(nullptr);
        c["warmup_steps"] = s.warmup_steps;
        break;
    case ScheduleKind::PolynomialDecay:
        c["initial_learning_rate"] = base;
        c["decay_steps"] = s.decay_steps;
        c["end_learning_rate"] = s.end_learning_rate;
        c["power"] = s.power;
        c["cycle"] = s.cycle;
        break;
    case ScheduleKind::OneCycle:
        c["max_lr"] = base;
        c["total_steps"] = s.total_steps;
        c["pct_start"] = s.pct_start;
        c["anneal_strategy"] = s.linear_anneal ? "linear" : "cos";
        c["div_factor"] = s.div_factor;
        c["final_div_factor"] = s.final_div_factor;
        c["three_phase"] = s.three_phase;
        break;
    }
    return {{"class_name", schedule_kind_name(s.kind)}, {"config", c}};
}

ojson optimizer_json(const OptimizerConfig& o) {
    ojson j;
    for (const std::string& key : optimizer_fields(o.type)) {
        if (key == "type")
            j[key] = optimizer_type_name(o.type);
        else if (key == "convention") {
            // Keras is the format's default: files written before conventions read the same.
            if (o.convention != OptimizerConvention::Keras)
                j[key] = optimizer_convention_name(o.convention);
        } else if (key == "learning_rate")
            j[key] = o.schedule.kind == ScheduleKind::Constant
                         ? ojson(o.learning_rate)
                         : schedule_json(o.schedule, o.learning_rate);
        else if (key == "momentum")
            j[key] = o.momentum;
        else if (key == "nesterov")
            j[key] = o.nesterov;
        else if (key == "rho")
            j[key] = o.rho;
        else if (key == "centered")
            j[key] = o.centered;
        else if (key == "beta_1")
            j[key] = o.beta_1;
        else if (key == "beta_2")
            j[key] = o.beta_2;
        else if (key == "epsilon")
            j[key] = o.epsilon;
        else if (key == "weight_decay")
            j[key] = o.weight_decay;
    }
    return j;
}

} // namespace

Experiment experiment_from_json(const std::string& text, const std::string& source) {
    const json root = parse_strict_json(text, source);
    try {
        return Reader(source).read(root);
    } catch (const json::exception& e) {
        // Every access is type-checked first; this is a last line of defence, not a message path.
        throw Error(ErrorKind::Config, source + ": " + e.what());
    }
}

Experiment load_experiment(const std::string& path) {
    return experiment_from_json(read_file(path), path);
}

LearningRateSchedule schedule_from_spec(const std::string& spec, double& base) {
    const std::size_t colon = spec.find(':');
    const std::string name = spec.substr(0, colon);
    const ScheduleKind kind = schedule_kind_from_name(name);
    json config = json::object();
    if (kind != ScheduleKind::PiecewiseConstantDecay) config[schedule_fields(kind).front()] = base;
    // A value: true/false, a number, a '/'-separated list of numbers, or a word ("linear").
    const auto value = [&](const std::string& key, const std::string& text) -> json {
        if (text == "true" || text == "false") return text == "true";
        const auto parse_number = [&](const std::string& piece) -> std::optional<double> {
            char* end = nullptr;
            const double v = std::strtod(piece.c_str(), &end);
            if (piece.empty() || *end != '\0') return std::nullopt;
            return v;
        };
        if (text.find('/') != std::string::npos || key == "boundaries" || key == "values") {
            json list = json::array();
            std::size_t start = 0;
            while (start <= text.size()) {
                const std::size_t slash = std::min(text.find('/', start), text.size());
                const std::string piece = text.substr(start, slash - start);
                const std::optional<double> v = parse_number(piece);
                if (!v)
                    throw Error(ErrorKind::Config,
                                name + ": " + key + ": expected numbers separated by '/', got '" +
                                    text + "'");
                list.push_back(*v);
                start = slash + 1;
            }
            return list;
        }
        if (const std::optional<double> v = parse_number(text)) {
            if (key == "total_steps") return static_cast<std::int64_t>(*v);
            return *v;
        }
        return text;
    };
    if (colon != std::string::npos) {
        std::size_t start = colon + 1;
        while (start < spec.size()) {
            const std::size_t comma = std::min(spec.find(',', start), spec.size());
            const std::string item = spec.substr(start, comma - start);
            const std::size_t eq = item.find('=');
            if (eq == std::string::npos || eq == 0)
                throw Error(ErrorKind::Config, name + ": expected key=value, got '" + item + "'");
            const std::string key = item.substr(0, eq);
            config[key] = value(key, item.substr(eq + 1));
            start = comma + 1;
        }
    }
    if (kind == ScheduleKind::Constant) {
        if (config.contains("learning_rate")) {
            if (!config["learning_rate"].is_number())
                throw Error(ErrorKind::Config, "Constant: learning_rate: expected a number");
            base = config["learning_rate"].get<double>();
        }
        return LearningRateSchedule{};
    }
    const json object = {{"class_name", schedule_kind_name(kind)}, {"config", config}};
    LearningRateSchedule schedule;
    try {
        schedule = Reader("").read_schedule(object, name, base);
    } catch (const Error& e) {
        // The reader prefixes its (here empty) source: the caller names the option instead.
        std::string message = e.what();
        if (message.rfind(": ", 0) == 0) message.erase(0, 2);
        throw Error(ErrorKind::Config, message);
    }
    validate_schedule(schedule, name);
    return schedule;
}

std::string schedule_options_text(const LearningRateSchedule& schedule) {
    const ojson j = schedule_json(schedule, 0.0)["config"];
    const std::string base_key = schedule_fields(schedule.kind).front();
    std::string text;
    for (const auto& [key, value] : j.items()) {
        if (key == base_key && schedule.kind != ScheduleKind::PiecewiseConstantDecay) continue;
        if (value.is_null()) continue; // CosineDecay without warmup_target
        std::string v;
        if (value.is_array()) {
            for (const auto& item : value)
                v += (v.empty() ? "" : "/") + number_text(item.get<double>());
        } else if (value.is_boolean()) {
            v = value.get<bool>() ? "true" : "false";
        } else if (value.is_string()) {
            v = value.get<std::string>();
        } else if (value.is_number_integer()) {
            v = std::to_string(value.get<std::int64_t>());
        } else {
            v = number_text(value.get<double>());
        }
        text += (text.empty() ? "" : ",") + key + "=" + v;
    }
    return text;
}

std::string experiment_to_json(const Experiment& e) {
    ojson j;
    j["format_version"] = kExperimentFormatVersion;
    j["name"] = e.name;
    j["dataset"] = e.dataset;
    ojson layers = ojson::array();
    for (const LayerSpec& l : e.model.layers) layers.push_back(layer_json(l));
    j["model"] = {{"input", e.model.input}, {"layers", layers}};
    j["policy"] = e.policy;
    if (e.recipe) {
        const RecipeOptions& o = *e.recipe;
        ojson r = ojson::object();
        if (o.kind) r["kind"] = *o.kind;
        if (o.fp8_format) r["fp8_format"] = *o.fp8_format;
        if (o.history_len) r["history_len"] = *o.history_len;
        if (o.margin) r["margin"] = *o.margin;
        if (o.amax_compute) r["amax_compute"] = *o.amax_compute;
        if (o.scale_rule) r["scale_rule"] = *o.scale_rule;
        if (o.weight_2d) r["weight_2d"] = *o.weight_2d;
        if (o.stochastic_gradients) r["stochastic_gradients"] = *o.stochastic_gradients;
        if (o.seed) r["seed"] = *o.seed;
        if (o.hadamard) r["hadamard"] = *o.hadamard;
        if (o.gemm) r["gemm"] = *o.gemm;
        j["recipe"] = r;
    }
    j["loss_scale"] = {{"mode", loss_scale_mode_name(e.loss_scale.mode)},
                       {"initial", e.loss_scale.initial},
                       {"growth_interval", e.loss_scale.growth_interval},
                       {"factor", e.loss_scale.factor},
                       {"min", e.loss_scale.min}};
    j["optimizer"] = optimizer_json(e.optimizer);
    j["batch_size"] = e.batch_size;
    j["epochs"] = e.epochs;
    j["seed"] = e.seed;
    j["device"] = e.device;
    j["tf32"] = e.tf32;
    j["graph"] = e.graph;
    j["max_steps"] = e.max_steps;
    j["histogram_every"] = e.histogram_every;
    if (e.quant_every != 50) j["quant_every"] = e.quant_every;
    j["on_divergence"] = e.on_divergence == DivergencePolicy::Stop ? "stop" : "continue";
    return j.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

void save_experiment(const Experiment& experiment, const std::string& path) {
    write_file_atomic(path, experiment_to_json(experiment));
}

void validate_experiment(const Experiment& e) {
    if (e.dataset != "mnist")
        invalid("dataset", "unknown dataset \"" + e.dataset + "\"; valid: mnist");
    if (e.model.input.empty() || e.model.input.size() > 3)
        invalid("model.input", "expected 1 to 3 dimensions (height, width, channels), got " +
                                   std::to_string(e.model.input.size()));
    for (std::size_t i = 0; i < e.model.input.size(); ++i)
        check_positive("model.input[" + std::to_string(i) + "]", e.model.input[i]);
    std::set<std::string> names;
    for (std::size_t i = 0; i < e.model.layers.size(); ++i) {
        const std::string path = "model.layers[" + std::to_string(i) + "]";
        const LayerSpec& l = e.model.layers[i];
        validate_layer(l, path);
        if (!l.name.empty() && !names.insert(l.name).second)
            invalid(path + ".name", "\"" + l.name + "\" names two layers; names must be unique");
    }
    try {
        policy_from_name(e.policy);
    } catch (const Error& err) {
        invalid("policy", err.what());
    }
    // make_recipe names its fields ("recipe.history_len: must be ≥ 1").
    if (e.recipe) policy_with_recipe(e.policy, e.recipe);
    if (e.quant_every < 0)
        invalid("quant_every",
                "expected 0 (off) or a positive integer, got " + std::to_string(e.quant_every));
    // Both validators name their fields ("loss_scale.initial ...", "optimizer.rho ...").
    validate_loss_scale(e.loss_scale);
    validate_optimizer(e.optimizer);
    if (e.batch_size < 1 || e.batch_size > 1000000)
        invalid("batch_size",
                "expected an integer from 1 to 1000000, got " + std::to_string(e.batch_size));
    if (e.epochs < 1 || e.epochs > 10000)
        invalid("epochs", "expected an integer from 1 to 10000, got " + std::to_string(e.epochs));
    if (e.max_steps < 0)
        invalid("max_steps",
                "expected 0 (no limit) or a positive integer, got " + std::to_string(e.max_steps));
    if (e.histogram_every < 0)
        invalid("histogram_every",
                "expected 0 (off) or a positive integer, got " + std::to_string(e.histogram_every));
    if (!valid_device(e.device))
        invalid("device",
                "expected \"auto\", \"cpu\", \"cuda\" or \"cuda:N\", got \"" + e.device + "\"");
}

} // namespace mantissa
