// ChartsPanel: the live charts of every visible run, under a legend of their colours: loss (train
// and validation), accuracy (train and validation), step time with samples/s, device memory stacked
// by category, and the loss scale on a log2 axis with a marker on every skipped step. Reads
// RunStore; redraws on its run_changed signals at most every 40 ms.
#pragma once

#include <QPointer>
#include <QWidget>

#include "core/train/gradient_histogram.h"
#include "ui/charts/gradient_histogram_chart.h"
#include "ui/charts/run_lines.h"
#include "ui/charts/scaling_chart.h"

class QAction;
class QChart;
class QTimer;

namespace mantissa::ui {

class LossScaleChart;
class MemoryChart;
class MetricChart;
class RunLegend;
class RunStore;

class ChartsPanel final : public QWidget {
    Q_OBJECT

public:
    explicit ChartsPanel(RunStore* store, QWidget* parent = nullptr);
    ~ChartsPanel() override;
    // Number of points currently drawn for a run in the named chart ("loss", "accuracy",
    // "step_time", "memory", "loss_scale"), for tests.
    int drawn_points(const QString& chart, int run_id) const;
    // Redraws every chart from the store now (the store's signals schedule this every 40 ms).
    void redraw();
    // Forgets every chart's zoom, so the axes fit the visible runs again (a lesson opened).
    void fit_to_visible();
    MetricChart* chart(const QString& name) const; // "loss", "accuracy", "step_time", "loss_scale"
    RunLegend* legend() const { return m_legend; } // which colour is which run
    // The histogram is fed here but shown where the window puts it (its own tab): it needs the
    // height the training curves need too. Without a new parent it is deleted with the panel.
    GradientHistogramChart* histogram_chart() const { return m_histogram; }
    // The quantised runs' amax, scale, clipped and flushed shares (RunRecord::quant): fed on
    // every redraw, placed by the window in its own tab like the histogram.
    ScalingChart* scaling_chart() const { return m_scaling; }
    // A run's new gradient histograms (TrainingController::histograms_arrived).
    void add_histograms(int run_id, const QVector<GradientHistogram>& histograms);
    QChart* qchart(const QString& name) const; // as chart(), plus "memory": for export
    // View ▸ Step Time Ignores Outliers (checkable, on by default, remembered in QSettings): the
    // step-time axis fits each run's typical steps, so a first step that set up the engine or
    // a moment the machine was busy does not flatten every curve; the title counts the steps
    // left off the scale. Log y still shows every step.
    QAction* ignore_outliers_action() const { return m_ignore_outliers; }
    // Presentation mode: larger fonts and thicker lines on every chart.
    void set_presentation(bool on);
    bool presentation() const { return m_presentation; }

private:
    void schedule_redraw();

    RunStore* m_store = nullptr;
    MetricChart* m_loss = nullptr;
    MetricChart* m_accuracy = nullptr;
    MetricChart* m_step_time = nullptr;
    QAction* m_ignore_outliers = nullptr;
    MetricChart* m_learning_rate = nullptr;
    LossScaleChart* m_loss_scale = nullptr;
    MemoryChart* m_memory = nullptr;
    RunLegend* m_legend = nullptr;
    QPointer<GradientHistogramChart> m_histogram;
    QPointer<ScalingChart> m_scaling;
    QTimer* m_redraw_timer = nullptr;
    RunLineCache m_lines; // the points of every shown run, extended as runs grow
    bool m_presentation = false;
};

} // namespace mantissa::ui
