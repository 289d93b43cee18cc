// ScalingChart: reads the runs' quant records (RunRecord::quant, live from the worker or reopened
// from the history) into two MetricCharts. amax and scale are plotted as log2 values on a linear
// axis, as the loss-scale chart does: FP8 and MX scales are powers of two, so the exponents are
// the readable numbers (−7 is 2^−7), and Qt Charts elides wide log-axis labels.
#include "ui/charts/scaling_chart.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointF>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <cmath>

#include "core/error.h"
#include "core/numeric/policy.h"
#include "ui/charts/metric_chart.h"
#include "ui/runs/run_record.h"

namespace mantissa::ui {

namespace {

// Distinct from each other in light and dark palettes and for the common colour blindnesses
// (blue/orange, and red/purple told apart by the markers).
const QColor kAmaxColor(0x1f, 0x77, 0xb4);
const QColor kScaleColor(0xe6, 0x55, 0x0d);
const QColor kClippedColor(0xd6, 0x27, 0x28);
const QColor kFlushedColor(0x75, 0x6b, 0xb1);

bool policy_quantises(const std::string& policy) {
    try {
        return policy_from_name(policy).quant.has_value();
    } catch (const Error&) {
        return false; // an unknown policy name (a newer build's run) quantises nothing we know
    }
}

QString key_item(const QColor& color, const QString& text) {
    return QStringLiteral("<span style='color:%1'>&#9632;</span>&nbsp;%2")
        .arg(color.name(), text.toHtmlEscaped());
}

} // namespace

ScalingChart::ScalingChart(QWidget* parent) : QWidget(parent) {
    auto* title = new QLabel(tr("<b>Scaling</b> · what the quantise steps did"));
    m_run_box = new QComboBox;
    m_run_box->setObjectName("scaling_run");
    m_run_box->setToolTip(tr("The run whose quantise steps are shown"));
    m_layer_box = new QComboBox;
    m_layer_box->setObjectName("scaling_layer");
    m_layer_box->setToolTip(tr("The layer whose quantise step is shown"));
    m_role_box = new QComboBox;
    m_role_box->setObjectName("scaling_role");
    m_role_box->addItem(tr("activations"), QStringLiteral("activation"));
    m_role_box->addItem(tr("weights"), QStringLiteral("weight"));
    m_role_box->addItem(tr("gradients"), QStringLiteral("gradient"));
    // Block recipes also quantise column-wise copies for the backward products (TE's naming).
    m_role_box->addItem(tr("activations, column-wise (dW)"),
                        QStringLiteral("activation_columnwise"));
    m_role_box->addItem(tr("weights, column-wise (dX)"), QStringLiteral("weight_columnwise"));
    m_role_box->addItem(tr("gradients, column-wise (dW)"), QStringLiteral("gradient_columnwise"));
    m_role_box->setToolTip(tr("Which tensor of the layer: its input activations, its weights, or "
                              "the gradients flowing back into it (these carry the loss scale)"));

    auto* controls = new QHBoxLayout;
    controls->setContentsMargins(0, 0, 0, 0);
    controls->addWidget(title, 2);
    controls->addWidget(m_run_box, 2);
    controls->addWidget(m_layer_box, 1);
    controls->addWidget(m_role_box, 1);

    m_key = new QLabel;
    m_key->setObjectName("scaling_key");
    m_key->setTextFormat(Qt::RichText);
    m_key->setWordWrap(true);
    m_key->setText(tr("%1 &nbsp; %2 &nbsp;&nbsp;·&nbsp;&nbsp; %3 &nbsp; %4")
                       .arg(key_item(kAmaxColor, tr("amax (largest |value|)")),
                            key_item(kScaleColor, tr("scale in use")),
                            key_item(kClippedColor, tr("clipped (saturated)")),
                            key_item(kFlushedColor, tr("flushed to zero"))));

    m_values = new MetricChart(tr("Amax and scale"), tr("log₂"), this);
    m_values->set_smoothing_enabled(false);
    m_shares = new MetricChart(tr("Clipped and flushed"), tr("share (%)"), this);
    m_shares->set_smoothing_enabled(false);
    m_shares->set_y_limits(0, 100);

    auto* charts = new QWidget;
    auto* charts_layout = new QVBoxLayout(charts);
    charts_layout->setContentsMargins(0, 0, 0, 0);
    charts_layout->setSpacing(4);
    charts_layout->addWidget(m_key);
    charts_layout->addWidget(m_values, 3);
    charts_layout->addWidget(m_shares, 2);

    m_empty = new QLabel;
    m_empty->setObjectName("scaling_empty");
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    QFont big = m_empty->font();
    big.setPointSizeF(big.pointSizeF() * 1.3);
    m_empty->setFont(big);
    m_empty->setMargin(24);

    m_pages = new QStackedWidget;
    m_pages->addWidget(m_empty);
    m_pages->addWidget(charts);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->setSpacing(3);
    layout->addLayout(controls);
    layout->addWidget(m_pages, 1);

    connect(m_run_box, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (m_updating || index < 0) return;
        m_run_id = m_run_box->itemData(index).toInt();
        // Picking the newest run goes back to following the newest.
        m_follow_latest = index == m_run_box->count() - 1;
        rebuild_layers();
        refresh();
    });
    connect(m_layer_box, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_updating) refresh();
    });
    connect(m_role_box, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
    refresh();
}

