// MetricChart: one metric of every visible run over training steps (loss, accuracy, step time,
// loss scale), decimated per pixel column, with EMA smoothing, log-y, hover values, zoom and pan.
#pragma once

#include <QColor>
#include <QHash>
#include <QPen>
#include <QPointF>
#include <QString>
#include <QVector>
#include <QWidget>
#include <array>
#include <limits>

#include "ui/charts/axis_window.h"
#include "ui/charts/decimate.h"

class QAbstractAxis;
class QCheckBox;
class QChart;
class QLabel;
class QLogValueAxis;
class QSlider;
class QTimer;
class QValueAxis;
class QXYSeries;

namespace mantissa::ui {

class MetricChartView;

// One line of a chart: a run's training curve, its validation points or its skipped-step marks.
struct ChartLine {
    enum class Style { Line, LineWithMarkers, Markers };
    int run_id = 0;
    QString role;            // "train", "val", "skipped": one series per (run_id, role)
    QString name;            // the run's name, shown in the hover tooltip
    QColor color;            // the run's colour
    QVector<QPointF> points; // (step, value), sorted by step
    Style style = Style::Line;
    bool smooth = false; // the smoothing slider applies (raw drawn faint, smoothed solid)
    // Non-zero: a line whose run, role and version match the drawn one is unchanged, and is
    // neither copied nor smoothed again (the panel passes the run's step and epoch counts).
    quint64 version = 0;
    QVector<QString> notes; // empty, or one line per point that its hover tooltip adds
};

class MetricChart : public QWidget {
    Q_OBJECT

public:
    explicit MetricChart(const QString& title, const QString& y_title, QWidget* parent = nullptr);
    ~MetricChart() override;

    // The title as wide as the chart allows: details after " · " or ", " are dropped from the
    // end while it does not fit, and the whole title is the chart's tooltip then.
    void set_title(const QString& title);
    QString full_title() const { return m_full_title; }
    // Presentation mode: fonts `font_scale` and lines `line_scale` times their normal size.
    void set_presentation_scale(double font_scale, double line_scale);
    void set_lines(QVector<ChartLine> lines); // replaces every line and redraws
    // Autoscaling never pads past these (accuracy: 0 and 100); data outside still shows.
    void set_y_limits(double floor, double ceiling);
    void set_smoothing_enabled(bool enabled); // shows or hides the slider
    void set_smoothing(double weight);        // 0 .. 0.99
    double smoothing() const { return m_smoothing; }
    void set_log_y(bool on);
    bool log_y() const { return m_log_y; }
    // Linear y only: the axis fits each line's bulk (axis_window.h's bulk_band), so a few slow
    // or wild points run off the chart instead of flattening every curve (TensorBoard's "ignore
    // outliers in chart scaling"). Markers-only lines (skipped-step marks) still fit whole.
    void set_ignore_outliers(bool on);
    bool ignore_outliers() const { return m_ignore_outliers; }
    // Points of the drawn lines above or below the y axis as it stands (0 when zoomed by hand
    // or with nothing cut off): how many the outlier rule left off the chart.
    int points_off_the_axis() const;
    void reset_zoom();
    bool zoomed() const { return m_zoomed; } // the user zoomed or panned away from the data

    int drawn_points(int run_id) const; // points in all of the run's series right now
    int drawn_points(int run_id, const QString& role) const;
    // What hovering the run's `role` line near step `x` shows (the point's note included).
    QString hover_text(int run_id, const QString& role, double x) const;
    QChart* chart() const { return m_chart; }

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override; // follows light/dark palette changes

private:
    struct Drawn {
        QXYSeries* raw = nullptr;       // the data (faint when smoothed)
        QXYSeries* smoothed = nullptr;  // only for smooth lines
        ChartLine line;                 // its full-resolution data
        QVector<QPointF> smooth_points; // the EMA of line.points, extended as the line grows
        EmaState ema;                   // where smooth_points' EMA stopped
        QVector<QPointF> raw_drawn, smooth_drawn; // what the series hold now
        // The data range of raw_drawn and smooth_drawn, and the line version and view they were
        // decimated for: an unchanged line in an unchanged view is not decimated again.
        double x_min = 0, x_max = 0, y_min = 0, y_max = 0;
        ValueBand bulk; // the line's bulk_band, when outliers are ignored (else empty)
        quint64 prepared_version = 0;
        quint64 prepared_view = 0;
    };

    void redraw();
    void fit_title();
    QPen line_pen(const ChartLine& line, bool faint, bool smoothed_curve) const;
    int y_label_capacity() const; // tick labels the y axis has room for
    int x_label_capacity(double x_max) const;
    void update_axes(double x_min, double x_max, double y_min, double y_max); // data ranges
    void schedule_redraw();
    void on_user_range_change();
    void attach_y_axis(QAbstractAxis* axis);
    void update_ranges();
    void show_tooltip(const Drawn& drawn, const QPointF& point, bool state);
    static QString hover_text(const ChartLine& line, double x);
    QXYSeries* make_series(const ChartLine& line, bool faint, bool smoothed_curve);
    int plot_columns() const;
    quint64 view_signature(int columns) const; // changes with size, zoom, log-y and smoothing
    static QString key(int run_id, const QString& role);

    QChart* m_chart = nullptr;
    MetricChartView* m_view = nullptr;
    QValueAxis* m_x = nullptr;
    QValueAxis* m_y_linear = nullptr;
    QLogValueAxis* m_y_log = nullptr;
    QSlider* m_smoothing_slider = nullptr;
    QLabel* m_smoothing_label = nullptr;
    QCheckBox* m_log_box = nullptr;
    QTimer* m_rescale_timer = nullptr;
    QHash<QString, Drawn> m_drawn;
    double m_smoothing = 0.6;
    double m_y_floor = -std::numeric_limits<double>::infinity();
    double m_y_ceiling = std::numeric_limits<double>::infinity();
    bool m_smoothing_enabled = true;
    bool m_log_y = false;
    bool m_ignore_outliers = false;
    QString m_full_title, m_y_title;
    double m_font_scale = 1.0, m_line_scale = 1.0;
    // The data x/y range, log-y and the label capacities the axes were set for.
    std::array<double, 7> m_last_range_request{};
    bool m_zoomed = false;        // the user zoomed or panned: keep the axis ranges
    bool m_setting_range = false; // our own setRange calls, not the user's
};

} // namespace mantissa::ui
