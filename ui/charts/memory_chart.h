// MemoryChart: the memory of every visible run stacked by the model's own categories (weights,
// master, activations, gradients, optimizer, workspace) as one horizontal bar per run. The
// resident dataset is the same under every policy and would dwarf a small model, so it is a bar of
// its own, shown on request ("Show dataset"). Hovering a segment shows the run's bytes.
#pragma once

#include <QVector>
#include <QWidget>

#include "core/tensor/memory_category.h"

class QBarCategoryAxis;
class QBarSet;
class QChart;
class QChartView;
class QCheckBox;
class QHorizontalStackedBarSeries;
class QValueAxis;

namespace mantissa::ui {

struct RunRecord;

// The hover text of a run's bar: every model category's bytes (the hovered one in bold), the
// total, and what a missing master copy means ("no master weights": the policy keeps none).
QString memory_tooltip(const QString& run_name, const QString& policy,
                       const MemoryByCategory& memory, MemCategory hovered);

class MemoryChart final : public QWidget {
    Q_OBJECT

public:
    explicit MemoryChart(QWidget* parent = nullptr);

    void show_runs(const QVector<const RunRecord*>& runs);
    int drawn_points(int run_id) const; // the run's non-empty categories (0: not drawn)
    QChart* chart() const { return m_chart; }

    void set_dataset_shown(bool shown); // the dataset's bar (off by default)
    bool dataset_shown() const { return m_dataset_shown; }
    QCheckBox* dataset_box() const { return m_dataset_box; }
    // For tests and exports: the bars' labels bottom to top, and one category's values (in the
    // axis unit) per bar.
    QStringList bar_labels() const;
    QList<double> values(MemCategory category) const;
    QString tooltip(int bar, MemCategory category) const; // what hovering that segment shows

protected:
    void changeEvent(QEvent* event) override; // follows light/dark palette changes
    void resizeEvent(QResizeEvent* event) override;

private:
    void rebuild();
    void fit_bar_labels(); // the run labels' size by the rows' height

    QChart* m_chart = nullptr;
    QChartView* m_view = nullptr;
    QCheckBox* m_dataset_box = nullptr;
    QHorizontalStackedBarSeries* m_series = nullptr;
    QBarCategoryAxis* m_runs_axis = nullptr;
    QValueAxis* m_bytes_axis = nullptr;
    bool m_dataset_shown = false;
    struct Bar {
        int run_id = 0; // 0: the dataset's bar
        QString label, name, policy;
        MemoryByCategory memory;
    };
    QVector<Bar> m_runs; // the visible runs' bars (copied: the store's records may move)
    std::size_t m_device_total = 0, m_device_used = 0;
    int m_device_run = 0;
    QVector<Bar> m_bars;               // what is drawn, bottom to top
    QVector<int> m_nonzero_categories; // per bar
    QString m_last_signature;          // what the bars show now (skip identical rebuilds)
};

} // namespace mantissa::ui
