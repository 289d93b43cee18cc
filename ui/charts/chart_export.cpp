// Chart export. The chart is resized in its own scene so axes, ticks and legend are laid out for
// the requested size (a scaled screenshot would blur text), rendered, then given its old size.
#include "ui/charts/chart_export.h"

#include <QBuffer>
#include <QChart>
#include <QFileInfo>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>

namespace mantissa::ui {

namespace {

constexpr int kMaxSide = 16384; // QImage and most viewers stop well before larger sizes

QString check_size(QSize size) {
    if (size.width() < 16 || size.height() < 16 || size.width() > kMaxSide ||
        size.height() > kMaxSide)
        return QStringLiteral("a chart image must be 16 to %1 pixels on each side, not %2×%3")
            .arg(kMaxSide)
            .arg(size.width())
            .arg(size.height());
    return {};
}

// Lays the chart out at `size`, paints it into `painter`'s (0, 0, size) and restores it.
void render_at(QChart* chart, QSize size, QPainter& painter) {
    const QRectF old = chart->geometry();
    auto relayout = [chart](const QRectF& rect) {
        chart->setGeometry(rect);
        if (QGraphicsLayout* layout = chart->layout()) {
            layout->invalidate();
            layout->activate();
        }
    };
    relayout(QRectF(old.topLeft(), QSizeF(size)));
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    chart->scene()->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)),
                           QRectF(old.topLeft(), QSizeF(size)), Qt::IgnoreAspectRatio);
    relayout(old);
}

QString save_bytes(const QString& path, const QByteArray& bytes) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    return {};
}

} // namespace

QString export_chart_png(QChart* chart, QSize size, const QString& path) {
    if (!chart || !chart->scene()) return QStringLiteral("there is no chart to export");
    if (QString error = check_size(size); !error.isEmpty()) return error;
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent); // the chart paints its own background
    {
        QPainter painter(&image);
        render_at(chart, size, painter);
    }
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) return QStringLiteral("cannot encode %1 as PNG").arg(path);
    return save_bytes(path, bytes);
}

QString export_chart_svg(QChart* chart, QSize size, const QString& path, const QString& title) {
    if (!chart || !chart->scene()) return QStringLiteral("there is no chart to export");
    if (QString error = check_size(size); !error.isEmpty()) return error;
    QByteArray bytes;
    QBuffer buffer(&bytes);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    // QSvgGenerator writes the size in mm; at 96 dpi (CSS's pixel) browsers and Inkscape show
    // exactly `size` pixels.
    svg.setResolution(96);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(title);
    svg.setDescription(QStringLiteral("Exported from Mantissa"));
    {
        QPainter painter;
        if (!painter.begin(&svg)) return QStringLiteral("cannot start an SVG for %1").arg(path);
        render_at(chart, size, painter);
    }
    return save_bytes(path, bytes);
}

QString export_chart(QChart* chart, QSize size, const QString& path, const QString& title) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png")) return export_chart_png(chart, size, path);
    if (suffix == QLatin1String("svg")) return export_chart_svg(chart, size, path, title);
    return QStringLiteral("%1: choose a .png or .svg file name").arg(path);
}

} // namespace mantissa::ui
