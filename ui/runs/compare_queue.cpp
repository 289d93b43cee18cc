// CompareQueue: starts the next policy when the controller reports the current run ended
// (finished or failed), so one failure does not stop the comparison.
#include "ui/runs/compare_queue.h"

#include <algorithm>

#include "ui/runs/run_store.h"
#include "ui/training/training_controller.h"

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

bool CompareQueue::start(const Experiment& base, const QStringList& policies, int repeats) {
    repeats = std::max(1, repeats);
    QVector<Experiment> experiments;
    QStringList names;
    for (int r = 1; r <= repeats; ++r)
        for (const QString& policy : policies) {
            Experiment experiment = base;
            experiment.policy = policy.toStdString();
            // The recipe is the experiment's own policy's (float32 takes none): others run theirs.
            if (experiment.policy != base.policy) experiment.recipe.reset();
            experiments.append(experiment);
            names.append(repeats == 1 ? QString()
                                      : QStringLiteral("%1 · %2 · run %3/%4")
                                            .arg(QString::fromStdString(base.name), policy)
                                            .arg(r)
                                            .arg(repeats));
        }
    return start_queue(experiments, names);
}

bool CompareQueue::start(const QVector<Experiment>& experiments) {
    return start_queue(experiments, {});
}

bool CompareQueue::start_queue(const QVector<Experiment>& experiments, const QStringList& names) {
    if (m_controller->is_running() || active() || experiments.isEmpty()) return false;
    m_pending = experiments;
    m_pending_names = names;
    start_next();
    return true;
}

void CompareQueue::cancel() {
    m_pending.clear();
    m_pending_names.clear();
}

void CompareQueue::start_next() {
    if (m_pending.isEmpty()) {
        emit finished();
        return;
    }
    const Experiment experiment = m_pending.takeFirst();
    const QString name = m_pending_names.isEmpty() ? QString() : m_pending_names.takeFirst();
    m_current = m_store->add_run(experiment);
    if (!name.isEmpty()) m_store->rename_run(m_current, name); // before its folder is named
    m_controller->start(experiment, m_current);
}

} // namespace mantissa::ui
