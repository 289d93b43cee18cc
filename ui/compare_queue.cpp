// CompareQueue: starts the next policy when the controller reports the current run ended
// (finished or failed), so one failure does not stop the comparison.
#include "ui/compare_queue.h"

#include "ui/run_store.h"
#include "ui/training_controller.h"

namespace mantissa::ui {

CompareQueue::CompareQueue(RunStore* store, TrainingController* controller, QObject* parent)
    : QObject(parent), m_store(store), m_controller(controller) {
    auto ended = [this](int run_id) {
        if (run_id != m_current) return;
        m_current = -1;
        start_next();
    };
    connect(controller, &TrainingController::run_finished, this,
            [ended](int run_id, const RunSummary&) { ended(run_id); });
    connect(controller, &TrainingController::run_failed, this,
            [ended](int run_id, const QString&) { ended(run_id); });
}

bool CompareQueue::start(const Experiment& base, const QStringList& policies) {
    QVector<Experiment> experiments;
    for (const QString& policy : policies) {
        Experiment experiment = base;
        experiment.policy = policy.toStdString();
        experiments.append(experiment);
    }
    return start(experiments);
}

bool CompareQueue::start(const QVector<Experiment>& experiments) {
    if (m_controller->is_running() || active() || experiments.isEmpty()) return false;
    m_pending = experiments;
    start_next();
    return true;
}

void CompareQueue::cancel() {
    m_pending.clear();
}

void CompareQueue::start_next() {
    if (m_pending.isEmpty()) {
        emit finished();
        return;
    }
    const Experiment experiment = m_pending.takeFirst();
    m_current = m_store->add_run(experiment);
    m_controller->start(experiment, m_current);
}

} // namespace mantissa::ui
