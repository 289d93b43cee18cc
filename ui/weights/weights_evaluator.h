// WeightsEvaluator: "Evaluate Weights" measures a weights file's loss and accuracy over the 10,000
// MNIST test images on a thread of its own, so the window stays responsive while it runs.
#pragma once

#include <QObject>
#include <QString>
#include <memory>

class QThread;

namespace mantissa {
struct Mnist;
}

namespace mantissa::ui {

class WeightsEvaluator final : public QObject {
    Q_OBJECT

public:
    explicit WeightsEvaluator(QObject* parent = nullptr);
    ~WeightsEvaluator() override; // waits for an evaluation in flight

    // Starts evaluating the safetensors file `path` with the model and policy in its metadata, on
    // `device` ("cpu", "auto", "cuda:0"). False (and nothing starts) while one is running.
    bool evaluate(const QString& path, const QString& device);
    bool is_running() const { return m_running; }

signals:
    void started(const QString& path);
    // test_loss and accuracy (a fraction) over `examples` test images.
    void finished(const QString& path, double test_loss, double accuracy, qint64 examples);
    void failed(const QString& path, const QString& message);

private:
    QThread* m_thread = nullptr; // until it has returned
    bool m_running = false;      // until its result has been delivered
    // The MNIST test split, loaded by the first evaluation and kept; only the evaluation thread
    // touches it.
    std::shared_ptr<std::unique_ptr<Mnist>> m_data;
};

} // namespace mantissa::ui
