// The shared look of Mantissa's charts: fonts large enough for a projector, a plain light
// background, thin grid lines and no legend (the runs list explains the colours).
#pragma once

#include <QString>

class QAbstractAxis;
class QChart;

namespace mantissa::ui {

void style_chart(QChart* chart, const QString& title);
void style_axis(QAbstractAxis* axis, const QString& title);

} // namespace mantissa::ui
