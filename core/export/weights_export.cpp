// Dispatch by extension, so every caller (CLI flags, the app's save dialog) offers the same formats
// with the same errors.
#include "core/export/weights_export.h"

#include "core/error.h"
#include "core/export/onnx_export.h"
#include "core/io/npz.h"
#include "core/records/trained_model.h"
#include "core/text.h"
#include "core/train/trainer.h"

namespace mantissa {

const char* weights_format_name(WeightsFormat format) {
    switch (format) {
    case WeightsFormat::Safetensors:
        return "safetensors";
    case WeightsFormat::Onnx:
        return "ONNX";
    case WeightsFormat::Npz:
        return "NPZ";
    }
    return "?";
}

WeightsFormat weights_format_for_path(const std::string& path) {
    const std::string lower = lower_ascii(path);
    auto ends = [&](const std::string& suffix) {
        return lower.size() > suffix.size() &&
               lower.compare(lower.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends(".safetensors")) return WeightsFormat::Safetensors;
    if (ends(".onnx")) return WeightsFormat::Onnx;
    if (ends(".npz")) return WeightsFormat::Npz;
    throw Error(ErrorKind::InvalidArgument,
                "'" + path +
                    "': unknown weights format; name the file .safetensors, .onnx or .npz");
}

void export_weights(const TrainedModel& model, const std::string& path,
                    const ExportOptions& options) {
    switch (weights_format_for_path(path)) {
    case WeightsFormat::Safetensors:
        write_safetensors(model, path, options.dtype);
        break;
    case WeightsFormat::Npz:
        write_npz(model.weights, path, options.dtype);
        break;
    case WeightsFormat::Onnx:
        write_onnx(model, path, options.dtype.value_or(DType::Float32));
        break;
    }
}

TrainedModel trained_model(Trainer& trainer, double test_loss, double test_accuracy) {
    TrainedModel out;
    out.experiment = trainer.experiment();
    out.weights = trainer.weights();
    out.test_loss = test_loss;
    out.test_accuracy = test_accuracy;
    return out;
}

} // namespace mantissa
