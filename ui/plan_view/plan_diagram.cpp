// PlanDiagram painting: input, one box per layer, the loss; casts are amber pills on the arrows
// (activations) and a violet "weights ⇄" tag on the box (master weights cast every step).
#include "ui/plan_view/plan_diagram.h"

#include <QEvent>
#include <QPainter>

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
    return fontMetrics().height() * 2 + 16;
}

int PlanDiagram::marker_height() const {
    return fontMetrics().height() + 18;
}

QSize PlanDiagram::sizeHint() const {
    if (!m_valid) return QSize(320, 100);
    const int boxes = static_cast<int>(m_digest.layers.size()) + 2; // input, layers, loss
    return QSize(fontMetrics().horizontalAdvance(QStringLiteral("M")) * 30,
                 2 * kMargin + boxes * box_height() + (boxes - 1) * marker_height());
}

QSize PlanDiagram::minimumSizeHint() const {
    return QSize(fontMetrics().horizontalAdvance(QStringLiteral("M")) * 22, sizeHint().height());
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

    auto draw_box = [&](const QString& title, const QString& subtitle, DType dtype,
                        const QString& tag) {
        const QColor c = dtype_colour(dtype, pal);
        const QRectF r(kMargin, y, w, box_height());
        p.setPen(QPen(c, 2));
        p.setBrush(blend(window, c, 0.20));
        p.drawRoundedRect(r, 6, 6);
        // The dtype stripe on the left edge.
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawRoundedRect(QRectF(r.left(), r.top(), 8, r.height()), 3, 3);
        p.setPen(text);
        p.setFont(bold);
        const QRectF inner = r.adjusted(16, 6, -10, -6);
        p.drawText(inner, Qt::AlignLeft | Qt::AlignTop, title);
        p.setFont(normal);
        p.drawText(inner, Qt::AlignLeft | Qt::AlignBottom, subtitle);
        p.setFont(bold);
        p.setPen(c);
        p.drawText(inner, Qt::AlignRight | Qt::AlignTop, dtype_text(dtype));
        if (!tag.isEmpty()) {
            p.setFont(small);
            p.setPen(violet);
            p.drawText(inner, Qt::AlignRight | Qt::AlignBottom, tag);
        }
        y += box_height();
    };
    auto draw_link = [&](const std::vector<std::string>& casts) {
        const double x = kMargin + w / 2;
        p.setPen(QPen(blend(window, text, 0.55), 2));
        p.drawLine(QPointF(x, y), QPointF(x, y + marker_height()));
        // arrow head
        p.setBrush(blend(window, text, 0.55));
        const QPointF tip(x, y + marker_height());
        const QPointF head[] = {tip, tip + QPointF(-5, -7), tip + QPointF(5, -7)};
        p.drawPolygon(head, 3);
        if (!casts.empty()) {
            QString label = QStringLiteral("⇄ cast ");
            for (std::size_t i = 0; i < casts.size(); ++i)
                label += (i ? QStringLiteral(", ") : QString()) + qs(casts[i]);
            p.setFont(bold);
            const QFontMetrics fm(bold);
            const double lw = fm.horizontalAdvance(label) + 20;
            const QRectF pill(x - lw / 2, y + (marker_height() - fm.height() - 6) / 2.0, lw,
                              fm.height() + 6);
            p.setPen(QPen(amber, 1.5));
            p.setBrush(blend(window, amber, 0.25));
            p.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2);
            p.setPen(amber.darker(is_dark(pal) ? 100 : 130));
            p.drawText(pill, Qt::AlignCenter, label);
        }
        y += marker_height();
    };

    draw_box(QStringLiteral("input batch"),
             QStringLiteral("batch %1, gathered and normalised").arg(m_digest.batch_size),
             m_digest.input_dtype, {});
    for (const PlanLayerBox& box : m_digest.layers) {
        draw_link(box.input_casts);
        QString subtitle = qs(box.type);
        if (!box.detail.empty()) subtitle += QStringLiteral(" ") + qs(box.detail);
        subtitle += QStringLiteral("  → ") + qs(box.output_shape);
        const QString tag = box.weight_casts > 0
                                ? QStringLiteral("weights %1 ⇄ %2")
                                      .arg(dtype_text(box.variable), dtype_text(box.compute))
                                : QString();
        draw_box(qs(box.name) + QStringLiteral("  ·  ") + qs(box.policy), subtitle, box.compute,
                 tag);
    }
    draw_link({});
    draw_box(QStringLiteral("loss: softmax cross-entropy"), QStringLiteral("in the logits' dtype"),
             m_digest.loss_dtype, {});
}

void PlanDiagram::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) update();
    QWidget::changeEvent(event);
}

} // namespace mantissa::ui
