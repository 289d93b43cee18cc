// PlanStepsModel: a Plan's steps as a table (phase, layer, op, input → output dtypes, bytes,
// FLOPs), with the casts the policy inserted highlighted, for the Plan view; after a timing, each
// step's measured time and the time the device's roof allows for its work (issue 26).
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "ui/plan_view/plan_digest.h"

namespace mantissa::ui {

class PlanStepsModel final : public QAbstractTableModel {
    Q_OBJECT

public:
    // Measured and Roof beside the op, where a lecturer's eye is (the Plan view hides them until
    // a timing fills them).
    enum Column { Index, Phase, Layer, Op, Measured, Roof, Dtypes, Bytes, Flops, ColumnCount };

    // One row's timing (core/plan/step_profile.h's StepProfileRow, the parts shown).
    struct Timing {
        bool measured = false;
        double ms = 0, roof_ms = 0;
        bool compute_bound = false;
    };

    explicit PlanStepsModel(QObject* parent = nullptr);

    void set_steps(std::vector<PlanStepRow> steps);
    void clear();
    // Timings aligned with the steps (the Measured and Roof columns); empty clears them.
    void set_timings(std::vector<Timing> timings);
    bool has_timings() const { return !m_timings.empty(); }
    const std::vector<PlanStepRow>& steps() const { return m_steps; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<PlanStepRow> m_steps;
    std::vector<Timing> m_timings;
};

// "0.42 ms", "12 µs", "1.3 s": a step's time with three significant digits.
QString duration_text(double ms);

// "1.5 MiB", "312 B"; "2.1 GFLOP", "512 FLOP".
QString bytes_text(double bytes);
QString flops_text(double flops);

} // namespace mantissa::ui
