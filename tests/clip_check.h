// Clipping probes for GUI tests: does a chart title, an axis title, a tick label, a table header
// or a plan label get the room its text needs? Each probe measures the text with QFontMetrics
// against the space the widget gives it and returns one Clip per text that does not fit, so a
// test can print exactly what is cut where. Header-only, for any tst_gui_*.cpp.
#pragma once

#include <QAbstractAxis>
#include <QAbstractButton>
#include <QAbstractItemModel>
#include <QChart>
#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QHeaderView>
#include <QRegularExpression>
#include <QScrollArea>
#include <QString>
#include <QStringList>
#include <QStyle>
#include <QVector>
#include <QWidget>

#include "ui/plan_view/plan_diagram.h"

namespace clip_check {

struct Clip {
    QString where; // "loss chart: title", "layer table: header 'Params'"
    QString text;
    double needed = 0, given = 0; // pixels
};

inline QString describe(const QVector<Clip>& clips) {
    QStringList lines;
    for (const Clip& c : clips)
        lines.append(QStringLiteral("%1: '%2' needs %3 px, has %4 px")
                         .arg(c.where, c.text)
                         .arg(c.needed, 0, 'f', 1)
                         .arg(c.given, 0, 'f', 1));
    return lines.join(QLatin1Char('\n'));
}

// Adds a Clip when `text` in `font`, plus `padding`, is wider than `space` (half a pixel of
// rounding allowed).
inline void check_width(QVector<Clip>& out, const QString& where, const QString& text,
                        const QFont& font, double space, double padding = 0) {
    if (text.isEmpty()) return;
    const double needed = QFontMetricsF(font).horizontalAdvance(text) + padding;
    if (needed > space + 0.5) out.append({where, text, needed, space});
}

// The lines of a rich-text chart title, tags removed; `small` marks lines set in <small>.
struct TitleLine {
    QString text;
    bool small = false;
};
inline QVector<TitleLine> title_lines(const QString& title) {
    QVector<TitleLine> out;
    static const QRegularExpression br(QStringLiteral("<br\\s*/?>"),
                                       QRegularExpression::CaseInsensitiveOption);
    static const QRegularExpression tag(QStringLiteral("<[^>]*>"));
    for (const QString& line : title.split(br)) {
        TitleLine t;
        t.small = line.contains(QStringLiteral("<small>"), Qt::CaseInsensitive);
        t.text = QString(line).remove(tag).replace(QStringLiteral("&nbsp;"), QStringLiteral(" "));
        out.append(t);
    }
    return out;
}

// A laid-out chart: its title against the chart's width; each visible axis title against the
// plot's side it runs along; and every text item Qt Charts drew (tick labels, titles) for the
// "..." it puts where a text does not fit its share of the axis.
inline QVector<Clip> chart_clips(QChart* chart, const QString& name) {
    QVector<Clip> out;
    if (!chart || chart->size().isEmpty()) return out;
    const QMargins m = chart->margins();
    const double title_space = chart->size().width() - m.left() - m.right();
    for (const TitleLine& line : title_lines(chart->title())) {
        QFont font = chart->titleFont();
        if (line.small) font.setPointSizeF(font.pointSizeF() * 0.84);
        // Qt Charts draws titles in text items with a 4-pixel document margin on either side.
        check_width(out, name + QStringLiteral(": title"), line.text, font, title_space, 8);
    }
    const QRectF plot = chart->plotArea();
    for (QAbstractAxis* axis : chart->axes()) {
        if (!axis->isVisible() || !axis->isTitleVisible()) continue;
        const bool vertical = axis->orientation() == Qt::Vertical;
        check_width(
            out, name + (vertical ? QStringLiteral(": y title") : QStringLiteral(": x title")),
            axis->titleText(), axis->titleFont(), vertical ? plot.height() : plot.width(), 8);
    }
    if (QGraphicsScene* scene = chart->scene()) {
        for (QGraphicsItem* item : scene->items()) {
            auto* text = dynamic_cast<QGraphicsTextItem*>(item);
            if (!text || !text->isVisible() || !chart->isAncestorOf(text)) continue;
            const QString plain = text->toPlainText();
            if (plain.contains(QStringLiteral("...")) || plain.contains(QChar(0x2026)))
                out.append({name + QStringLiteral(": drawn text elided"), plain,
                            text->boundingRect().width(), 0});
        }
    }
    return out;
}

// A table's header: every visible section at least as wide as its text and the style's margins;
// with `all_in_view`, every section also lies inside the header's viewport (nothing scrolled or
// pushed out of sight), except the logical sections in `may_overflow`.
inline QVector<Clip> header_clips(QHeaderView* header, const QString& name, bool all_in_view,
                                  const QVector<int>& may_overflow = {}) {
    QVector<Clip> out;
    QAbstractItemModel* model = header->model();
    if (!model) return out;
    const double margin =
        2 * header->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header);
    const int count = header->count();
    const double view = header->viewport()->width();
    for (int i = 0; i < count; ++i) {
        if (header->isSectionHidden(i)) continue;
        const QString text = model->headerData(i, header->orientation()).toString();
        const QString where = name + QStringLiteral(": header '%1'").arg(text);
        const double size = header->sectionSize(i);
        check_width(out, where, text, header->font(), size - margin);
        if (!all_in_view || may_overflow.contains(i)) continue;
        const double left = header->sectionViewportPosition(i);
        if (left < 0 || left + size > view + 0.5)
            out.append({where + QStringLiteral(" (out of view)"), text, left + size, view});
    }
    return out;
}

