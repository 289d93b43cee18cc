// LogSlider: integer positions are eighths of a binade; the handle snaps to exact powers of two
// every 8 steps, which makes limits such as 2^-24 and 2^16 reachable by dragging.
#include "ui/float_lab/log_slider.h"

#include <QSignalBlocker>
#include <algorithm>
#include <cmath>

namespace mantissa::ui {

LogSlider::LogSlider(QWidget* parent) : QSlider(Qt::Horizontal, parent) {
    setRange(kMinBinade * kStepsPerBinade, kMaxBinade * kStepsPerBinade);
    setSingleStep(1);
    setPageStep(kStepsPerBinade);
    setTickPosition(QSlider::TicksBelow);
    setTickInterval(8 * kStepsPerBinade);
    setToolTip("Drag to sweep |x| on a log scale from 1e-12 to 1e12 (arrow keys: an eighth of a "
               "binade, Page Up/Down: a factor of 2)");
    connect(this, &QSlider::valueChanged, this, [this] { emit magnitude_moved(magnitude()); });
}

void LogSlider::set_magnitude(double value) {
    const double a = std::fabs(value);
    int position = 0;
    if (a == 0 || std::isnan(a))
        position = minimum();
    else if (std::isinf(a))
        position = maximum();
    else
        position = static_cast<int>(std::lround(
            std::clamp(std::log2(a) * kStepsPerBinade, double(minimum()), double(maximum()))));
    const QSignalBlocker block(this);
    setValue(position);
}

double LogSlider::magnitude() const {
    return std::exp2(static_cast<double>(value()) / kStepsPerBinade);
}

} // namespace mantissa::ui
