// The shared look of Mantissa's charts (see chart_style.h): one place for fonts, margins and
// grid colours, so every chart in the panel reads the same on a projector.
#include "ui/charts/chart_style.h"

#include <QAbstractAxis>
#include <QChart>
#include <QFont>
#include <QLegend>
#include <QPen>

namespace mantissa::ui {

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
    axis->setGridLineColor(QColor(0xe3, 0xe3, 0xe3));
    axis->setMinorGridLineColor(QColor(0xf2, 0xf2, 0xf2));
    axis->setLinePenColor(QColor(0x99, 0x99, 0x99));
    axis->setLabelsColor(QColor(0x33, 0x33, 0x33));
    axis->setTitleBrush(QColor(0x33, 0x33, 0x33));
}

} // namespace mantissa::ui
