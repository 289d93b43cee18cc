// WeightsLoader: "Load Weights…" reads a safetensors file, hands its embedded experiment to the
// editor and keeps the weights so the next training run starts from them instead of random ones.
#pragma once

#include <QObject>
#include <QString>
#include <memory>

#include "core/train/experiment.h"

class QWidget;

namespace mantissa::ui {

struct InitialWeights;

class WeightsLoader final : public QObject {
    Q_OBJECT

public:
    explicit WeightsLoader(QObject* parent = nullptr);
    ~WeightsLoader() override;

    // Reads and validates `path` (names, shapes, dtypes, the experiment in its metadata). On
    // success emits loaded() and keeps the weights for take(); on failure emits error() and keeps
    // what it held before. Returns whether it loaded.
    bool load(const QString& path);
    // Asks for a .safetensors file, then load(). False when cancelled or failed.
    bool ask_and_load(QWidget* parent);

    bool has_weights() const { return m_weights != nullptr; }
    QString source() const; // the file the kept weights came from; empty when none
    // The kept weights for the next run (then forgotten: one run starts from them).
    std::shared_ptr<const InitialWeights> take();

signals:
    void loaded(const mantissa::Experiment& experiment, const QString& summary);
    void error(const QString& what, const QString& todo);

private:
    std::shared_ptr<const InitialWeights> m_weights;
};

} // namespace mantissa::ui
