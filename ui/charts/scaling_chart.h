// ScalingChart: what a quantised policy's quantise steps did over training (the `quant` records):
// for one run, layer and role, the amax and the scale in use on a log2 axis, and below it the
// share of values clipped (saturated) and flushed to zero, in percent. Its own tab in the window.
#pragma once

#include <QColor>
#include <QHash>
#include <QPointF>
#include <QString>
#include <QVector>
#include <QWidget>

#include "core/train/quant_record.h"

class QComboBox;
class QLabel;
class QStackedWidget;

namespace mantissa::ui {

struct RunRecord;
class MetricChart;

class ScalingChart final : public QWidget {
    Q_OBJECT

public:
    explicit ScalingChart(QWidget* parent = nullptr);

    // The visible runs (ChartsPanel::redraw): the run box lists them and follows the newest until
    // the user picks one; the layer box lists the picked run's quantised layers.
    void show_runs(const QVector<const RunRecord*>& runs);
    void set_presentation_scale(double font_scale, double line_scale);

    // What is shown now, for tests and lessons.
    void show_run(int run_id);
    void set_layer(const QString& layer);
    void set_role(const QString& role); // "activation", "weight" or "gradient"
    int shown_run() const { return m_run_id; }
    QString layer() const;
    QString role() const;
    bool empty_state() const;   // the explanation is shown instead of the charts
    QString empty_text() const; // the explanation
    // Points drawn now in "amax", "scale", "clipped" or "flushed"; the series' (step, value)
    // points as plotted (log2 for amax and scale, percent for the shares).
    int drawn_points(const QString& series) const;
    QVector<QPointF> points(const QString& series) const { return m_points.value(series); }
    MetricChart* values_chart() const { return m_values; }
    MetricChart* shares_chart() const { return m_shares; }

private:
    void rebuild_layers();
    void refresh();
    // The explanation `text` in place of the charts, which are emptied.
    void show_empty(const QString& text);

    // What the chart needs of a visible run; `quant` shares the store's records (implicitly
    // shared), so no pointer into the store outlives a redraw.
    struct ShownRun {
        int id = 0;
        QString name;
        QColor color;
        bool quantises = false; // its policy has a quantise recipe
        bool active = false;    // queued, running or paused: its records may still come
        QVector<QuantRecord> quant;
    };
    const ShownRun* shown() const; // nullptr when no run is picked

    QVector<ShownRun> m_runs;
    QHash<QString, QVector<QPointF>> m_points; // what refresh() plotted, by series
    int m_run_id = -1;
    bool m_follow_latest = true; // the run box follows the newest visible run
    bool m_updating = false;     // our own combo box changes
    QComboBox* m_run_box = nullptr;
    QComboBox* m_layer_box = nullptr;
    QComboBox* m_role_box = nullptr;
    QLabel* m_key = nullptr;
    QLabel* m_empty = nullptr;
    QStackedWidget* m_pages = nullptr;
    MetricChart* m_values = nullptr;
    MetricChart* m_shares = nullptr;
};

} // namespace mantissa::ui
