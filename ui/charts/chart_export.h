// Chart export: renders one chart, laid out afresh at the size the user asks for, to a PNG
// (raster) or an SVG (vector) file. Both are written atomically (QSaveFile).
#pragma once

#include <QSize>
#include <QString>

class QChart;

namespace mantissa::ui {

// Each returns an error message naming the file, or empty on success. `size` is in pixels
// (PNG) or SVG user units; the chart is relaid out at that size, then restored.
QString export_chart_png(QChart* chart, QSize size, const QString& path);
QString export_chart_svg(QChart* chart, QSize size, const QString& path, const QString& title);
// By the extension of `path` (.png or .svg).
QString export_chart(QChart* chart, QSize size, const QString& path, const QString& title);

} // namespace mantissa::ui
