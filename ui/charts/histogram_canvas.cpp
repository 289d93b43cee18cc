// HistogramCanvas painting: one slot per power of two, plus a slot for exact zeros on the left and
// one for inf/NaN on the right, so "flushed to zero" and "overflowed" stay visible as bars.
#include "ui/charts/histogram_canvas.h"

#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "ui/window/theme.h"

namespace mantissa::ui {

namespace {

// float16 and bfloat16 as exponents of floor(log2|x|).
constexpr int kF16MinSubnormal = -24, kF16MinNormal = -14, kF16Overflow = 16;
constexpr int kBf16MinSubnormal = -133, kBf16MinNormal = -126, kBf16Overflow = 128;

constexpr int kLeft = 46, kRight = 10, kTop = 20, kAxis = 18, kStrip = 11, kStripGap = 3;

double nice_ceiling(double v) {
    if (v <= 0) return 1;
    const double p = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (v <= m * p * 1.0000001) return m * p;
    return 10 * p;
}

} // namespace

QString power_of_two_label(int exponent) {
    static const QString digits[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    QString out = exponent < 0 ? QStringLiteral("⁻") : QString();
    for (QChar c : QString::number(std::abs(exponent))) out += digits[c.digitValue()];
    return QStringLiteral("2") + out;
}

HistogramCanvas::HistogramCanvas(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void HistogramCanvas::set_histogram(const ExponentCounts& counts, int exponent_shift,
                                    const QColor& color) {
    m_counts = counts;
    m_shift = exponent_shift;
    m_color = color;
    m_empty = counts.total() == 0;
    update();
}

void HistogramCanvas::clear() {
    m_counts = {};
    m_empty = true;
    update();
}

int HistogramCanvas::bar_count() const {
    if (m_empty) return 0;
    return static_cast<int>(
        std::count_if(m_counts.bins.begin(), m_counts.bins.end(), [](auto c) { return c > 0; }));
}

void HistogramCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, false);
    const QPalette pal = palette();
    const QColor bg = pal.color(QPalette::Base);
    const QColor fg = pal.color(QPalette::Text);
    const bool dark = is_dark(pal);
    p.fillRect(rect(), bg);
    QFont small = font();
    small.setPointSizeF(std::max(7.0, font().pointSizeF() * 0.85));
    p.setFont(small);
    const QFontMetrics fm(small);

    if (m_empty) {
        p.setPen(blend(bg, fg, 0.6));
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
                   tr("No gradient histogram yet: train a run (the trainer bins the gradients at "
                      "step 1 and every histogram_every steps)."));
        return;
    }

    // The visible exponents: every non-empty bin plus float16's whole range with a margin.
    int lo = kF16MinSubnormal - 4, hi = kF16Overflow + 1;
    for (int b = 1; b < kHistogramNonFiniteBin; ++b)
        if (m_counts.bins[static_cast<std::size_t>(b)] > 0) {
            const int e = b - 1 + kHistogramMinExp + m_shift;
            lo = std::min(lo, e - 1);
            hi = std::max(hi, e + 1);
        }
    const int slot_count = (hi - lo + 1) + 4; // zero, gap, exponents, gap, inf
    const int bottom_space = kAxis + 2 * (kStrip + kStripGap) + 4;
    const QRect plot(kLeft, kTop, width() - kLeft - kRight, height() - kTop - bottom_space);
    if (plot.width() < 40 || plot.height() < 30) return;
    const double slot = static_cast<double>(plot.width()) / slot_count;
    auto x_at = [&](double e) { return plot.left() + (2 + (e - lo)) * slot; }; // left edge of 2^e
    auto clamp_x = [&](double e) { return std::clamp(x_at(e), x_at(lo), x_at(hi + 1)); };

    // Bands behind the bars: what float16 does with a value of that size.
    struct Band {
        int from, to;
        QColor color;
        QString label, short_label; // the short one when the band is narrow
    };
    const int alpha = dark ? 70 : 45;
    const Band bands[] = {
        {lo, kF16MinSubnormal, QColor(220, 50, 47, alpha), tr("underflow → 0"), tr("→ 0")},
        {kF16MinSubnormal, kF16MinNormal, QColor(230, 150, 0, alpha), tr("fp16 subnormal"),
         tr("subnormal")},
        {kF16MinNormal, kF16Overflow, QColor(38, 139, 210, alpha), tr("float16 normal"),
         tr("normal")},
        {kF16Overflow, hi + 1, QColor(220, 50, 47, alpha), tr("overflow → inf"), tr("→ inf")}};
    for (const Band& band : bands) {
        const double x0 = clamp_x(band.from), x1 = clamp_x(band.to);
        if (x1 <= x0) continue;
        p.fillRect(QRectF(x0, plot.top(), x1 - x0, plot.height()), band.color);
        for (const QString& label : {band.label, band.short_label})
            if (fm.horizontalAdvance(label) + 4 <= x1 - x0) {
                p.setPen(blend(bg, fg, 0.75));
                p.drawText(QRectF(x0, 2, x1 - x0, kTop - 3), Qt::AlignCenter, label);
                break;
            }
    }

