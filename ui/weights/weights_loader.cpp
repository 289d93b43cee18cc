// WeightsLoader: reads a weights file on the UI thread (files are small: a few MB for the models
// MNIST takes) and keeps the weights until the next run takes them.
#include "ui/weights/weights_loader.h"

#include <QFileDialog>
#include <QFileInfo>
#include <cmath>
#include <utility>

#include "core/records/trained_model.h"
#include "ui/training/training_controller.h"
#include "ui/window/dialog_folder.h"

namespace mantissa::ui {

WeightsLoader::WeightsLoader(QObject* parent) : QObject(parent) {}

WeightsLoader::~WeightsLoader() = default;

bool WeightsLoader::load(const QString& path) {
    TrainedModel model;
    try {
        model = load_trained_model(path.toStdString());
    } catch (const std::exception& e) {
        emit error(tr("Could not load the weights."),
                   QString::fromStdString(e.what()) +
                       tr(" Pick a .safetensors file that Mantissa wrote (a run's "
                          "weights.safetensors or an export)."));
        return false;
    }
    auto weights = std::make_shared<InitialWeights>();
    weights->weights = std::move(model.weights);
    weights->source = path;
    const std::size_t tensors = weights->weights.tensors.size();
    m_weights = std::move(weights);
    QString summary = tr("loaded %1 tensors from %2 (%3, %4)")
                          .arg(tensors)
                          .arg(path, QString::fromStdString(model.experiment.name),
                               QString::fromStdString(model.experiment.policy));
    if (!std::isnan(model.test_accuracy))
        summary += tr(", test accuracy %1%").arg(100.0 * model.test_accuracy, 0, 'f', 2);
    summary += tr("; the next training run starts from these weights");
    emit loaded(model.experiment, summary);
    return true;
}

bool WeightsLoader::ask_and_load(QWidget* parent) {
    const QString path = QFileDialog::getOpenFileName(parent, tr("Load weights"), dialog_folder(),
                                                      tr("safetensors (*.safetensors)"));
    remember_dialog_folder(path);
    return !path.isEmpty() && load(path);
}

QString WeightsLoader::source() const {
    return m_weights ? m_weights->source : QString();
}

std::shared_ptr<const InitialWeights> WeightsLoader::take() {
    return std::exchange(m_weights, nullptr);
}

} // namespace mantissa::ui
