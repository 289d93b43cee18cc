// MemoryChart: where the bytes go — one stacked bar per visible run (the model's categories of
// the compiled plan, latest step), the dataset's bar on request, the device's total and used
// memory in the title for scale.
#include "ui/charts/memory_chart.h"

#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QCursor>
#include <QHorizontalStackedBarSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <array>
#include <cmath>

#include "ui/charts/chart_style.h"
#include "ui/runs/model_memory.h"
#include "ui/runs/run_record.h"

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
    if (bytes <= 0) return QStringLiteral("0");
    const Unit u = unit_for(bytes);
    return QStringLiteral("%1 %2")
        .arg(bytes / u.divisor, 0, 'f', bytes / u.divisor < 10 ? 2 : 1)
        .arg(QLatin1String(u.name));
}

// The bytes a bar draws: a run's model categories, or the dataset's bar's data alone.
std::size_t drawn_bytes(const MemoryByCategory& memory, bool dataset_bar) {
    return dataset_bar ? dataset_bytes(memory) : model_bytes(memory);
}

} // namespace

QString memory_tooltip(const QString& run_name, const QString& policy,
                       const MemoryByCategory& memory, MemCategory hovered) {
    QString text = QStringLiteral("<b>%1</b> (%2)<table>").arg(run_name.toHtmlEscaped(), policy);
    for (MemCategory c : model_categories()) {
        QString value = format_bytes(static_cast<double>(memory[c]));
        if (c == MemCategory::Master && memory[c] == 0 && policy != QLatin1String("float32"))
            value += QObject::tr(" — no master weights: this policy keeps no float32 copy");
        const QString name = QString::fromLatin1(mem_category_name(c));
        text +=
            c == hovered
                ? QStringLiteral("<tr><td><b>%1</b></td><td align=right><b>%2</b></td></tr>")
                      .arg(name, value)
                : QStringLiteral("<tr><td>%1</td><td align=right>%2</td></tr>").arg(name, value);
    }
    text += QObject::tr("<tr><td>model total</td><td align=right>%1</td></tr></table>")
                .arg(format_bytes(static_cast<double>(model_bytes(memory))));
    if (dataset_bytes(memory) > 0)
        text += QObject::tr("resident dataset beside it: %1")
                    .arg(format_bytes(static_cast<double>(dataset_bytes(memory))));
    return text;
}

MemoryChart::MemoryChart(QWidget* parent) : QWidget(parent) {
    m_chart = new QChart;
    style_chart(m_chart, tr("Memory"));
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
    connect(
        m_series, &QAbstractBarSeries::hovered, this, [this](bool status, int index, QBarSet* set) {
            if (!status) {
                QToolTip::hideText();
                return;
            }
            const int c = m_series->barSets().indexOf(set);
            if (c < 0) return;
            QToolTip::showText(QCursor::pos(), tooltip(index, static_cast<MemCategory>(c)), m_view);
        });

    m_runs_axis = new QBarCategoryAxis;
    style_axis(m_runs_axis, QString());
    m_runs_axis->setGridLineVisible(false);
    // The run labels are short ("#5", "#5 mixed_float16"): shown whole, never "…" (the axis's
    // width estimate elided even "#6" on a 1366-px window).
    m_runs_axis->setTruncateLabels(false);
    fit_bar_labels();
    // Qt Charts hides a label that would overlap its neighbour (six runs showed two of six):
    // the labels' size follows the rows' height.
    connect(m_chart, &QChart::plotAreaChanged, this, [this] { fit_bar_labels(); });
    m_chart->addAxis(m_runs_axis, Qt::AlignLeft);
    m_series->attachAxis(m_runs_axis);
    m_bytes_axis = new QValueAxis;
    style_axis(m_bytes_axis, QString());
    m_bytes_axis->setLabelFormat("%.3g MiB");
    m_chart->addAxis(m_bytes_axis, Qt::AlignBottom);
    m_series->attachAxis(m_bytes_axis);

    keep_axes_fitted(m_chart); // no "..." ticks on a short or narrow chart
    m_view = new QChartView(m_chart, this);
    m_view->setViewportUpdateMode(QGraphicsView::FullViewportUpdate); // no stale bar fragments
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumSize(320, 160);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);

    // Over the chart's top-right corner: it costs the charts no height.
    m_dataset_box = new QCheckBox(tr("Show dataset"), m_view);
    m_dataset_box->setObjectName(QStringLiteral("show_dataset"));
    m_dataset_box->setToolTip(tr("Add a bar for the dataset kept resident beside the model (the "
                                 "same under every policy, so it is left out by default)"));
    m_dataset_box->setAutoFillBackground(false);
    connect(m_dataset_box, &QCheckBox::toggled, this, &MemoryChart::set_dataset_shown);
    rebuild();
}