    // Bars: percent of all values per bin.
    const double total = static_cast<double>(m_counts.total());
    double top = 0;
    for (auto c : m_counts.bins) top = std::max(top, 100.0 * static_cast<double>(c) / total);
    const double y_max = nice_ceiling(top);
    const QColor grid = blend(bg, fg, 0.15);
    p.setPen(QPen(grid, 1));
    for (int i = 0; i <= 4; ++i) {
        const double y = plot.bottom() - i * plot.height() / 4.0;
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    }
    p.setPen(blend(bg, fg, 0.8));
    for (int i = 0; i <= 4; ++i) {
        const double y = plot.bottom() - i * plot.height() / 4.0;
        const double v = y_max * i / 4.0;
        p.drawText(QRectF(0, y - 8, kLeft - 4, 16), Qt::AlignRight | Qt::AlignVCenter,
                   QString::number(v, 'g', 3) + "%");
    }
    auto bar = [&](double x0, double x1, std::int64_t count, const QColor& color) {
        if (count <= 0) return;
        const double h = plot.height() * (100.0 * static_cast<double>(count) / total) / y_max;
        p.fillRect(QRectF(x0 + 0.5, plot.bottom() - std::max(h, 1.0), std::max(x1 - x0 - 1, 1.0),
                          std::max(h, 1.0)),
                   color);
    };
    for (int b = 1; b < kHistogramNonFiniteBin; ++b) {
        const int e = b - 1 + kHistogramMinExp + m_shift;
        bar(x_at(e), x_at(e + 1), m_counts.bins[static_cast<std::size_t>(b)], m_color);
    }
    const QColor special = blend(bg, fg, 0.55);
    bar(plot.left(), plot.left() + slot, m_counts.zeros(), special);
    bar(plot.right() - slot, plot.right(), m_counts.non_finite(), QColor(220, 50, 47));

    // Axis and labels: multiples of 2, 4, 8 or 16 so 2^-24 and 2^16 are always labelled.
    p.setPen(QPen(blend(bg, fg, 0.6), 1));
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
    int step = 1;
    while (step * slot < fm.horizontalAdvance(power_of_two_label(-100)) + 6 && step < 64) step *= 2;
    p.setPen(blend(bg, fg, 0.85));
    for (int e = lo; e <= hi + 1; ++e) {
        if (e % step != 0 || e < lo + 2) continue; // keep clear of the "0" slot's label
        const double x = x_at(e);
        p.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 3));
        p.drawText(QRectF(x - 30, plot.bottom() + 3, 60, kAxis - 3),
                   Qt::AlignHCenter | Qt::AlignTop, power_of_two_label(e));
    }
    p.drawText(QRectF(plot.left() - 10, plot.bottom() + 3, slot + 20, kAxis - 3),
               Qt::AlignHCenter | Qt::AlignTop, "0");
    p.drawText(QRectF(plot.right() - slot - 14, plot.bottom() + 3, slot + 28, kAxis - 3),
               Qt::AlignHCenter | Qt::AlignTop, "inf");

    // Range strips: where each format has normal and subnormal values.
    auto strip = [&](int row, const QString& name, int min_sub, int min_normal, int overflow) {
        const double y = plot.bottom() + kAxis + row * (kStrip + kStripGap);
        p.setPen(blend(bg, fg, 0.85));
        p.drawText(QRectF(0, y - 2, kLeft - 4, kStrip + 4), Qt::AlignRight | Qt::AlignVCenter,
                   name);
        const double s0 = clamp_x(min_sub), s1 = clamp_x(min_normal), n1 = clamp_x(overflow);
        if (s1 > s0) p.fillRect(QRectF(s0, y, s1 - s0, kStrip), QColor(230, 150, 0, 150));
        if (n1 > s1) p.fillRect(QRectF(s1, y, n1 - s1, kStrip), QColor(38, 139, 210, 170));
    };
    strip(0, "fp16", kF16MinSubnormal, kF16MinNormal, kF16Overflow);
    strip(1, "bf16", kBf16MinSubnormal, kBf16MinNormal, kBf16Overflow);
}

} // namespace mantissa::ui
