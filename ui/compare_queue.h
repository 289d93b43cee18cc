// CompareQueue: "Compare policies…": runs the current experiment once per chosen policy, one
// after the other, with the same seed and data order, so the comparison table fills itself.
#pragma once

#include <QObject>
#include <QStringList>
#include <QVector>

#include "core/train/experiment.h"

namespace mantissa::ui {

class RunStore;
class TrainingController;

class CompareQueue final : public QObject {
    Q_OBJECT

public:
    CompareQueue(RunStore* store, TrainingController* controller, QObject* parent = nullptr);

    // Queues one run per policy of `base` and starts the first; returns false if one is running.
    bool start(const Experiment& base, const QStringList& policies);
    // Queues these experiments as they are (a lesson's runs) and starts the first.
    bool start(const QVector<Experiment>& experiments);
    void cancel(); // forget the runs not started yet
    bool active() const { return !m_pending.isEmpty() || m_current >= 0; }

signals:
    void finished(); // every queued run ended

private:
    void start_next();

    RunStore* m_store = nullptr;
    TrainingController* m_controller = nullptr;
    QVector<Experiment> m_pending;
    int m_current = -1;
};

} // namespace mantissa::ui