// The plan diagram: every label's text within its rectangle, every rectangle within the widget
// and the scroll area's viewport, and no two labels overlapping.
inline QVector<Clip> plan_clips(const mantissa::ui::PlanDiagram* diagram, int width) {
    QVector<Clip> out;
    const std::vector<mantissa::ui::PlanLabel> labels = diagram->labels(width);
    for (std::size_t i = 0; i < labels.size(); ++i) {
        const mantissa::ui::PlanLabel& l = labels[i];
        check_width(out, QStringLiteral("plan label"), l.text, l.font, l.rect.width());
        if (l.rect.left() < -0.5 || l.rect.right() > width + 0.5)
            out.append({QStringLiteral("plan label outside the diagram"), l.text, l.rect.right(),
                        double(width)});
        for (std::size_t j = i + 1; j < labels.size(); ++j) {
            const QRectF overlap = l.rect.intersected(labels[j].rect);
            if (overlap.width() > 0.5 && overlap.height() > 0.5)
                out.append({QStringLiteral("plan labels overlap"),
                            l.text + QStringLiteral(" / ") + labels[j].text, overlap.width(), 0});
        }
    }
    return out;
}

// A widget inside a scroll area that needs no horizontal scrolling: its content fits the width.
inline QVector<Clip> scroll_clips(QScrollArea* scroll, const QString& name) {
    QVector<Clip> out;
    if (!scroll || !scroll->widget()) return out;
    const double needed = scroll->widget()->minimumSizeHint().width();
    const double given = scroll->viewport()->width();
    if (needed > given)
        out.append({name + QStringLiteral(": needs horizontal scrolling"), {}, needed, given});
    return out;
}

// Every visible button under `root` at least as wide as its size hint (its caption and icon):
// a layout that squeezes buttons cuts their text.
inline QVector<Clip> button_clips(QWidget* root, const QString& name) {
    QVector<Clip> out;
    for (QAbstractButton* button : root->findChildren<QAbstractButton*>()) {
        if (!button->isVisible() || button->text().isEmpty()) continue;
        const int needed = button->sizeHint().width();
        if (button->width() < needed)
            out.append({name + QStringLiteral(": button squeezed"), button->text(), double(needed),
                        double(button->width())});
    }
    return out;
}

// A widget that is shown but lies (partly) outside its window: cut off by the window's edge.
inline QVector<Clip> outside_clips(QWidget* widget, const QString& name) {
    QVector<Clip> out;
    if (!widget || !widget->isVisible()) return out;
    QWidget* window = widget->window();
    const QRect r(widget->mapTo(window, QPoint(0, 0)), widget->size());
    if (!window->rect().contains(r))
        out.append({name + QStringLiteral(": outside the window"),
                    {},
                    double(r.bottom()),
                    double(window->height())});
    return out;
}

} // namespace clip_check
