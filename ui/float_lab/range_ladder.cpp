// RangeLadder painting. The axis is log2 so every binade is the same width: float16's 40 binades
// look as narrow as they are next to float32's 277. Wide formats run off the window with an arrow.
#include "ui/float_lab/range_ladder.h"

#include <QEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "core/numeric/float_format.h"
#include "ui/float_lab/lab_style.h"
#include "ui/window/theme.h"

namespace mantissa::ui {

namespace {

QString dtype_text(DType dtype) {
    const std::string_view name = dtype_name(dtype);
    return QString::fromUtf8(name.data(), static_cast<int>(name.size()));
}

QString power_of_ten(int exponent) {
    return exponent == 0 ? QStringLiteral("1") : QStringLiteral("1e%1").arg(exponent);
}

} // namespace

RangeLadder::RangeLadder(QWidget* parent) : QWidget(parent) {
    setFont(lab::scaled_font(font(), 1.05));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setToolTip("Each bar is a format's range on a log scale: the pale part holds subnormals "
               "(less precision), the solid part normal values, up to the largest finite value. "
               "The vertical line is |x|.");
}

int RangeLadder::lane_height() const {
    // At least two text lines; more when the tab has room (the lanes share the height).
    const int minimum = fontMetrics().height() * 2 + 18;
    const int lanes = static_cast<int>(lab::lab_dtypes().size());
    const int room = (height() - top_margin() - fontMetrics().height() - 16) / lanes;
    return std::clamp(room, minimum, minimum * 2);
}
int RangeLadder::left_margin() const {
    return fontMetrics().horizontalAdvance(QStringLiteral("float8_e4m3")) + 24;
}
int RangeLadder::right_margin() const {
    // The lane's status is drawn bold; "overflow→nan" is the longest.
    const QFontMetrics bold(lab::scaled_font(font(), 1.0, true));
    return bold.horizontalAdvance(QStringLiteral("overflow→nan")) + 28;
}
int RangeLadder::top_margin() const {
    return fontMetrics().height() + 10;
}

QSize RangeLadder::sizeHint() const {
    const int lanes = static_cast<int>(lab::lab_dtypes().size());
    const int lane = fontMetrics().height() * 2 + 18;
    return QSize(900, top_margin() + lanes * lane + fontMetrics().height() + 16);
}

QSize RangeLadder::minimumSizeHint() const {
    return QSize(left_margin() + right_margin() + 300, sizeHint().height());
}

void RangeLadder::set_value(double value) {
    m_value = value;
    // Keep |x| inside the window with two binades to spare; float32's range is the outer limit.
    m_min = -40, m_max = 40;
    const double a = std::fabs(value);
    if (std::isfinite(a) && a > 0) {
        const double l = std::log2(a);
        m_min = std::max(-152.0, std::min(m_min, std::floor(l) - 4));
        m_max = std::min(130.0, std::max(m_max, std::ceil(l) + 4));
    }
    update();
}

QString RangeLadder::lane_status(DType dtype) const {
    return QString::fromUtf8(cast_outcome_label(inspect_value(m_value, dtype).outcome));
}

double RangeLadder::x_for(double log2_value) const {
    const double left = left_margin(), right = width() - right_margin();
    return left + (log2_value - m_min) / (m_max - m_min) * (right - left);
}

double RangeLadder::marker_x() const {
    const double a = std::fabs(m_value);
    if (!std::isfinite(a) || a == 0) return std::nan("");
    return x_for(std::log2(a));
}

void RangeLadder::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    const QColor text = pal.color(QPalette::WindowText);
    const QColor grid = blend(pal.color(QPalette::Window), text, 0.18);
    const QFont normal_font = font();
    const QFont small_font = lab::scaled_font(font(), 0.85);
    const double left = left_margin(), right = width() - right_margin();
    const int top = top_margin();
    const int lanes = static_cast<int>(lab::lab_dtypes().size());
    const int bottom = top + lanes * lane_height();

    // Decades: a faint grid with 1eN labels under the lanes.
    p.setFont(small_font);
    const int first = static_cast<int>(std::ceil(m_min / std::log2(10.0)));
    const int last = static_cast<int>(std::floor(m_max / std::log2(10.0)));
    const int step = std::max(1, (last - first) / 12 + 1);
    for (int d = first; d <= last; ++d) {
        if (d % step != 0) continue;
        const double x = x_for(d * std::log2(10.0));
        p.setPen(QPen(grid, d == 0 ? 1.6 : 1.0));
        p.drawLine(QPointF(x, top - 4), QPointF(x, bottom));
        p.setPen(blend(pal.color(QPalette::Window), text, 0.7));
        p.drawText(QRectF(x - 40, bottom + 2, 80, fontMetrics().height() + 8),
                   Qt::AlignHCenter | Qt::AlignTop, power_of_ten(d));
    }

