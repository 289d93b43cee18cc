// Chart export. The chart is resized in its own scene so axes, ticks and legend are laid out for
// the requested size (a scaled screenshot would blur text), rendered, then given its old size.
#include "ui/charts/chart_export.h"

#include <QBuffer>
#include <QChart>
#include <QFileInfo>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QHash>
#include <QImage>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
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

// On screen the line charts name runs by hover and by the runs list; a picture has neither, so
// while exporting a chart whose legend is hidden, a legend names each run once (by its solid
// line, not the faint raw one), and everything is put back afterwards.
class ExportLegend {
public:
    explicit ExportLegend(QChart* chart) : m_legend(chart->legend()) {
        if (m_legend->isVisible()) return;
        m_shown = true;
        m_alignment = m_legend->alignment();
        QHash<QString, QLegendMarker*> chosen;
        const QList<QLegendMarker*> markers = m_legend->markers();
        for (QLegendMarker* marker : markers) {
            m_visible.append({marker, marker->isVisible()});
            const QString name = marker->label();
            if (name.isEmpty()) continue;
            QLegendMarker* current = chosen.value(name);
            if (!current || (is_solid(marker) && !is_solid(current))) chosen.insert(name, marker);
        }
        for (QLegendMarker* marker : markers)
            marker->setVisible(chosen.value(marker->label()) == marker);
        m_legend->setAlignment(Qt::AlignBottom);
        m_legend->show();
    }
    ~ExportLegend() { restore(); }
    void restore() {
        if (!m_shown) return;
        m_shown = false;
        m_legend->hide();
        m_legend->setAlignment(m_alignment);
        for (const auto& [marker, visible] : m_visible) marker->setVisible(visible);
    }
    ExportLegend(const ExportLegend&) = delete;
    ExportLegend& operator=(const ExportLegend&) = delete;

private:
    static bool is_solid(QLegendMarker* marker) {
        const auto* line = qobject_cast<QLineSeries*>(marker->series());
        return line && line->pen().color().alpha() == 255 && line->pen().style() == Qt::SolidLine;
    }

    QLegend* m_legend;
    bool m_shown = false;
    Qt::Alignment m_alignment;
    QList<QPair<QLegendMarker*, bool>> m_visible;
};

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
    ExportLegend legend(chart);
    relayout(QRectF(old.topLeft(), QSizeF(size)));
    // The chart's background is inset with rounded corners; filling the whole picture with its
    // colour first avoids a transparent frame that many viewers show as black.
    painter.fillRect(QRectF(QPointF(0, 0), QSizeF(size)), chart->backgroundBrush().color());
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    chart->scene()->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)),
                           QRectF(old.topLeft(), QSizeF(size)), Qt::IgnoreAspectRatio);
    legend.restore();
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
    image.fill(Qt::white); // render_at paints the chart's own background over it
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
