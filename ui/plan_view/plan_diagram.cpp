// PlanDiagram painting: input, one box per layer, the loss; casts are amber pills on the arrows
// (activations) and a violet "weights ⇄" tag on the box (master weights cast every step).
#include "ui/plan_view/plan_diagram.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "ui/float_lab/lab_style.h"
#include "ui/theme.h"

namespace mantissa::ui {

namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QString dtype_text(DType dtype) {
    const std::string_view name = dtype_name(dtype);
    return QString::fromUtf8(name.data(), static_cast<int>(name.size()));
}

constexpr int kMargin = 12;

} // namespace

PlanDiagram::PlanDiagram(QWidget* parent) : QWidget(parent) {
    setFont(lab::scaled_font(font(), 1.05));
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

QColor PlanDiagram::dtype_colour(DType dtype, const QPalette& palette) {
    const bool dark = is_dark(palette);
    switch (dtype) {
    case DType::Float64:
        return dark ? QColor(0xb0, 0xb0, 0xb0) : QColor(0x60, 0x60, 0x60);
    case DType::Float32:
        return dark ? QColor(0x56, 0xB4, 0xE9) : QColor(0x00, 0x72, 0xB2);
    case DType::Float16:
        return dark ? QColor(0xf0, 0xa0, 0x30) : QColor(0xE6, 0x9F, 0x00);
    case DType::BFloat16:
        return dark ? QColor(0x3d, 0xd6, 0xa3) : QColor(0x00, 0x9E, 0x73);
    case DType::Float8E4M3:
    case DType::Float8E5M2:
        return dark ? QColor(0xff, 0x8a, 0x50) : QColor(0xD5, 0x5E, 0x00);
    default:
        return palette.color(QPalette::Mid);
    }
}

void PlanDiagram::set_digest(const PlanDigest& digest) {
    m_digest = digest;
    m_valid = true;
    updateGeometry();
    update();
}

void PlanDiagram::clear() {
    m_valid = false;
    m_digest = {};
    updateGeometry();
    update();
}

int PlanDiagram::cast_markers() const {
    int n = 0;
    for (const PlanLayerBox& box : m_digest.layers) n += static_cast<int>(box.input_casts.size());
    return n;
}

int PlanDiagram::box_height() const {
    return fontMetrics().height() * 3 + 14; // name and dtype; type; shape and weight casts
}

int PlanDiagram::marker_height() const {
    return fontMetrics().height() + 18;
}

QSize PlanDiagram::sizeHint() const {
    if (!m_valid) return QSize(320, 100);
    const int boxes = static_cast<int>(m_digest.layers.size()) + 2; // input, layers, loss
    int links = 0; // a link with a cast is taller than a plain arrow
    for (const PlanLayerBox& box : m_digest.layers) links += box.input_casts.empty() ? 6 : 10;
    links += 6;
    return QSize(fontMetrics().horizontalAdvance(QStringLiteral("M")) * 18,
                 2 * kMargin + boxes * box_height() + links * marker_height() / 10);
}

QSize PlanDiagram::minimumSizeHint() const {
    return QSize(fontMetrics().horizontalAdvance(QStringLiteral("M")) * 15, sizeHint().height());
}

void PlanDiagram::paintEvent(QPaintEvent*) {
    if (!m_valid) return;
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    const QColor window = pal.color(QPalette::Window), text = pal.color(QPalette::WindowText);
    const QColor amber = lab::underflow_colour(pal), violet = lab::subnormal_colour(pal);
    const QFont normal = font(), bold = lab::scaled_font(font(), 1.0, true);
    const QFont small = lab::scaled_font(font(), 0.88);
    const double w = width() - 2 * kMargin;
    double y = kMargin;

    m_tips.clear();
    auto draw_box = [&](const QString& title, const QString& subtitle, const QString& shape,
                        DType dtype, const QString& tag, const QString& tip) {
        const QColor c = dtype_colour(dtype, pal);
        const QRectF r(kMargin, y, w, box_height());
        m_tips.push_back({r, tip});
        p.setPen(QPen(c, 2));
        p.setBrush(blend(window, c, 0.20));
        p.drawRoundedRect(r, 6, 6);
        // The dtype stripe on the left edge.
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawRoundedRect(QRectF(r.left(), r.top(), 8, r.height()), 3, 3);
        const QRectF inner = r.adjusted(16, 6, -10, -6);
        p.setFont(bold);
        p.setPen(c);
        const QString dtype_label = dtype_text(dtype);
        p.drawText(inner, Qt::AlignRight | Qt::AlignTop, dtype_label);
        const double title_w =
            inner.width() - QFontMetrics(bold).horizontalAdvance(dtype_label) - 8;
        p.setPen(text);
        p.drawText(QRectF(inner.left(), inner.top(), title_w, inner.height()),
                   Qt::AlignLeft | Qt::AlignTop,
                   QFontMetrics(bold).elidedText(title, Qt::ElideRight, int(title_w)));
        p.setFont(normal);
        p.setPen(text);
        p.drawText(inner, Qt::AlignLeft | Qt::AlignVCenter,
                   QFontMetrics(normal).elidedText(subtitle, Qt::ElideRight, int(inner.width())));
        p.setFont(small);
        p.setPen(blend(window, text, 0.7));
        p.drawText(inner, Qt::AlignLeft | Qt::AlignBottom, shape);
        if (!tag.isEmpty()) {
            p.setPen(violet);
            p.drawText(inner, Qt::AlignRight | Qt::AlignBottom, tag);
        }
        y += box_height();
    };
    auto draw_link = [&](const std::vector<std::string>& casts) {
        const double x = kMargin + w / 2;
        const double h = casts.empty() ? marker_height() * 0.6 : marker_height();
        p.setPen(QPen(blend(window, text, 0.55), 2));
        p.drawLine(QPointF(x, y), QPointF(x, y + h));
        p.setBrush(blend(window, text, 0.55));
        const QPointF tip(x, y + h);
        const QPointF head[] = {tip, tip + QPointF(-5, -7), tip + QPointF(5, -7)};
        p.drawPolygon(head, 3);
        if (!casts.empty()) {
            QString label = QStringLiteral("⇄ ");
            for (std::size_t i = 0; i < casts.size(); ++i)
                label += (i ? QStringLiteral(", ") : QString()) + qs(casts[i]);
            p.setFont(bold);
            const QFontMetrics fm(bold);
            const double lw = std::min(w, fm.horizontalAdvance(label) + 20.0);
            const QRectF pill(x - lw / 2, y + (h - fm.height() - 6) / 2.0, lw, fm.height() + 6);
            m_tips.push_back({pill, QStringLiteral("A cast step the policy inserts here, every "
                                                   "step (and its gradient cast back in the "
                                                   "backward pass).")});
            p.setPen(QPen(amber, 1.5));
            p.setBrush(blend(window, amber, 0.25));
            p.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2);
            p.setPen(amber.darker(is_dark(pal) ? 100 : 130));
            p.drawText(pill, Qt::AlignCenter, label);
        }
        y += h;
    };

    draw_box(QStringLiteral("input"), QStringLiteral("batch %1").arg(m_digest.batch_size), {},
             m_digest.input_dtype, {},
             QStringLiteral("The input batch, gathered and normalised on the device."));
    for (const PlanLayerBox& box : m_digest.layers) {
        draw_link(box.input_casts);
        QString subtitle = qs(box.type);
        if (!box.detail.empty()) subtitle += QStringLiteral(" ") + qs(box.detail);
        QString tip = QStringLiteral("%1: %2 → %3\npolicy %4: computes in %5, variables in %6")
                          .arg(qs(box.name), subtitle, qs(box.output_shape), qs(box.policy),
                               dtype_text(box.compute), dtype_text(box.variable));
        if (box.weight_casts > 0)
            tip += QStringLiteral("\nIts %1 weights are cast to %2 every step (%3 casts "
                                  "forward, as many gradients cast back).")
                       .arg(dtype_text(box.variable), dtype_text(box.compute))
                       .arg(box.weight_casts);
        draw_box(qs(box.name), subtitle, QStringLiteral("→ ") + qs(box.output_shape), box.output,
                 box.weight_casts > 0 ? QStringLiteral("⇄ weights") : QString(), tip);
    }
    draw_link({});
    draw_box(QStringLiteral("loss"), QStringLiteral("softmax cross-entropy"), {},
             m_digest.loss_dtype, {},
             QStringLiteral("Softmax cross-entropy, fused, in the dtype of the logits."));
}

bool PlanDiagram::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        for (const auto& [rect, tip] : m_tips)
            if (rect.contains(help->pos())) {
                QToolTip::showText(help->globalPos(), tip, this, rect.toRect());
                return true;
            }
        QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void PlanDiagram::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) update();
    QWidget::changeEvent(event);
}

} // namespace mantissa::ui
