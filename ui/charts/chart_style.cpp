// The shared look of Mantissa's charts (see chart_style.h): one place for fonts, margins and
// colours, so every chart reads the same on a projector, in a light or a dark palette.
#include "ui/charts/chart_style.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QChart>
#include <QFont>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QLegend>
#include <QPalette>
#include <QPen>
#include <QValueAxis>
#include <algorithm>

#include "ui/window/theme.h"

namespace mantissa::ui {

namespace {

// Point sizes at scale 1: readable from the back of a room at 1366×768.
constexpr double kTitlePt = 13, kLabelPt = 10.5, kAxisTitlePt = 11, kLegendPt = 10.5;
// Qt Charts pads each axis label by 4 pixels on either side, and the text item adds a 4-pixel
// document margin on either side of the text.
constexpr double kLabelPadding = 2 * 4 + 2 * 4;

struct ChartColors {
    QColor background, text, grid, minor_grid, axis_line;
};

ChartColors colors_of(const QPalette& palette) {
    ChartColors c;
    c.background = palette.color(QPalette::Base);
    c.text = palette.color(QPalette::WindowText);
    // Grid lines are a faint step from the background towards the text, in either palette.
    c.grid = blend(c.background, c.text, is_dark(palette) ? 0.18 : 0.11);
    c.minor_grid = blend(c.background, c.text, 0.05);
    c.axis_line = blend(c.background, c.text, 0.45);
    return c;
}

void color_axis(QAbstractAxis* axis, const ChartColors& c) {
    axis->setGridLineColor(c.grid);
    axis->setMinorGridLineColor(c.minor_grid);
    axis->setLinePenColor(c.axis_line);
    axis->setLabelsColor(c.text);
    axis->setTitleBrush(c.text);
}

} // namespace

void style_chart(QChart* chart, const QString& title) {
    // The theme first: it resets fonts and colours, which the lines below then set.
    chart->setTheme(is_dark(QApplication::palette()) ? QChart::ChartThemeDark
                                                     : QChart::ChartThemeLight);
    chart->setTitle(title);
    QFont title_font = chart->titleFont();
    title_font.setPointSizeF(kTitlePt);
    title_font.setBold(true);
    chart->setTitleFont(title_font);
    chart->legend()->hide();
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(6, 4, 10, 4));
    // No layout padding around the chart: at 1280×720 every pixel goes to the plot.
    if (chart->layout()) chart->layout()->setContentsMargins(0, 0, 0, 0);
    chart->setAnimationOptions(QChart::NoAnimation);
    apply_palette(chart);
}

void style_axis(QAbstractAxis* axis, const QString& title) {
    axis->setTitleText(title);
    apply_axis_fonts(axis, 1.0);
    color_axis(axis, colors_of(QApplication::palette()));
}

void apply_palette(QChart* chart) {
    const ChartColors c = colors_of(QApplication::palette());
    chart->setBackgroundBrush(c.background);
    chart->setBackgroundPen(Qt::NoPen);
    chart->setPlotAreaBackgroundVisible(false);
    chart->setTitleBrush(c.text);
    chart->legend()->setLabelColor(c.text);
    for (QAbstractAxis* axis : chart->axes()) color_axis(axis, c);
}

void apply_palette(QAbstractAxis* axis) {
    color_axis(axis, colors_of(QApplication::palette()));
}

void apply_axis_fonts(QAbstractAxis* axis, double scale) {
    QFont label_font = axis->labelsFont();
    label_font.setPointSizeF(kLabelPt * scale);
    if (axis->labelsFont() != label_font) axis->setLabelsFont(label_font);
    QFont title_font = axis->titleFont();
    title_font.setPointSizeF(kAxisTitlePt * scale);
    title_font.setBold(false);
    if (axis->titleFont() != title_font) axis->setTitleFont(title_font);
}

void apply_chart_fonts(QChart* chart, double scale, const QList<QAbstractAxis*>& extra_axes) {
    QFont title_font = chart->titleFont();
    title_font.setPointSizeF(kTitlePt * scale);
    title_font.setBold(true);
    if (chart->titleFont() != title_font) chart->setTitleFont(title_font);
    QFont legend_font = chart->legend()->font();
    legend_font.setPointSizeF(kLegendPt * scale);
    if (chart->legend()->font() != legend_font) chart->legend()->setFont(legend_font);
    for (QAbstractAxis* axis : chart->axes()) apply_axis_fonts(axis, scale);
    for (QAbstractAxis* axis : extra_axes) apply_axis_fonts(axis, scale);
}

