// TrainedModel: what an export needs and an import gives back, independent of any backend: the
// experiment (architecture + policy), the named weights and the test metrics they reached.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "core/io/model_weights.h"
#include "core/train/experiment.h"

namespace mantissa {

struct TrainedModel {
    Experiment experiment; // model.input, model.layers and the policy the weights were trained in
    ModelWeights weights;
    double test_loss = std::nan("");     // over the 10,000 test images; NaN when not measured
    double test_accuracy = std::nan(""); // fraction in [0, 1]; NaN when not measured
};

// "0.1.0": the version written into every export's metadata.
std::string mantissa_version();

// The string -> string metadata every export carries (safetensors __metadata__, ONNX
// metadata_props): "format" "mantissa", "mantissa_version", "architecture" (the model JSON:
// input and layers), "experiment" (the whole experiment JSON), "policy", and, when measured,
// "test_accuracy" and "test_loss".
std::map<std::string, std::string> export_metadata(const TrainedModel& model);

// Reads back what export_metadata() wrote: the experiment and the test metrics (NaN when absent).
// Throws Error(Config) starting with `source` when the experiment JSON is missing or invalid.
void apply_export_metadata(const std::map<std::string, std::string>& metadata,
                           const std::string& source, TrainedModel& model);

// The model as safetensors: its weights (in their stored dtype, or all converted to `dtype`) with
// export_metadata(). Throws Error(Io) naming the path.
void write_safetensors(const TrainedModel& model, const std::string& path,
                       std::optional<DType> dtype = std::nullopt);

// read_safetensors() plus the experiment and test metrics from its metadata: the import the CLI's
// eval/export and the GUI use.
TrainedModel load_trained_model(const std::string& path);

} // namespace mantissa
