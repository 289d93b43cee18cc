// Export metadata: the architecture travels with the weights so a file alone is enough to rebuild,
// evaluate or convert the model (mantissa-cli export/eval without --config).
#include "core/records/trained_model.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/io/safetensors.h"
#include "core/text.h"

#ifndef MANTISSA_VERSION_STRING
#define MANTISSA_VERSION_STRING "unknown"
#endif

namespace mantissa {

std::string mantissa_version() {
    return MANTISSA_VERSION_STRING;
}

std::map<std::string, std::string> export_metadata(const TrainedModel& model) {
    const nlohmann::ordered_json experiment =
        nlohmann::ordered_json::parse(experiment_to_json(model.experiment));
    std::map<std::string, std::string> out;
    out["format"] = "mantissa";
    out["mantissa_version"] = mantissa_version();
    out["architecture"] = experiment.at("model").dump();
    out["experiment"] = experiment.dump();
    out["policy"] = model.experiment.policy;
    if (std::isfinite(model.test_accuracy)) out["test_accuracy"] = number_text(model.test_accuracy);
    if (std::isfinite(model.test_loss)) out["test_loss"] = number_text(model.test_loss);
    return out;
}

void apply_export_metadata(const std::map<std::string, std::string>& metadata,
                           const std::string& source, TrainedModel& model) {
    const auto experiment = metadata.find("experiment");
    if (experiment == metadata.end())
        throw Error(ErrorKind::Config,
                    source + ": no 'experiment' in the file's metadata (not written by Mantissa?); "
                             "pass the experiment with --config");
    model.experiment = experiment_from_json(experiment->second, source + " (metadata.experiment)");
    auto number = [&](const char* key) {
        const auto it = metadata.find(key);
        if (it == metadata.end()) return std::nan("");
        try {
            std::size_t used = 0;
            const double v = std::stod(it->second, &used);
            return used == it->second.size() ? v : std::nan("");
        } catch (const std::exception&) {
            return std::nan("");
        }
    };
    model.test_accuracy = number("test_accuracy");
    model.test_loss = number("test_loss");
}

void write_safetensors(const TrainedModel& model, const std::string& path,
                       std::optional<DType> dtype) {
    write_safetensors(model.weights, export_metadata(model), path, dtype);
}

TrainedModel load_trained_model(const std::string& path) {
    SafetensorsFile file = read_safetensors(path);
    TrainedModel model;
    apply_export_metadata(file.metadata, path, model);
    model.weights = std::move(file.weights);
    return model;
}

} // namespace mantissa
