// MemoryChart: device memory of every visible run stacked by category (weights, master,
// activations, gradients, optimizer, workspace, data) as one horizontal bar per run.
#pragma once

#include <QVector>
#include <QWidget>

class QBarCategoryAxis;
class QChart;
class QChartView;
class QHorizontalStackedBarSeries;
class QValueAxis;

namespace mantissa::ui {

struct RunRecord;

class MemoryChart final : public QWidget {
    Q_OBJECT

public:
    explicit MemoryChart(QWidget* parent = nullptr);

    void show_runs(const QVector<const RunRecord*>& runs);
    int drawn_points(int run_id) const; // the run's non-empty categories (0: not drawn)
    QChart* chart() const { return m_chart; }

protected:
    void changeEvent(QEvent* event) override; // follows light/dark palette changes

private:
    QChart* m_chart = nullptr;
    QChartView* m_view = nullptr;
    QHorizontalStackedBarSeries* m_series = nullptr;
    QBarCategoryAxis* m_runs_axis = nullptr;
    QValueAxis* m_bytes_axis = nullptr;
    QVector<int> m_run_ids;            // the bars, bottom to top
    QVector<int> m_nonzero_categories; // per bar
    QString m_last_signature;          // what the bars show now (skip identical rebuilds)
};

} // namespace mantissa::ui
