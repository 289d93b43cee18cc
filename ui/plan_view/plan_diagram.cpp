// PlanDiagram painting: input, one box per layer, the loss; casts are amber pills on the arrows
// (activations) and a violet "weights ⇄" tag on the box (master weights cast every step).
#include "ui/plan_view/plan_diagram.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "ui/float_lab/lab_style.h"
#include "ui/window/theme.h"

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
    return QSize(
        std::max(fontMetrics().horizontalAdvance(QStringLiteral("M")) * 18, needed_width()),
        2 * kMargin + boxes * box_height() + links * marker_height() / 10);
}

QSize PlanDiagram::minimumSizeHint() const {
    // As wide as the longest name, dtype, subtitle or shape and tag need: labels are never cut.
    return QSize(
        std::max(fontMetrics().horizontalAdvance(QStringLiteral("M")) * 12, needed_width()),
        sizeHint().height());
}

namespace {

struct DiagramBox {
    QRectF rect;
    DType dtype = DType::Float32;
    QString tip;
};

struct DiagramLink {
    double y = 0, height = 0;
    QRectF pill;  // empty without a cast
    QString text; // the pill's whole text (it may be elided on screen; the tooltip has it all)
};

struct DiagramLayout {
    std::vector<DiagramBox> boxes;
    std::vector<DiagramLink> links;
    std::vector<PlanLabel> labels;
};

struct DiagramMetrics {
    QFont normal, bold, small;
    int box_height = 0, marker_height = 0;
};

// The widest a cast pill's text is drawn: 44 average characters of its font.
double max_pill_text_width(const QFontMetricsF& font) {
    return 44.0 * font.averageCharWidth();
}

QString cast_text(const std::vector<std::string>& casts) {
    QString label = QStringLiteral("⇄ ");
    for (std::size_t i = 0; i < casts.size(); ++i)
        label += (i ? QStringLiteral(", ") : QString()) + qs(casts[i]);
    return label;
}

// Where every box, arrow and label goes at `width`: one walk shared by painting, tooltips and
// the tests, so what is measured is what is drawn.
DiagramLayout lay_out(const PlanDigest& digest, const DiagramMetrics& m, int width) {
    DiagramLayout out;
    const double w = width - 2 * kMargin;
    double y = kMargin;
    const QFontMetricsF bold(m.bold), small(m.small);
    auto add_box = [&](const QString& title, const QString& subtitle, const QString& shape,
                       DType dtype, const QString& tag, const QString& tip) {
        const QRectF r(kMargin, y, w, m.box_height);
        out.boxes.push_back({r, dtype, tip});
        const QRectF inner = r.adjusted(16, 6, -10, -6);
        const double line = inner.height() / 3;
        const QString dtype_label = dtype_text(dtype);
        const double dtype_w = bold.horizontalAdvance(dtype_label);
        auto label = [&](PlanLabel::Kind kind, const QString& text, const QFont& font,
                         const QRectF& rect, Qt::Alignment align) {
            out.labels.push_back({kind, text, font, rect, align, dtype});
        };
        // Top line: the name on the left, the dtype on the right, a gap between them.
        label(PlanLabel::Kind::Dtype, dtype_label, m.bold,
              QRectF(inner.right() - dtype_w, inner.top(), dtype_w, line),
              Qt::AlignRight | Qt::AlignVCenter);
        label(PlanLabel::Kind::Title, title, m.bold,
              QRectF(inner.left(), inner.top(), inner.width() - dtype_w - 8, line),
              Qt::AlignLeft | Qt::AlignVCenter);
        label(PlanLabel::Kind::Subtitle, subtitle, m.normal,
              QRectF(inner.left(), inner.top() + line, inner.width(), line),
              Qt::AlignLeft | Qt::AlignVCenter);
        // Bottom line: the shape on the left, the weights tag (if any) on the right.
        const double tag_w = tag.isEmpty() ? 0 : small.horizontalAdvance(tag);
        if (!shape.isEmpty())
            label(PlanLabel::Kind::Shape, shape, m.small,
                  QRectF(inner.left(), inner.top() + 2 * line,
                         inner.width() - (tag.isEmpty() ? 0 : tag_w + 8), line),
                  Qt::AlignLeft | Qt::AlignVCenter);
        if (!tag.isEmpty())
            label(PlanLabel::Kind::WeightsTag, tag, m.small,
                  QRectF(inner.right() - tag_w, inner.top() + 2 * line, tag_w, line),
                  Qt::AlignRight | Qt::AlignVCenter);
        y += m.box_height;
    };
    auto add_link = [&](const std::vector<std::string>& casts) {
        DiagramLink link;
        link.y = y;
        link.height = casts.empty() ? m.marker_height * 0.6 : m.marker_height;
        if (!casts.empty()) {
            const QString text = cast_text(casts);
            link.text = text;
            // A quantise step's text is long ("quantize: float8_e4m3 per tensor, delayed scale
            // (amax max over 1024 steps)"): the pill is elided rather than widen the diagram past
            // a laptop screen; its tooltip and the step table have it whole. The cap only keeps
            // the diagram's minimum narrow: a wider diagram shows as much of the text as fits.
            const double text_w = std::min(bold.horizontalAdvance(text),
                                           std::max(max_pill_text_width(bold), w - 20.0));
            const double lw = std::min(w, text_w + 20.0);
            const double x = kMargin + w / 2;
            link.pill = QRectF(x - lw / 2, y + (link.height - bold.height() - 6) / 2.0, lw,
                               bold.height() + 6);
            out.labels.push_back({PlanLabel::Kind::Cast, text, m.bold,
                                  link.pill.adjusted(std::min(10.0, (lw - text_w) / 2), 0,
                                                     -std::min(10.0, (lw - text_w) / 2), 0),
                                  Qt::AlignCenter, DType::Float32});
        }
        out.links.push_back(link);
        y += link.height;
    };

    add_box(QStringLiteral("input"), QStringLiteral("batch %1").arg(digest.batch_size), {},
            digest.input_dtype, {},
            QStringLiteral("The input batch, gathered and normalised on the device."));
    for (const PlanLayerBox& box : digest.layers) {
        add_link(box.input_casts);
        QString subtitle = qs(box.type);
        if (!box.detail.empty()) subtitle += QStringLiteral(" ") + qs(box.detail);
        QString tip = QStringLiteral("%1: %2 → %3\npolicy %4: computes in %5, variables in %6")
                          .arg(qs(box.name), subtitle, qs(box.output_shape), qs(box.policy),
                               dtype_text(box.compute), dtype_text(box.variable));
        if (box.weight_casts > 0)
            tip += QStringLiteral("\nIts %1 weights are cast to %2 every step (%3 copies, "
                                  "written by the optimizer as it updates the weights; as many "
                                  "gradients cast back, by the optimizer too without loss "
                                  "scaling).")
                       .arg(dtype_text(box.variable), dtype_text(box.compute))
                       .arg(box.weight_casts);
        add_box(qs(box.name), subtitle, QStringLiteral("→ ") + qs(box.output_shape), box.output,
                box.weight_casts > 0 ? QStringLiteral("⇄ weights") : QString(), tip);
    }
    add_link({});
    add_box(QStringLiteral("loss"), QStringLiteral("softmax cross-entropy"), {}, digest.loss_dtype,
            {}, QStringLiteral("Softmax cross-entropy, fused, in the dtype of the logits."));
    return out;
}

} // namespace

