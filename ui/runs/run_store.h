// RunStore: the list of runs (this session's and those reopened from the history) as a table
// model (colour, name, policy, device, start time, status; a checkbox overlays the run on the
// charts). It owns the RunRecords; others read them.
#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QVector>

#include "ui/runs/run_record.h"

namespace mantissa::ui {

class RunStore final : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { ColName, ColPolicy, ColDevice, ColStarted, ColStatus, ColumnCount };

    explicit RunStore(QObject* parent = nullptr);

    // Adds a queued run with the next colour of a fixed, colour-blind-safe palette; returns its id.
    int add_run(const Experiment& experiment);
    // Adds a run reopened from the history (its name, colour, state and metrics as given; an
    // invalid colour gets the palette's next one); returns its new id.
    int add_stored_run(RunRecord record);
    RunRecord* run(int id); // nullptr for an unknown id
    const RunRecord* run(int id) const;
    const QVector<RunRecord>& runs() const { return m_runs; }
    void remove_run(int id);

    // Updates from the training controller; each emits run_changed(id) (and dataChanged).
    void set_started(int id, const QString& device, const MemoryByCategory& memory,
                     std::int64_t steps_per_epoch);
    void append_steps(int id, const QVector<StepRecord>& steps);
    void append_epoch(int id, const EpochRecord& epoch);
    void append_quant(int id, const QVector<QuantRecord>& records);
    void set_state(int id, RunState state, const QString& message = {});
    void set_finished(int id, const RunSummary& summary);
    void rename_run(int id, const QString& name);
    // Shows and hides many runs at once (ids not listed keep theirs): one visibility_changed, so
    // the charts redraw once, not once per run.
    void set_visibility(const QHash<int, bool>& visible);

    // QAbstractTableModel: the checkbox of ColName toggles `visible`.
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;

signals:
    void run_added(int id);
    void run_changed(int id); // new metrics or a new state
    void run_removed(int id);
    void visibility_changed();

private:
    // Gives `record` the next id (and a colour when it has none), appends it and announces it.
    int insert(RunRecord record);
    int row_of(int id) const;
    QColor palette_color(int id) const;

    QVector<RunRecord> m_runs;
    int m_next_id = 1;
};

} // namespace mantissa::ui
