// HistogramCanvas: paints one exponent histogram as bars on a log2 axis, over shaded bands of
// float16's underflow, subnormal, normal and overflow ranges, with float16/bfloat16 range strips.
#pragma once

#include <QColor>
#include <QWidget>

#include "core/train/gradient_histogram.h"

namespace mantissa::ui {

class HistogramCanvas final : public QWidget {
    Q_OBJECT

public:
    explicit HistogramCanvas(QWidget* parent = nullptr);

    // `counts` moved by `exponent_shift` powers of two (the unscaled view); empty counts: a hint.
    void set_histogram(const ExponentCounts& counts, int exponent_shift, const QColor& color);
    void clear();
    int bar_count() const; // bars drawn (non-empty bins)
    QSize sizeHint() const override { return {480, 220}; }
    QSize minimumSizeHint() const override { return {320, 170}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    ExponentCounts m_counts;
    int m_shift = 0;
    QColor m_color;
    bool m_empty = true;
};

// "2⁻²⁴": a power of two with a superscript exponent, as the axis labels print it.
QString power_of_two_label(int exponent);

} // namespace mantissa::ui
