// LogSlider: a horizontal slider over |x| on a log scale (1e-12 .. 1e12 in eighths of a binade),
// so one drag sweeps through float16's underflow, its normal range and its overflow.
#pragma once

#include <QSlider>

namespace mantissa::ui {

class LogSlider final : public QSlider {
    Q_OBJECT

public:
    explicit LogSlider(QWidget* parent = nullptr);

    // Moves the handle to |value| (clamped to the slider's range) without emitting.
    void set_magnitude(double value);
    double magnitude() const; // 2^(position / steps)

    static constexpr int kStepsPerBinade = 8;
    static constexpr int kMinBinade = -40, kMaxBinade = 40;

signals:
    void magnitude_moved(double magnitude); // the user dragged or stepped the slider
};

} // namespace mantissa::ui
