// Weights export from the app: one function does the work (tested without dialogs), and a thin
// dialog helper asks where to and in which dtype.
#include "ui/weights/weights_files.h"

#include <QFileDialog>
#include <QInputDialog>
#include <QLabel>
#include <algorithm>

#include "core/error.h"
#include "core/records/trained_model.h"
#include "ui/window/dialog_folder.h"
#include "ui/window/window_geometry.h"

namespace mantissa::ui {

namespace {

QString extension_of(WeightsFormat format) {
    switch (format) {
    case WeightsFormat::Onnx:
        return QStringLiteral(".onnx");
    case WeightsFormat::Npz:
        return QStringLiteral(".npz");
    case WeightsFormat::Safetensors:
        break;
    }
    return QStringLiteral(".safetensors");
}

} // namespace

QStringList weights_file_filters() {
    return {QStringLiteral("safetensors (*.safetensors)"), QStringLiteral("ONNX (*.onnx)"),
            QStringLiteral("NumPy NPZ (*.npz)")};
}

WeightsFormat weights_format_for_filter(const QString& filter) {
    if (filter.contains(QLatin1String("*.onnx"))) return WeightsFormat::Onnx;
    if (filter.contains(QLatin1String("*.npz"))) return WeightsFormat::Npz;
    return WeightsFormat::Safetensors;
}

QVector<WeightsDTypeChoice> weights_dtype_choices(WeightsFormat format) {
    QVector<WeightsDTypeChoice> choices;
    if (format != WeightsFormat::Onnx)
        choices.push_back({QStringLiteral("as stored"), std::nullopt});
    choices.push_back({QStringLiteral("float32"), DType::Float32});
    choices.push_back({QStringLiteral("float16"), DType::Float16});
    return choices;
}

QString weights_format_note(WeightsFormat format) {
    if (format != WeightsFormat::Onnx) return {};
    const auto code = [](const char* text) {
        return QStringLiteral("<pre>%1</pre>").arg(QString::fromUtf8(text).toHtmlEscaped());
    };
    return QObject::tr("<p>Tested with onnxruntime 1.30 (float32 and float16) and OpenCV 4.6 DNN "
                       "(float32; OpenCV reads float16 ONNX from 4.7 on). Input: float32 (N, 1, "
                       "28, 28), pixels / 255; output: probabilities (N, 10). Below, images "
                       "holds uint8 digits (N, 28, 28).</p>"
                       "<p>Python with onnxruntime:</p>") +
           code("import numpy as np, onnxruntime as ort\n"
                "session = ort.InferenceSession(\"model.onnx\")\n"
                "x = images.reshape(-1, 1, 28, 28).astype(np.float32) / 255\n"
                "probabilities = session.run(None, {\"input\": x})[0]\n"
                "digits = probabilities.argmax(axis=1)") +
           QObject::tr("<p>Python with OpenCV:</p>") +
           code("import numpy as np, cv2\n"
                "net = cv2.dnn.readNetFromONNX(\"model.onnx\")\n"
                "net.setInput(images.reshape(-1, 1, 28, 28).astype(np.float32) / 255)\n"
                "probabilities = net.forward()\n"
                "digits = probabilities.argmax(axis=1)");
}

QString export_weights_file(const QString& source, const QString& destination,
                            std::optional<DType> dtype) {
    try {
        const TrainedModel model = load_trained_model(source.toStdString());
        export_weights(model, destination.toStdString(), ExportOptions{dtype});
    } catch (const std::exception& error) {
        return QStringLiteral("%1 Check that the folder is writable and the name ends in "
                              ".safetensors, .onnx or .npz; if the run's weights file is damaged, "
                              "train the run again.")
            .arg(QString::fromStdString(error.what()));
    }
    return {};
}

std::unique_ptr<QInputDialog> weights_dtype_dialog(QWidget* parent, WeightsFormat format) {
    QStringList labels;
    for (const WeightsDTypeChoice& choice : weights_dtype_choices(format)) labels << choice.label;
    QString question =
        QObject::tr("Write the %1 file in:").arg(QString::fromLatin1(weights_format_name(format)));
    if (const QString note = weights_format_note(format); !note.isEmpty())
        question = QStringLiteral("<p>%1</p>%2").arg(question.toHtmlEscaped(), note);
    auto dialog = std::make_unique<QInputDialog>(parent);
    dialog->setWindowTitle(QObject::tr("Export weights"));
    dialog->setLabelText(question);
    dialog->setComboBoxItems(labels);
    dialog->setComboBoxEditable(false);
    for (QLabel* label : dialog->findChildren<QLabel*>()) label->setWordWrap(true);
    // Wide enough for the note to read in a few lines, never wider than the screen.
    dialog->setMaximumWidth(std::min(620, screen_room(parent ? parent : dialog.get()).width()));
    fit_to_screen(dialog.get());
    return dialog;
}

bool ask_weights_destination(QWidget* parent, const QString& suggested_base, QString& path,
                             std::optional<DType>& dtype) {
    const QStringList filters = weights_file_filters();
    QString filter = filters.front();
    path =
        QFileDialog::getSaveFileName(parent, QObject::tr("Export weights"),
                                     dialog_path(suggested_base + QStringLiteral(".safetensors")),
                                     filters.join(QStringLiteral(";;")), &filter);
    if (path.isEmpty()) return false;
    remember_dialog_folder(path);
    WeightsFormat format = weights_format_for_filter(filter);
    try {
        format = weights_format_for_path(path.toStdString()); // a typed extension wins
    } catch (const Error&) {
        path += extension_of(format);
    }
    const QVector<WeightsDTypeChoice> choices = weights_dtype_choices(format);
    QStringList labels;
    for (const WeightsDTypeChoice& choice : choices) labels << choice.label;
    const std::unique_ptr<QInputDialog> dialog = weights_dtype_dialog(parent, format);
    if (dialog->exec() != QDialog::Accepted) return false;
    const QString label = dialog->textValue();
    dtype = choices[static_cast<int>(labels.indexOf(label))].dtype;
    return true;
}

} // namespace mantissa::ui