void MemoryChart::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    m_dataset_box->adjustSize();
    m_dataset_box->move(m_view->width() - m_dataset_box->width() - 8, 4);
}

void MemoryChart::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() != QEvent::PaletteChange) return;
    apply_palette(m_chart);
    for (QBarSet* set : m_series->barSets())
        set->setBorderColor(QApplication::palette().color(QPalette::Base));
}

void MemoryChart::set_dataset_shown(bool shown) {
    if (m_dataset_box->isChecked() != shown) m_dataset_box->setChecked(shown); // comes back here
    if (m_dataset_shown == shown) return;
    m_dataset_shown = shown;
    rebuild();
}

void MemoryChart::show_runs(const QVector<const RunRecord*>& runs) {
    m_runs.clear();
    m_device_total = m_device_used = 0;
    m_device_run = 0;
    // The latest run at the top: bars are listed bottom to top.
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        const RunRecord& run = **it;
        // "#5 mixed_float16": the policy is what the bars compare; the run's name is in the
        // tooltip (names are long, and the axis elides what does not fit).
        // With more than three bars their rows are too low for "#5 mixed_float16" (the axis
        // elided them all to "…"): "#5" then, which the run legend above the charts names.
        const QString policy = QString::fromStdString(run.experiment.policy);
        const QString label = runs.size() > 3 ? QStringLiteral("#%1").arg(run.id)
                                              : QStringLiteral("#%1 %2").arg(run.id).arg(policy);
        m_runs.append(Bar{run.id, label, run.name, policy, latest_memory(run)});
        if (it == runs.rbegin() && !run.steps.isEmpty() && run.steps.back().device_mem_total > 0) {
            m_device_total = run.steps.back().device_mem_total;
            m_device_used = run.steps.back().device_mem_used;
            m_device_run = run.id;
        }
    }
    rebuild();
}

void MemoryChart::fit_bar_labels() {
    // 9 pt where the rows are tall enough, down to 6 pt for many runs on a short chart: a label's
    // box (its line height and Qt Charts' padding, about 2.3 x its point size in pixels at 96
    // dpi, found on a 1366x768 screen with six runs) within its row.
    const int rows = std::max<int>(1, static_cast<int>(m_bars.size()));
    const double row_px = m_chart->plotArea().height() / rows;
    const double pt = row_px > 0 ? std::clamp(row_px / 2.3, 6.0, 9.0) : 9.0;
    QFont font = m_runs_axis->labelsFont();
    if (std::abs(font.pointSizeF() - pt) < 0.25) return;
    font.setPointSizeF(pt);
    m_runs_axis->setLabelsFont(font);
}

