// BitsWidget painting and hit-testing. A set bit is a filled cell in its field's colour, a clear
// bit an outlined one, so the pattern reads at a glance from the back of a lecture hall.
#include "ui/float_lab/bits_widget.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include "core/numeric/float_format.h"
#include "ui/float_lab/lab_style.h"
#include "ui/window/theme.h"

namespace mantissa::ui {

BitsWidget::BitsWidget(DType dtype, QWidget* parent) : QWidget(parent), m_dtype(dtype) {
    const FloatFormat& f = float_format(dtype);
    m_exponent_bits = f.exponent_bits;
    m_mantissa_bits = f.mantissa_bits;
    m_width = 1 + m_exponent_bits + m_mantissa_bits;
    setFont(lab::scaled_font(font(), 1.25, true));
    setMouseTracking(true);
    setCursor(Qt::PointingHandCursor);
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

void BitsWidget::set_bits(std::uint64_t bits) {
    if (bits == m_bits) return;
    m_bits = bits;
    update();
}

int BitsWidget::cell_width() const {
    // Narrow enough that float32's 32 cells and the table's other columns fit 1280 pixels.
    return fontMetrics().horizontalAdvance(QLatin1Char('0')) + 6;
}

int BitsWidget::cell_height() const {
    return fontMetrics().height() + 14;
}

QRect BitsWidget::bit_rect(int index) const {
    if (index < 0 || index >= m_width) return {};
    const int position = m_width - 1 - index; // drawn most significant first
    int x = position * cell_width();
    if (position >= 1) x += gap();                   // after the sign
    if (position >= 1 + m_exponent_bits) x += gap(); // after the exponent
    return QRect(x + 1, 1, cell_width() - 2, cell_height() - 2);
}

int BitsWidget::bit_at(const QPoint& point) const {
    for (int i = 0; i < m_width; ++i)
        if (bit_rect(i).contains(point)) return i;
    return -1;
}

QSize BitsWidget::sizeHint() const {
    return QSize(m_width * cell_width() + 2 * gap() + 2, cell_height() + 2);
}

QString BitsWidget::bit_description(int index) const {
    const FloatFormat& f = float_format(m_dtype);
    QString what;
    if (index == m_width - 1) {
        what = QStringLiteral("sign bit: 1 makes the value negative");
    } else if (index >= m_mantissa_bits) {
        const int e = index - m_mantissa_bits;
        what = QStringLiteral("exponent bit %1: adds %2 to the biased exponent (bias %3), "
                              "scaling the value by 2^%2")
                   .arg(e)
                   .arg(1 << e)
                   .arg(f.exponent_bias);
    } else {
        what = QStringLiteral("mantissa bit %1: worth 2^-%2 of the leading 1")
                   .arg(index)
                   .arg(m_mantissa_bits - index);
    }
    return what + QStringLiteral("\nClick to flip it.");
}

void BitsWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    const QColor base = pal.color(QPalette::Base);
    for (int i = 0; i < m_width; ++i) {
        const lab::BitField field = i == m_width - 1       ? lab::BitField::Sign
                                    : i >= m_mantissa_bits ? lab::BitField::Exponent
                                                           : lab::BitField::Mantissa;
        const QColor colour = lab::field_colour(field, pal);
        const bool set = (m_bits >> i) & 1;
        const QRectF r = QRectF(bit_rect(i)).adjusted(0.5, 0.5, -0.5, -0.5);
        p.setPen(QPen(colour, i == m_hover ? 2.5 : 1.2));
        p.setBrush(set ? colour : blend(base, colour, 0.10));
        p.drawRoundedRect(r, 3, 3);
        p.setPen(set ? (is_dark(pal) ? QColor(0x10, 0x10, 0x10) : QColor(Qt::white)) : colour);
        p.drawText(r, Qt::AlignCenter, set ? QStringLiteral("1") : QStringLiteral("0"));
    }
}

void BitsWidget::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
    const int index = bit_at(event->position().toPoint());
    if (index >= 0) emit bit_clicked(index);
}

void BitsWidget::mouseMoveEvent(QMouseEvent* event) {
    const int index = bit_at(event->position().toPoint());
    if (index != m_hover) {
        m_hover = index;
        update();
    }
}

void BitsWidget::leaveEvent(QEvent* event) {
    m_hover = -1;
    update();
    QWidget::leaveEvent(event);
}

bool BitsWidget::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int index = bit_at(help->pos());
        if (index >= 0)
            QToolTip::showText(help->globalPos(),
                               toolTip().isEmpty() ? bit_description(index)
                                                   : toolTip() + "\n\n" + bit_description(index),
                               this, bit_rect(index));
        else if (!toolTip().isEmpty()) // between cells: what the format is
            QToolTip::showText(help->globalPos(), toolTip(), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void BitsWidget::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) update();
    QWidget::changeEvent(event);
}

} // namespace mantissa::ui
