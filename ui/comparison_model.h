// ComparisonModel: one row per run with what a policy comparison needs: policy, device, final
// test accuracy, median ms/step, samples/s, speedup and memory ratio against the float32 run,
// peak memory, skipped steps and time to 97% accuracy. Reads RunStore; recomputes on change.
#pragma once

#include <QAbstractTableModel>

namespace mantissa::ui {

class RunStore;

class ComparisonModel final : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        ColRun,
        ColPolicy,
        ColDevice,
        ColAccuracy,
        ColMsPerStep,
        ColSamplesPerS,
        ColSpeedup,
        ColPeakMemory,
        ColMemoryRatio,
        ColSkipped,
        ColTimeTo97,
        ColumnCount
    };

    explicit ComparisonModel(RunStore* store, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    RunStore* m_store = nullptr;
};

} // namespace mantissa::ui