void MemoryChart::rebuild() {
    QVector<Bar> bars;
    if (m_dataset_shown) {
        // One bar for the dataset: it is the same whatever the policy (the largest if not).
        Bar data;
        data.label = tr("resident dataset");
        data.name = tr("Resident dataset");
        for (const Bar& run : m_runs)
            if (dataset_bytes(run.memory) > dataset_bytes(data.memory))
                data.memory[MemCategory::Data] = dataset_bytes(run.memory);
        if (dataset_bytes(data.memory) > 0) bars.append(data);
    }
    bars += m_runs;

    // Rebuilding the bars lays the whole chart out again; during training the bars rarely change.
    QString signature =
        QStringLiteral("%1|%2|%3").arg(m_device_used).arg(m_device_total).arg(m_dataset_shown);
    for (const Bar& bar : bars) {
        signature += QLatin1Char('|') + bar.label;
        for (std::size_t b : bar.memory.bytes) signature += QStringLiteral(",%1").arg(b);
    }
    if (signature == m_last_signature) return;
    m_last_signature = signature;
    m_bars = bars;

    double largest = 0, largest_model = 0;
    m_nonzero_categories.clear();
    QStringList names;
    for (const Bar& bar : bars) {
        const bool dataset_bar = bar.run_id == 0;
        largest = std::max(largest, static_cast<double>(drawn_bytes(bar.memory, dataset_bar)));
        if (!dataset_bar)
            largest_model = std::max(largest_model, static_cast<double>(model_bytes(bar.memory)));
        int nonzero = 0;
        if (dataset_bar)
            nonzero = dataset_bytes(bar.memory) > 0 ? 1 : 0;
        else
            for (MemCategory c : model_categories()) nonzero += bar.memory[c] > 0 ? 1 : 0;
        m_nonzero_categories.append(nonzero);
        names.append(bar.label);
    }
    const Unit unit = unit_for(std::max(largest, 1.0));
    const QList<QBarSet*> sets = m_series->barSets();
    for (std::size_t c = 0; c < kMemCategoryCount; ++c) {
        const bool data = static_cast<MemCategory>(c) == MemCategory::Data;
        QList<qreal> values;
        for (const Bar& bar : bars) {
            // Runs' bars hold the model; the dataset's bar holds the data.
            const bool dataset_bar = bar.run_id == 0;
            values.append(data == dataset_bar ? bar.memory.bytes[c] / unit.divisor : 0.0);
        }
        QBarSet* set = sets[static_cast<int>(c)];
        set->remove(0, set->count());
        set->append(values);
    }
    // The legend names the dataset only when its bar is there.
    const QList<QLegendMarker*> markers = m_chart->legend()->markers(m_series);
    for (int c = 0; c < markers.size(); ++c)
        if (static_cast<MemCategory>(c) == MemCategory::Data)
            markers[c]->setVisible(m_dataset_shown);
    // No runs: one blank row. Not a null QString: the axis drops it without a signal, and its
    // labels and rows stayed the previous runs' (a lesson opened with none of its runs yet).
    m_runs_axis->setCategories(names.isEmpty() ? QStringList{QStringLiteral("")} : names);
    fit_bar_labels();
    // The unit in the tick labels, no axis title: the height goes to the bars.
    m_bytes_axis->setLabelFormat(QStringLiteral("%.3g ") + QString::fromLatin1(unit.name));
    const double top = largest > 0 ? largest / unit.divisor * 1.08 : 1;
    m_bytes_axis->setRange(0, top);
    m_bytes_axis->applyNiceNumbers();

    // One short line: the bars need the height. The device's figures are in the tooltip.
    QString title = tr("Memory");
    if (!m_runs.isEmpty()) title += tr(" · largest model %1").arg(format_bytes(largest_model));
    if (m_chart->title() != title) m_chart->setTitle(title);
}

int MemoryChart::drawn_points(int run_id) const {
    for (int i = 0; i < m_bars.size(); ++i)
        if (m_bars[i].run_id == run_id && run_id != 0) return m_nonzero_categories[i];
    return 0;
}

QStringList MemoryChart::bar_labels() const {
    QStringList out;
    for (const Bar& bar : m_bars) out << bar.label;
    return out;
}

QList<double> MemoryChart::values(MemCategory category) const {
    QList<double> out;
    const QBarSet* set = m_series->barSets().value(static_cast<int>(category));
    if (!set) return out;
    for (int i = 0; i < set->count(); ++i) out << set->at(i);
    return out;
}

QString MemoryChart::tooltip(int bar, MemCategory category) const {
    if (bar < 0 || bar >= m_bars.size()) return {};
    const Bar& b = m_bars[bar];
    if (b.run_id == 0)
        return tr("<b>Resident dataset</b>: %1<br>kept on the device beside the model, the same "
                  "under every policy")
            .arg(format_bytes(static_cast<double>(dataset_bytes(b.memory))));
    QString text = memory_tooltip(b.name, b.policy, b.memory, category);
    if (b.run_id == m_device_run && m_device_total > 0)
        text += tr("<br>device memory in use: %1 of %2")
                    .arg(format_bytes(static_cast<double>(m_device_used)),
                         format_bytes(static_cast<double>(m_device_total)));
    return text;
}

} // namespace mantissa::ui