    // One lane per format: the subnormal stretch pale, the normal stretch solid.
    const QColor normal_colour = lab::field_colour(lab::BitField::Exponent, pal);
    const QColor subnormal = lab::subnormal_colour(pal);
    for (int i = 0; i < lanes; ++i) {
        const DType dtype = lab::lab_dtypes()[static_cast<std::size_t>(i)];
        const FloatFormat& f = float_format(dtype);
        const double y = top + i * lane_height() + lane_height() * 0.30;
        const double bar_h = std::min(lane_height() * 0.28, fontMetrics().height() * 0.9);
        p.setFont(lab::scaled_font(normal_font, 1.0, true));
        p.setPen(text);
        p.drawText(QRectF(8, y - 6, left - 16, bar_h + 12), Qt::AlignLeft | Qt::AlignVCenter,
                   dtype_text(dtype));
        auto clamp_x = [&](double l) { return std::clamp(x_for(l), left, right); };
        const double x_sub = clamp_x(std::log2(f.min_subnormal));
        const double x_norm = clamp_x(std::log2(f.min_normal));
        const double x_max = clamp_x(std::log2(f.max_finite));
        p.setPen(Qt::NoPen);
        p.setBrush(blend(pal.color(QPalette::Window), subnormal, 0.45));
        p.drawRect(QRectF(x_sub, y, x_norm - x_sub, bar_h));
        p.setBrush(normal_colour);
        p.drawRect(QRectF(x_norm, y, x_max - x_norm, bar_h));
        // A range that runs past the window ends in an arrow.
        auto arrow = [&](double x, double dir) {
            QPainterPath path;
            path.moveTo(x + dir * 10, y + bar_h / 2);
            path.lineTo(x, y - 3);
            path.lineTo(x, y + bar_h + 3);
            path.closeSubpath();
            p.drawPath(path);
        };
        if (std::log2(f.max_finite) > m_max) arrow(right, 1);
        if (std::log2(f.min_subnormal) < m_min) {
            p.setBrush(blend(pal.color(QPalette::Window), subnormal, 0.45));
            arrow(left, -1);
        }
        // The three limits, labelled under the bar (alternating sides would collide on fp8).
        p.setFont(small_font);
        p.setPen(blend(pal.color(QPalette::Window), text, 0.8));
        const double label_y = y + bar_h + 2;
        const double h = QFontMetrics(small_font).height() + 2;
        auto label = [&](double log2_value, double value, Qt::Alignment align) {
            if (log2_value < m_min || log2_value > m_max) return;
            const double x = x_for(log2_value);
            const QRectF r = align & Qt::AlignRight  ? QRectF(x - 110, label_y, 110, h)
                             : align & Qt::AlignLeft ? QRectF(x, label_y, 110, h)
                                                     : QRectF(x - 55, label_y, 110, h);
            // The max exactly (65504, 57344, 448); the small limits to 3 digits.
            p.drawText(r, align | Qt::AlignTop, lab::format_number(value, value > 1 ? 6 : 3));
        };
        label(std::log2(f.min_subnormal), f.min_subnormal, Qt::AlignRight);
        if (std::log2(f.min_normal) - std::log2(f.min_subnormal) > 6)
            label(std::log2(f.min_normal), f.min_normal, Qt::AlignLeft);
        label(std::log2(f.max_finite), f.max_finite, Qt::AlignRight);
        // Limits outside the window are named at the arrow that points to them.
        if (std::log2(f.min_subnormal) < m_min)
            p.drawText(QRectF(left, label_y, 160, h), Qt::AlignLeft | Qt::AlignTop,
                       QStringLiteral("← ") + lab::format_number(f.min_subnormal, 3));
        if (std::log2(f.max_finite) > m_max)
            p.drawText(QRectF(right - 160, label_y, 160, h), Qt::AlignRight | Qt::AlignTop,
                       lab::format_number(f.max_finite, 3) + QStringLiteral(" →"));

        // Where the value falls, at the lane's end.
        const FloatInspection r = inspect_value(m_value, dtype);
        QColor status_colour = lab::outcome_colour(r.outcome, pal);
        if (!status_colour.isValid()) status_colour = text;
        p.setFont(lab::scaled_font(normal_font, 1.0, true));
        p.setPen(status_colour);
        p.drawText(QRectF(right + 14, y - 6, right_margin() - 14, bar_h + 12),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   QString::fromUtf8(cast_outcome_label(r.outcome)));
    }

    // The value's marker: a line through every lane, labelled at the top.
    const double mx = marker_x();
    if (!std::isnan(mx)) {
        const QColor marker = lab::field_colour(lab::BitField::Sign, pal);
        p.setPen(QPen(marker, 2.5));
        p.drawLine(QPointF(mx, top - 2), QPointF(mx, bottom));
        p.setFont(lab::scaled_font(normal_font, 1.0, true));
        const QString label = QStringLiteral("|x| = ") + lab::format_number(std::fabs(m_value), 6);
        const double w = fontMetrics().horizontalAdvance(label) * 1.1 + 8;
        const double lx = std::clamp(mx - w / 2, left, std::max(left, right - w));
        p.drawText(QRectF(lx, 0, w, top - 2), Qt::AlignCenter, label);
    }
}

void RangeLadder::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) update();
    QWidget::changeEvent(event);
}

} // namespace mantissa::ui
