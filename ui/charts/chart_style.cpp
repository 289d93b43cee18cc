// The shared look of Mantissa's charts (see chart_style.h): one place for fonts, margins and
// colours, so every chart reads the same on a projector, in a light or a dark palette.
#include "ui/charts/chart_style.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QChart>
#include <QFont>
#include <QLegend>
#include <QPalette>
#include <QPen>

#include "ui/theme.h"

namespace mantissa::ui {

namespace {

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
    chart->setTheme(QChart::ChartThemeLight);
    chart->setTitle(title);
    QFont title_font = chart->titleFont();
    title_font.setPointSizeF(13);
    title_font.setBold(true);
    chart->setTitleFont(title_font);
    chart->legend()->hide();
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(6, 4, 10, 4));
    chart->setAnimationOptions(QChart::NoAnimation);
    apply_palette(chart);
}

void style_axis(QAbstractAxis* axis, const QString& title) {
    axis->setTitleText(title);
    QFont label_font = axis->labelsFont();
    label_font.setPointSizeF(10.5);
    axis->setLabelsFont(label_font);
    QFont title_font = axis->titleFont();
    title_font.setPointSizeF(11);
    title_font.setBold(false);
    axis->setTitleFont(title_font);
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

} // namespace mantissa::ui
