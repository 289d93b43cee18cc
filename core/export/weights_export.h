// One entry point for saving trained weights in any supported format, chosen by the file's
// extension: what `mantissa-cli train --export`, `mantissa-cli export` and the app call.
#pragma once

#include <optional>
#include <string>

#include "core/records/trained_model.h"

namespace mantissa {

class Trainer;

enum class WeightsFormat { Safetensors, Onnx, Npz };

const char* weights_format_name(WeightsFormat format); // "safetensors", "ONNX", "NPZ"
// ".safetensors", ".onnx" or ".npz" (any case). Throws Error(InvalidArgument) naming the path and
// the extensions it knows.
WeightsFormat weights_format_for_path(const std::string& path);

struct ExportOptions {
    // nullopt: safetensors and NPZ keep the stored (variable) dtype, ONNX writes float32.
    // Otherwise every tensor is converted (safetensors: float64/32/16, bfloat16, float8;
    // NPZ: float64/32/16; ONNX: float32/16).
    std::optional<DType> dtype;
};

// Writes `model` to `path` atomically in the format its extension names.
void export_weights(const TrainedModel& model, const std::string& path,
                    const ExportOptions& options = {});

// The trainer's current weights (float32 masters under mixed policies) with its experiment and,
// when given, the test metrics to record in the file's metadata. Call it on the thread that owns
// the trainer, between runs or after one.
TrainedModel trained_model(Trainer& trainer, double test_loss = std::nan(""),
                           double test_accuracy = std::nan(""));

} // namespace mantissa
