// WeightsEvaluator: an EvalSession for the file's experiment (an inference-only plan, the test
// images only; weights checked by name, shape and dtype); results come back as queued signals.
#include "ui/weights/weights_evaluator.h"

#include <QMetaObject>
#include <QThread>
#include <exception>

#include "core/data/mnist.h"
#include "core/records/trained_model.h"
#include "core/run/eval_session.h"

namespace mantissa::ui {

WeightsEvaluator::WeightsEvaluator(QObject* parent)
    : QObject(parent), m_data(std::make_shared<std::unique_ptr<Mnist>>()) {}

WeightsEvaluator::~WeightsEvaluator() {
    if (m_thread) m_thread->wait();
}

bool WeightsEvaluator::evaluate(const QString& path, const QString& device) {
    if (m_running) return false;
    if (m_thread) m_thread->wait(); // the previous one has delivered and is only returning
    m_running = true;
    m_thread = QThread::create([this, data = m_data, path, device] {
        double loss = 0, accuracy = 0;
        qint64 examples = 0;
        QString problem;
        try {
            TrainedModel model = load_trained_model(path.toStdString());
            if (!*data) {
                // The test split is all an evaluation reads; the training images stay on disk.
                auto test_only = std::make_unique<Mnist>();
                test_only->test = load_mnist_test(find_data_dir(""));
                *data = std::move(test_only);
            }
            EvalSessionOptions options;
            options.experiment = model.experiment;
            options.experiment.device = device.toStdString();
            options.data.data = data->get();
            options.weights = std::move(model.weights);
            options.source = path.toStdString();
            EvalSession session(std::move(options));
            const EvalResult result = session.run();
            loss = result.loss;
            accuracy = result.accuracy;
            examples = result.examples;
        } catch (const std::exception& e) {
            problem = QString::fromStdString(e.what());
        }
        // Delivered on the UI thread; `this` outlives the thread (the destructor waits for it).
        QMetaObject::invokeMethod(
            this,
            [this, path, loss, accuracy, examples, problem] {
                m_running = false;
                if (problem.isEmpty())
                    emit finished(path, loss, accuracy, examples);
                else
                    emit failed(path, problem);
            },
            Qt::QueuedConnection);
    });
    m_thread->setObjectName(QStringLiteral("mantissa-evaluate"));
    m_thread->setParent(this);
    QThread* thread = m_thread;
    connect(thread, &QThread::finished, this, [this, thread] {
        if (m_thread == thread) m_thread = nullptr;
        thread->deleteLater();
    });
    m_thread->start();
    emit started(path);
    return true;
}

} // namespace mantissa::ui
