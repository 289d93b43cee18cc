// PlanStepsModel: a Plan's steps as a table (phase, layer, op, input → output dtypes, bytes,
// FLOPs), with the casts the policy inserted highlighted, for the Plan view.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "ui/plan_view/plan_digest.h"

namespace mantissa::ui {

class PlanStepsModel final : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Index, Phase, Layer, Op, Dtypes, Bytes, Flops, ColumnCount };

    explicit PlanStepsModel(QObject* parent = nullptr);

    void set_steps(std::vector<PlanStepRow> steps);
    void clear();
    const std::vector<PlanStepRow>& steps() const { return m_steps; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<PlanStepRow> m_steps;
};

// "1.5 MiB", "312 B"; "2.1 GFLOP", "512 FLOP".
QString bytes_text(double bytes);
QString flops_text(double flops);

} // namespace mantissa::ui
