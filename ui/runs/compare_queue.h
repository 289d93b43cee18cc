// CompareQueue: "Compare policies…": runs the current experiment once per chosen policy (or a
// few times each), one after the other, with the same seed and data order, so the comparison
// table fills itself.
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

    // Queues `repeats` runs per policy of `base` and starts the first; returns false if one is
    // running. Repeats go round the policies (f32, f16, f32, f16, ...), so a machine that slows
    // down or warms up part-way affects every policy alike; their names end in "· run 2/3".
    bool start(const Experiment& base, const QStringList& policies, int repeats = 1);
    // Queues these experiments as they are (a lesson's runs) and starts the first.
    bool start(const QVector<Experiment>& experiments);
    void cancel(); // forget the runs not started yet
    bool active() const { return !m_pending.isEmpty() || m_current >= 0; }
    int pending() const { return static_cast<int>(m_pending.size()); } // not started yet

signals:
    void finished(); // every queued run ended

private:
    bool start_queue(const QVector<Experiment>& experiments, const QStringList& names);
    void start_next();

    RunStore* m_store = nullptr;
    TrainingController* m_controller = nullptr;
    QVector<Experiment> m_pending;
    QStringList m_pending_names; // the run name for each pending experiment; empty: the default
    int m_current = -1;
};

} // namespace mantissa::ui
