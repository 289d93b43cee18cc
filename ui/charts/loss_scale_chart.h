// LossScaleChart: the dynamic loss scale of every visible run per step on a log2 axis, a marker on
// each skipped step (non-finite gradients), and the running count of skipped steps in the title.
#pragma once

#include <QVector>

#include "ui/charts/metric_chart.h"

namespace mantissa::ui {

struct RunRecord;
class RunLineCache;

class LossScaleChart final : public MetricChart {
    Q_OBJECT

public:
    explicit LossScaleChart(QWidget* parent = nullptr);

    void show_runs(const QVector<const RunRecord*>& runs, RunLineCache& cache);
    std::int64_t skipped_steps() const { return m_skipped; } // over the visible runs

private:
    std::int64_t m_skipped = 0;
};

} // namespace mantissa::ui
