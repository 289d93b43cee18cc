// ComparisonModel: one row per visible run (the table follows the charts), grouped by
// configuration (model, batch, optimizer, epochs: see run_configuration.h), with what a policy
// comparison needs: policy, device, final test accuracy, median ms/step after warm-up with its
// spread, samples/s, speedup and model-memory ratio against the float32 run of the same
// configuration, the resident dataset apart, skipped steps, time to 97% accuracy and, for
// data-parallel runs, the gradient allreduce's bytes per step. Reads RunStore; recomputes on
// change.
#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QVector>

#include "ui/runs/run_configuration.h"

namespace mantissa::ui {

class RunStore;
struct RunRecord;

class ComparisonModel final : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        ColConfiguration,
        ColRun,
        ColPolicy,
        ColSpeedup, // the figures a comparison is read for first, before any scrolling
        ColMsPerStep,
        ColAccuracy,
        ColSpread,
        ColModelMemory,
        ColMemoryRatio,
        ColDataset,
        ColSamplesPerS,
        ColSkipped,
        ColTimeTo97,
        ColAllreduceBytes, // data-parallel runs: gradient bytes each rank sends per step
        ColDevice,
        ColumnCount
    };

    explicit ComparisonModel(RunStore* store, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    int run_id(int row) const; // the run shown in `row` (rows are grouped, not in run order)
    static QString no_baseline_text(); // what the ratio cells say without a float32 reference

private:
    void rebuild_rows();
    const QVector<RunFacts>& facts() const; // aligned with the store's runs, refreshed lazily
    QString label_of(qsizetype index) const;

    RunStore* m_store = nullptr;
    QVector<int> m_rows;      // indices into the store's runs, grouped by configuration
    QVector<int> m_row_group; // per row: its configuration's group (0, 1, ...), for the shading
    mutable QHash<int, RunFacts> m_by_id; // per run id; dropped when the run changes
    mutable QVector<RunFacts> m_facts;    // m_by_id in the store's order
    mutable bool m_facts_fresh = false;
};

} // namespace mantissa::ui