QFont PlanDiagram::title_font() const {
    return lab::scaled_font(font(), 1.0, true);
}

QFont PlanDiagram::small_font() const {
    return lab::scaled_font(font(), 0.88);
}

std::vector<PlanLabel> PlanDiagram::labels(int width) const {
    if (!m_valid) return {};
    return lay_out(m_digest, {font(), title_font(), small_font(), box_height(), marker_height()},
                   width)
        .labels;
}

int PlanDiagram::needed_width() const {
    // Lay out at width 0: every label's rectangle is then short by exactly the box's width, so
    // the widest shortfall is the width the boxes need.
    if (!m_valid) return 0;
    double needed = 0;
    for (const PlanLabel& label : labels(0)) {
        const double text = QFontMetricsF(label.font).horizontalAdvance(label.text);
        if (label.kind == PlanLabel::Kind::Cast) // a pill: the text, its padding, the margins
            needed =
                std::max(needed, std::min(text, max_pill_text_width(QFontMetricsF(label.font))) +
                                     20.0 + 2 * kMargin);
        else
            needed = std::max(needed, text - label.rect.width());
    }
    return static_cast<int>(std::ceil(needed)) + 1;
}

void PlanDiagram::paintEvent(QPaintEvent*) {
    if (!m_valid) return;
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    const QColor window = pal.color(QPalette::Window), text = pal.color(QPalette::WindowText);
    const QColor amber = lab::underflow_colour(pal), violet = lab::subnormal_colour(pal);
    const DiagramLayout layout = lay_out(
        m_digest, {font(), title_font(), small_font(), box_height(), marker_height()}, width());

    m_tips.clear();
    for (const DiagramBox& box : layout.boxes) {
        const QColor c = dtype_colour(box.dtype, pal);
        m_tips.push_back({box.rect, box.tip});
        p.setPen(QPen(c, 2));
        p.setBrush(blend(window, c, 0.20));
        p.drawRoundedRect(box.rect, 6, 6);
        // The dtype stripe on the left edge.
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawRoundedRect(QRectF(box.rect.left(), box.rect.top(), 8, box.rect.height()), 3, 3);
    }
    const double x = width() / 2.0;
    for (const DiagramLink& link : layout.links) {
        p.setPen(QPen(blend(window, text, 0.55), 2));
        p.drawLine(QPointF(x, link.y), QPointF(x, link.y + link.height));
        p.setBrush(blend(window, text, 0.55));
        const QPointF tip(x, link.y + link.height);
        const QPointF head[] = {tip, tip + QPointF(-5, -7), tip + QPointF(5, -7)};
        p.drawPolygon(head, 3);
        if (link.pill.isEmpty()) continue;
        m_tips.push_back({link.pill, link.text.toHtmlEscaped() +
                                         QStringLiteral("<br>A cast step the policy inserts here, "
                                                        "every step (and its gradient cast back in "
                                                        "the backward pass).")});
        p.setPen(QPen(amber, 1.5));
        p.setBrush(blend(window, amber, 0.25));
        p.drawRoundedRect(link.pill, link.pill.height() / 2, link.pill.height() / 2);
    }
    for (const PlanLabel& label : layout.labels) {
        switch (label.kind) {
        case PlanLabel::Kind::Dtype:
            p.setPen(dtype_colour(label.dtype, pal));
            break;
        case PlanLabel::Kind::Title:
        case PlanLabel::Kind::Subtitle:
            p.setPen(text);
            break;
        case PlanLabel::Kind::Shape:
            p.setPen(blend(window, text, 0.7));
            break;
        case PlanLabel::Kind::WeightsTag:
            p.setPen(violet);
            break;
        case PlanLabel::Kind::Cast:
            p.setPen(amber.darker(is_dark(pal) ? 100 : 130));
            break;
        }
        p.setFont(label.font);
        // Never elided but a cast pill: the widget is at least needed_width() wide (see
        // minimumSizeHint()), and a pill's text is capped at max_pill_text_width().
        const QString shown =
            label.kind == PlanLabel::Kind::Cast
                ? QFontMetricsF(label.font)
                      .elidedText(label.text, Qt::ElideRight, label.rect.width() + 0.5)
                : label.text;
        p.drawText(label.rect, static_cast<int>(label.align), shown);
    }
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
