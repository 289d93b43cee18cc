// The shared look of Mantissa's charts: fonts large enough for a projector, the application
// palette's background and text (light or dark), thin grid lines and no legend.
#pragma once

#include <QString>

class QAbstractAxis;
class QChart;

namespace mantissa::ui {

void style_chart(QChart* chart, const QString& title);
void style_axis(QAbstractAxis* axis, const QString& title);
// Re-reads the application palette into the chart and all its axes (on a palette change).
void apply_palette(QChart* chart);
void apply_palette(QAbstractAxis* axis); // an axis not attached to a chart right now

} // namespace mantissa::ui
