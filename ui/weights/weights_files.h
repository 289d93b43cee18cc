// The app's side of weights export: the save dialog's filters, the dtypes each format may convert
// to, and the export of a run's weights.safetensors to any format (what "Export weights…" calls).
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>
#include <memory>
#include <optional>

#include "core/export/weights_export.h"

class QWidget;

class QInputDialog;

namespace mantissa::ui {

// One entry of the dtype choice: "as stored" (nullopt) or a conversion.
struct WeightsDTypeChoice {
    QString label;
    std::optional<DType> dtype;
};

// "safetensors (*.safetensors)", "ONNX (*.onnx)", "NumPy NPZ (*.npz)", in that order.
QStringList weights_file_filters();
// The format a dialog filter stands for (Safetensors for an unknown one).
WeightsFormat weights_format_for_filter(const QString& filter);
// The dtypes a format can write: as stored / float32 / float16 (ONNX: float32 / float16, since it
// has no "stored" dtype of its own).
QVector<WeightsDTypeChoice> weights_dtype_choices(WeightsFormat format);

// What the dialog's dtype step says under its question (rich text): for ONNX, the runtimes the
// file is tested with (ctest onnx_runtime_node, onnx_opencv) and the five lines of Python that run
// it in each, as in the README; empty for the other formats.
QString weights_format_note(WeightsFormat format);

// Reads the weights file `source` (load_trained_model) and exports it to `destination`, the
// format chosen by its extension. Returns empty on success, else a message naming the file and
// what to do.
QString export_weights_file(const QString& source, const QString& destination,
                            std::optional<DType> dtype = std::nullopt);

// The thin interactive part: a save dialog with the three filters, then (when the format allows
// more than one) the dtype. Returns false when the user cancels; `path` gets the format's
// extension when it lacks one.
// The "Write the <format> file in:" question of ask_weights_destination, with the format's note
// (ONNX's explains its opset and float16 handling at length): the note wraps and the dialog is
// bounded by the screen (it was 1466 px wide on a 1366-px projector).
std::unique_ptr<QInputDialog> weights_dtype_dialog(QWidget* parent, WeightsFormat format);

bool ask_weights_destination(QWidget* parent, const QString& suggested_base, QString& path,
                             std::optional<DType>& dtype);

} // namespace mantissa::ui