void ScalingChart::show_runs(const QVector<const RunRecord*>& runs) {
    m_runs.clear();
    for (const RunRecord* run : runs) {
        ShownRun shown;
        shown.id = run->id;
        shown.name = run->name;
        shown.color = run->color;
        shown.quantises = policy_quantises(run->experiment.policy);
        shown.active = run->state == RunState::Queued || run->state == RunState::Running ||
                       run->state == RunState::Paused;
        shown.quant = run->quant;
        m_runs.append(std::move(shown));
    }
    bool present = false;
    for (const ShownRun& run : std::as_const(m_runs)) present = present || run.id == m_run_id;
    if (m_follow_latest || !present) {
        m_run_id = m_runs.isEmpty() ? -1 : m_runs.back().id;
        m_follow_latest = true;
    }
    // Rebuilt only when the runs change: a redraw every 40 ms while training would otherwise
    // close the box's popup under the user's pointer.
    QStringList items;
    for (const ShownRun& run : std::as_const(m_runs))
        items.append(QStringLiteral("#%1 %2").arg(run.id).arg(run.name));
    QStringList current;
    for (int i = 0; i < m_run_box->count(); ++i) current.append(m_run_box->itemText(i));
    m_updating = true;
    if (items != current) {
        m_run_box->clear();
        for (qsizetype i = 0; i < items.size(); ++i) m_run_box->addItem(items[i], m_runs[i].id);
    }
    m_run_box->setCurrentIndex(m_run_box->findData(m_run_id));
    m_updating = false;
    rebuild_layers();
    refresh();
}

void ScalingChart::set_presentation_scale(double font_scale, double line_scale) {
    m_values->set_presentation_scale(font_scale, line_scale);
    m_shares->set_presentation_scale(font_scale, line_scale);
}

void ScalingChart::show_run(int run_id) {
    const int index = m_run_box->findData(run_id);
    if (index >= 0) m_run_box->setCurrentIndex(index);
}

void ScalingChart::set_layer(const QString& layer) {
    const int index = m_layer_box->findData(layer);
    if (index >= 0) m_layer_box->setCurrentIndex(index);
}

void ScalingChart::set_role(const QString& role) {
    const int index = m_role_box->findData(role);
    if (index >= 0) m_role_box->setCurrentIndex(index);
}

QString ScalingChart::layer() const {
    return m_layer_box->currentData().toString();
}

QString ScalingChart::role() const {
    return m_role_box->currentData().toString();
}

bool ScalingChart::empty_state() const {
    return m_pages->currentWidget() == m_empty;
}

QString ScalingChart::empty_text() const {
    return m_empty->text();
}

int ScalingChart::drawn_points(const QString& series) const {
    const MetricChart* chart =
        series == QLatin1String("amax") || series == QLatin1String("scale") ? m_values : m_shares;
    return empty_state() ? 0 : chart->drawn_points(m_run_id, series);
}

const ScalingChart::ShownRun* ScalingChart::shown() const {
    for (const ShownRun& run : m_runs)
        if (run.id == m_run_id) return &run;
    return nullptr;
}

void ScalingChart::rebuild_layers() {
    // The layers in the order the records name them (the model's order); the pick is kept.
    QStringList layers;
    if (const ShownRun* run = shown())
        for (const QuantRecord& record : run->quant)
            for (const QuantTensorRecord& tensor : record.tensors) {
                const QString layer = QString::fromStdString(tensor.layer);
                if (!layers.contains(layer)) layers.append(layer);
            }
    QStringList current;
    for (int i = 0; i < m_layer_box->count(); ++i)
        current.append(m_layer_box->itemData(i).toString());
    if (current == layers) return;
    const QString picked = layer();
    m_updating = true;
    m_layer_box->clear();
    for (const QString& layer : std::as_const(layers)) m_layer_box->addItem(layer, layer);
    const int index = m_layer_box->findData(picked);
    m_layer_box->setCurrentIndex(index >= 0 ? index : 0);
    m_updating = false;
}