void fit_axes_to_plot(QChart* chart) {
    const QRectF plot = chart->plotArea();
    if (plot.width() < 20 || plot.height() < 20) return;
    for (QAbstractAxis* axis : chart->axes()) {
        auto* value = qobject_cast<QValueAxis*>(axis);
        if (!value || value->tickType() != QValueAxis::TicksFixed) continue;
        const bool vertical = axis->orientation() == Qt::Vertical;
        int capacity = 0;
        if (vertical) {
            capacity = tick_capacity(plot.height(), vertical_label_pixels(axis->labelsFont()));
        } else {
            const QByteArray format = value->labelFormat().toLatin1();
            QString widest;
            for (double v : {value->min(), value->max()}) {
                const QString text = QString::asprintf(format.constData(), v);
                if (text.size() > widest.size()) widest = text;
            }
            capacity = tick_capacity(plot.width(),
                                     horizontal_label_pixels(axis->labelsFont(), widest + "0"));
        }
        const int ticks = std::min(5, capacity);
        if (value->tickCount() != ticks) value->setTickCount(ticks);
        if (vertical) continue;
        // The bottom axis gets at most 30% of the chart's height: the title goes first.
        const QString title = axis->property("mantissa_title").toString();
        const double needed = vertical_label_pixels(axis->labelsFont()) +
                              QFontMetricsF(axis->titleFont()).height() + 12;
        const QString shown = chart->size().height() * 0.3 >= needed ? title : QString();
        if (axis->titleText() != shown) axis->setTitleText(shown);
    }
}

void keep_axes_fitted(QChart* chart) {
    auto refit = [chart] {
        // Queued: the chart is mid-layout when it reports a new plot area.
        QMetaObject::invokeMethod(
            chart, [chart] { fit_axes_to_plot(chart); }, Qt::QueuedConnection);
    };
    QObject::connect(chart, &QChart::plotAreaChanged, chart, refit);
    for (QAbstractAxis* axis : chart->axes()) {
        // The title the axis should show when there is room (the fitting may hide it).
        QObject::connect(axis, &QAbstractAxis::titleTextChanged, chart, [axis](const QString& t) {
            if (!t.isEmpty()) axis->setProperty("mantissa_title", t);
        });
        axis->setProperty("mantissa_title", axis->titleText());
        if (auto* value = qobject_cast<QValueAxis*>(axis))
            QObject::connect(value, &QValueAxis::rangeChanged, chart, refit);
    }
}

QStringList title_candidates(const QString& title) {
    QStringList out{title};
    QString t = title;
    for (;;) {
        const qsizetype cut =
            std::max(t.lastIndexOf(QStringLiteral(" · ")), t.lastIndexOf(QStringLiteral(", ")));
        if (cut <= 0) break;
        t = t.left(cut);
        out.append(t);
    }
    return out;
}

QStringList axis_title_candidates(const QString& title) {
    QStringList out{title};
    const qsizetype open = title.lastIndexOf(QLatin1Char('(')),
                    close = title.lastIndexOf(QLatin1Char(')'));
    if (open >= 0 && close > open + 1)
        out.append(title.mid(open + 1, close - open - 1));
    else if (const qsizetype space = title.indexOf(QLatin1Char(' ')); space > 0)
        out.append(title.left(space));
    return out;
}

QString fitted_title(const QStringList& candidates, const QFont& font, double width) {
    const QFontMetricsF fm(font);
    for (const QString& candidate : candidates)
        if (fm.horizontalAdvance(candidate) <= width) return candidate;
    return candidates.isEmpty() ? QString() : candidates.back();
}

int tick_capacity(double pixels, double per_label) {
    if (!(per_label > 0) || !(pixels > 0)) return 2;
    return std::max(2, static_cast<int>(pixels / per_label));
}

double vertical_label_pixels(const QFont& labels_font) {
    return QFontMetricsF(labels_font).height() + kLabelPadding;
}

double horizontal_label_pixels(const QFont& labels_font, const QString& text) {
    return QFontMetricsF(labels_font).horizontalAdvance(text) + kLabelPadding;
}

} // namespace mantissa::ui
