// GradientHistogramChart: the live histogram of log2|g| (Micikevicius et al. 2018, figure 3) for
// one run, layer and gradient kind, as computed or unscaled, against float16's and bfloat16's
// ranges.
#pragma once

#include <QColor>
#include <QHash>
#include <QString>
#include <QVector>
#include <QWidget>

#include "core/train/gradient_histogram.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;

namespace mantissa::ui {

class HistogramCanvas;

class GradientHistogramChart final : public QWidget {
    Q_OBJECT

public:
    explicit GradientHistogramChart(QWidget* parent = nullptr);

    // New histograms of a run (from TrainingController::histograms_arrived), oldest first.
    void add_histograms(int run_id, const QString& run_name, const QColor& color,
                        const QVector<GradientHistogram>& histograms);
    void remove_run(int run_id);

    // What is shown now, for tests and for a lesson that points at one view.
    void show_run(int run_id);
    void set_layer(const QString& layer); // empty: all layers
    void set_weights(bool weights);       // false: activation gradients
    void set_unscaled(bool unscaled);
    // Shows the histogram of training step `step` (or the last one before it) of whichever run is
    // shown, as new ones arrive, until the user moves the step slider; 0 follows the newest.
    void pin_step(std::int64_t step);
    int shown_run() const { return m_run_id; }
    int bar_count() const;              // bins with at least one value, zeros and inf included
    QString fractions_text() const;     // the printed fractions, as plain text
    Float16Fractions fractions() const; // of the shown histogram and view
    const GradientHistogram* shown_histogram() const;

private:
    struct RunHistograms {
        QString name;
        QColor color;
        QVector<GradientHistogram> history; // thinned to at most kMaxHistory entries
    };
    void rebuild_selectors();
    void refresh();
    const ExponentCounts* shown_counts() const;
    int exponent_shift() const;

    QHash<int, RunHistograms> m_runs;
    QVector<int> m_order; // run ids in arrival order
    int m_run_id = -1;
    QComboBox* m_run_box = nullptr;
    QComboBox* m_layer_box = nullptr;
    QComboBox* m_kind_box = nullptr;
    QCheckBox* m_unscaled = nullptr;
    QSlider* m_step = nullptr;
    QLabel* m_step_label = nullptr;
    QLabel* m_fractions = nullptr;
    HistogramCanvas* m_canvas = nullptr;
    bool m_follow_latest = true;    // the step slider sits at the newest histogram
    std::int64_t m_pinned_step = 0; // a lesson's step (pin_step); 0: none
};

} // namespace mantissa::ui