void ScalingChart::show_empty(const QString& text) {
    m_empty->setText(text);
    m_pages->setCurrentWidget(m_empty);
    m_points.clear();
    m_values->set_lines({});
    m_shares->set_lines({});
}

void ScalingChart::refresh() {
    const ShownRun* run = shown();
    if (!run || run->quant.isEmpty()) {
        if (!run)
            show_empty(tr("No run yet: train one under mixed_float8, an MX format or nvfp4 to "
                          "see how its tensors are scaled."));
        else if (run->quantises && run->active)
            show_empty(tr("Waiting for run #%1's first quant record (step 1, then every "
                          "quant_every steps).")
                           .arg(run->id));
        else if (run->quantises)
            show_empty(tr("Run #%1 recorded no quant records (a run from before they were "
                          "written).")
                           .arg(run->id));
        else
            show_empty(tr("This run's policy does not quantise: pick mixed_float8, an MX format "
                          "or nvfp4"));
        return;
    }
    const std::string layer_name = layer().toStdString();
    const std::string role_name = role().toStdString();
    QVector<QPointF> amax, scale, clipped, flushed;
    QString format;
    QStringList layer_roles; // the copies this layer makes, as the role box names them
    bool recorded = false;
    for (const QuantRecord& record : run->quant)
        for (const QuantTensorRecord& t : record.tensors) {
            if (t.layer != layer_name) continue;
            const int index = m_role_box->findData(QString::fromStdString(t.role));
            if (index >= 0 && !layer_roles.contains(m_role_box->itemText(index)))
                layer_roles.append(m_role_box->itemText(index));
            if (t.role != role_name) continue;
            recorded = true;
            const double x = static_cast<double>(record.step);
            // log2 of 0 (an all-zero tensor) or NaN has no place on the axis: a gap.
            if (std::isfinite(t.amax) && t.amax > 0) amax.append({x, std::log2(t.amax)});
            if (std::isfinite(t.scale) && t.scale > 0) scale.append({x, std::log2(t.scale)});
            if (std::isfinite(t.clipped)) clipped.append({x, 100.0 * t.clipped});
            if (std::isfinite(t.flushed)) flushed.append({x, 100.0 * t.flushed});
            format = QString::fromStdString(t.format);
        }
    if (!recorded) {
        // Not every layer makes every copy: say which it makes rather than draw empty axes.
        show_empty(
            tr("%1 makes no copy of its %2 in run #%3. Its copies: %4.\n\nA layer that "
               "computes no dX (the first) makes neither row-wise gradients nor column-wise "
               "weights, and where one copy serves both products there is no column-wise one.")
                .arg(layer(), m_role_box->currentText())
                .arg(run->id)
                .arg(layer_roles.join(QStringLiteral(" · "))));
        return;
    }
    m_pages->setCurrentWidget(m_pages->widget(1));
    m_points = {{QStringLiteral("amax"), amax},
                {QStringLiteral("scale"), scale},
                {QStringLiteral("clipped"), clipped},
                {QStringLiteral("flushed"), flushed}};
    auto line = [run](const QString& series, const QColor& color, ChartLine::Style style,
                      const QVector<QPointF>& points) {
        ChartLine l;
        l.run_id = run->id;
        l.role = series;
        l.name = QStringLiteral("%1 · %2").arg(run->name, series);
        l.color = color;
        l.points = points;
        l.style = style;
        return l;
    };
    using Style = ChartLine::Style;
    m_values->set_lines(
        {line(QStringLiteral("amax"), kAmaxColor, Style::LineWithMarkers, amax),
         line(QStringLiteral("scale"), kScaleColor, Style::LineWithMarkers, scale)});
    m_shares->set_lines(
        {line(QStringLiteral("clipped"), kClippedColor, Style::LineWithMarkers, clipped),
         line(QStringLiteral("flushed"), kFlushedColor, Style::LineWithMarkers, flushed)});
    const QString what = QStringLiteral("%1 %2").arg(layer(), m_role_box->currentText());
    m_values->set_title(format.isEmpty() ? tr("Amax and scale · %1").arg(what)
                                         : tr("Amax and scale · %1 · %2").arg(what, format));
    // The latest shares in the title: small values are what matters and a line at 0.01% hugs
    // the axis.
    m_shares->set_title(clipped.isEmpty()
                            ? tr("Clipped and flushed · %1").arg(what)
                            : tr("Clipped and flushed · %1 · now %2% clipped, %3% flushed")
                                  .arg(what)
                                  .arg(clipped.back().y(), 0, 'g', 3)
                                  .arg(flushed.isEmpty() ? 0.0 : flushed.back().y(), 0, 'g', 3));
}

} // namespace mantissa::ui
