// The shared look of Mantissa's charts: fonts large enough for a projector (larger still in
// presentation mode), the application palette's background and text (light or dark, following
// the desktop), thin grid lines and no legend; titles and tick counts fitted to the space.
#pragma once

#include <QString>
#include <QStringList>

class QAbstractAxis;
class QChart;
class QFont;

namespace mantissa::ui {

void style_chart(QChart* chart, const QString& title);
void style_axis(QAbstractAxis* axis, const QString& title);
// Re-reads the application palette into the chart and all its axes (on a palette change): a
// dark window colour gives dark charts.
void apply_palette(QChart* chart);
void apply_palette(QAbstractAxis* axis); // an axis not attached to a chart right now

// Sets the title, axis and legend fonts of a chart at `scale` times their normal sizes
// (presentation mode uses 1.4). Axes detached from the chart are passed in `extra_axes`.
void apply_chart_fonts(QChart* chart, double scale, const QList<QAbstractAxis*>& extra_axes = {});
void apply_axis_fonts(QAbstractAxis* axis, double scale);

// For charts that set their own axis ranges with fixed tick counts (the memory chart): keeps
// every QValueAxis's tick count within what its side of the plot has room for, and drops the
// bottom axis's title when Qt Charts' 30% of the chart height cannot hold it with the labels.
// Re-fits whenever the plot area or an axis range changes.
void keep_axes_fitted(QChart* chart);
void fit_axes_to_plot(QChart* chart);

// A title with its details dropped from the end, one at a time, at " · " and ", ":
// "Step time · run #3: 70.2 ms, 1,795 samples/s" → {that, "Step time · run #3: 70.2 ms",
// "Step time"}. The first is the full title, for the tooltip.
QStringList title_candidates(const QString& title);
// An axis title and its short form: the unit in parentheses ("accuracy (%)" → "%"), else the
// first word ("ms per step" → "ms").
QStringList axis_title_candidates(const QString& title);
// The first candidate no wider than `width` in `font`, else the last (the shortest).
QString fitted_title(const QStringList& candidates, const QFont& font, double width);

// How many tick labels fit along an axis of `pixels` when each needs `per_label` pixels
// (Qt Charts elides a label to "..." when its share of the axis is smaller): at least 2.
int tick_capacity(double pixels, double per_label);
// Pixels one horizontal-row label needs on a vertical axis (its height, and Qt Charts' padding).
double vertical_label_pixels(const QFont& labels_font);
// Pixels a label of `text` needs along a horizontal axis.
double horizontal_label_pixels(const QFont& labels_font, const QString& text);

} // namespace mantissa::ui
