// MemoryChart: where the bytes go — one stacked bar per visible run (categories of the compiled
// plan, latest step), with the device's total and used memory in the title for scale.
#include "ui/charts/memory_chart.h"

#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHorizontalStackedBarSeries>
#include <QLegend>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <array>
#include <cmath>

#include "ui/charts/chart_style.h"
#include "ui/run_record.h"

namespace mantissa::ui {

namespace {

// One colour per category, distinct from each other (Tableau 10).
constexpr std::array<const char*, kMemCategoryCount> kCategoryColors = {
    "#4E79A7", "#A0CBE8", "#F28E2B", "#E15759", "#76B7B2", "#B07AA1", "#9C755F"};

struct Unit {
    double divisor;
    const char* name;
};

Unit unit_for(double bytes) {
    if (bytes >= 1024.0 * 1024 * 1024) return {1024.0 * 1024 * 1024, "GiB"};
    if (bytes >= 1024.0 * 1024) return {1024.0 * 1024, "MiB"};
    return {1024.0, "KiB"};
}

QString format_bytes(double bytes) {
    const Unit u = unit_for(bytes);
    return QStringLiteral("%1 %2")
        .arg(bytes / u.divisor, 0, 'f', bytes / u.divisor < 10 ? 2 : 1)
        .arg(QLatin1String(u.name));
}

// The run's latest memory by category: the last step's, else the compiled plan's.
MemoryByCategory memory_of(const RunRecord& run) {
    if (!run.steps.isEmpty() && run.steps.back().memory.total() > 0) return run.steps.back().memory;
    return run.memory;
}

} // namespace

MemoryChart::MemoryChart(QWidget* parent) : QWidget(parent) {
    m_chart = new QChart;
    style_chart(m_chart, tr("Device memory"));
    m_chart->legend()->show(); // the categories need names; the runs are named on the axis
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    QFont legend_font = m_chart->legend()->font();
    legend_font.setPointSizeF(10.5);
    m_chart->legend()->setFont(legend_font);

    m_series = new QHorizontalStackedBarSeries;
    m_series->setBarWidth(0.6);
    for (std::size_t c = 0; c < kMemCategoryCount; ++c) {
        auto* set =
            new QBarSet(QString::fromLatin1(mem_category_name(static_cast<MemCategory>(c))));
        set->setColor(QColor(QString::fromLatin1(kCategoryColors[c])));
        set->setBorderColor(QApplication::palette().color(QPalette::Base)); // segment gaps
        m_series->append(set);
    }
    m_chart->addSeries(m_series);

    m_runs_axis = new QBarCategoryAxis;
    style_axis(m_runs_axis, QString());
    m_runs_axis->setGridLineVisible(false);
    m_chart->addAxis(m_runs_axis, Qt::AlignLeft);
    m_series->attachAxis(m_runs_axis);
    m_bytes_axis = new QValueAxis;
    style_axis(m_bytes_axis, tr("MiB"));
    m_bytes_axis->setLabelFormat("%.3g");
    m_chart->addAxis(m_bytes_axis, Qt::AlignBottom);
    m_series->attachAxis(m_bytes_axis);

    keep_axes_fitted(m_chart); // no "..." ticks on a short or narrow chart
    m_view = new QChartView(m_chart, this);
    m_view->setViewportUpdateMode(QGraphicsView::FullViewportUpdate); // no stale bar fragments
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumSize(320, 170);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
}

void MemoryChart::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() != QEvent::PaletteChange) return;
    apply_palette(m_chart);
    for (QBarSet* set : m_series->barSets())
        set->setBorderColor(QApplication::palette().color(QPalette::Base));
}

void MemoryChart::show_runs(const QVector<const RunRecord*>& runs) {
    m_run_ids.clear();
    m_nonzero_categories.clear();
    QVector<MemoryByCategory> memories;
    QStringList names;
    double largest = 0;
    std::size_t device_total = 0, device_used = 0;
    // The latest run at the top: bars are listed bottom to top.
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        const RunRecord& run = **it;
        const MemoryByCategory memory = memory_of(run);
        m_run_ids.append(run.id);
        memories.append(memory);
        int nonzero = 0;
        for (std::size_t b : memory.bytes) nonzero += b > 0 ? 1 : 0;
        m_nonzero_categories.append(nonzero);
        QString name = run.name;
        if (name.size() > 28) name = name.left(27) + QChar(0x2026);
        names.append(QStringLiteral("#%1 %2").arg(run.id).arg(name));
        largest = std::max(largest, static_cast<double>(memory.total()));
        if (!run.steps.isEmpty() && run.steps.back().device_mem_total > 0 && it == runs.rbegin()) {
            device_total = run.steps.back().device_mem_total;
            device_used = run.steps.back().device_mem_used;
        }
    }
    // Rebuilding the bars lays the whole chart out again; during training the bars rarely change.
    QString signature =
        names.join(QLatin1Char('|')) + QStringLiteral("|%1|%2").arg(device_used).arg(device_total);
    for (const MemoryByCategory& m : memories)
        for (std::size_t b : m.bytes) signature += QStringLiteral("|%1").arg(b);
    if (signature == m_last_signature) return;
    m_last_signature = signature;

    const Unit unit = unit_for(std::max(largest, 1.0));
    const QList<QBarSet*> sets = m_series->barSets();
    for (std::size_t c = 0; c < kMemCategoryCount; ++c) {
        QList<qreal> values;
        for (const MemoryByCategory& m : memories) values.append(m.bytes[c] / unit.divisor);
        sets[static_cast<int>(c)]->remove(0, sets[static_cast<int>(c)]->count());
        sets[static_cast<int>(c)]->append(values);
    }
    m_runs_axis->setCategories(names.isEmpty() ? QStringList{QString()} : names);
    m_bytes_axis->setTitleText(QString::fromLatin1(unit.name));
    const double top = largest > 0 ? largest / unit.divisor * 1.08 : 1;
    m_bytes_axis->setRange(0, top);
    m_bytes_axis->applyNiceNumbers();

    // Two short lines: a long title would be elided at the width of half a 1280-pixel window.
    QString title = tr("Memory");
    if (!runs.isEmpty()) {
        title += tr(" · largest run %1").arg(format_bytes(largest));
        if (device_total > 0)
            title += tr("<br><small>device (run %1): %2 of %3</small>")
                         .arg(runs.back()->id)
                         .arg(format_bytes(static_cast<double>(device_used)),
                              format_bytes(static_cast<double>(device_total)));
    }
    if (m_chart->title() != title) m_chart->setTitle(title);
}

int MemoryChart::drawn_points(int run_id) const {
    const qsizetype i = m_run_ids.indexOf(run_id);
    return i < 0 ? 0 : m_nonzero_categories[i];
}

} // namespace mantissa::ui
