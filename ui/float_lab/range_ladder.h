// RangeLadder: each format's range on one log2 axis (min subnormal, min normal, max) with a
// marker where |x| falls, so "float16 overflows above 65504 and underflows below 6e-8" is a
// picture.
#pragma once

#include <QWidget>

#include "core/numeric/float_inspect.h"

namespace mantissa::ui {

class RangeLadder final : public QWidget {
    Q_OBJECT

public:
    explicit RangeLadder(QWidget* parent = nullptr);

    void set_value(double value);
    double value() const { return m_value; }
    // What happens to the value in `dtype`, as the lane's end reads it ("normal", "overflow→inf").
    QString lane_status(DType dtype) const;
    // The axis window in log2 (it widens to keep the value in view) and the x pixel of a log2.
    double axis_min() const { return m_min; }
    double axis_max() const { return m_max; }
    double x_for(double log2_value) const;
    // The marker's x pixel; NaN when |x| is 0, inf or NaN (no place on a log axis).
    double marker_x() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    int lane_height() const;
    int left_margin() const;
    int right_margin() const;
    int top_margin() const;

    double m_value = 1.0;
    double m_min = -40, m_max = 40; // the visible window, log2
};

} // namespace mantissa::ui
