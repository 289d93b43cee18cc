// GradientHistogramChart: keeps each run's histograms (thinned when long), offers run, layer, kind,
// scaled/unscaled and step selectors, and prints the float16 fractions of the shown histogram.
#include "ui/charts/gradient_histogram_chart.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSlider>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/charts/histogram_canvas.h"

namespace mantissa::ui {

namespace {

constexpr int kMaxHistory = 400; // per run; a longer run keeps every other histogram

QString percent(double fraction) {
    if (fraction == 0) return "0%";
    // No "<": the label is rich text.
    if (fraction < 0.0001) return "under 0.01%";
    return QString::number(100.0 * fraction, 'f',
                           fraction < 0.01  ? 2
                           : fraction < 0.1 ? 1
                                            : 0) +
           "%";
}

QString scale_text(double scale) {
    if (loss_scale_is_power_of_two(scale)) return power_of_two_label(loss_scale_shift(scale));
    return QString::number(scale, 'g', 6);
}

} // namespace

GradientHistogramChart::GradientHistogramChart(QWidget* parent) : QWidget(parent) {
    auto* title = new QLabel(tr("<b>Gradient histogram</b> · log₂|g| against float16"));
    m_run_box = new QComboBox;
    m_run_box->setObjectName("histogram_run");
    m_run_box->setToolTip(tr("The run whose gradients are shown"));
    m_layer_box = new QComboBox;
    m_layer_box->setObjectName("histogram_layer");
    m_layer_box->setToolTip(tr("One layer's gradients, or all layers together"));
    m_kind_box = new QComboBox;
    m_kind_box->setObjectName("histogram_kind");
    m_kind_box->addItem(tr("activation gradients"));
    m_kind_box->addItem(tr("weight gradients"));
    m_kind_box->setToolTip(
        tr("Activation gradients: d loss / d layer output. Weight gradients: d loss / d kernel "
           "and bias, as the layer computed them"));
    m_unscaled = new QCheckBox(tr("unscaled"));
    m_unscaled->setObjectName("histogram_unscaled");
    m_unscaled->setToolTip(
        tr("Off: the gradients as computed, multiplied by the loss scale. On: divided by the "
           "loss scale, i.e. where they would sit without loss scaling"));
    m_step = new QSlider(Qt::Horizontal);
    m_step->setObjectName("histogram_step");
    m_step->setToolTip(tr("Which of the run's histograms to show; at the right end it follows "
                          "the newest"));
    m_step->setRange(0, 0);
    m_step->setMaximumWidth(140);
    m_step_label = new QLabel;
    m_step_label->setMinimumWidth(150);

    auto* controls = new QHBoxLayout;
    controls->setContentsMargins(0, 0, 0, 0);
    controls->addWidget(m_run_box, 2);
    controls->addWidget(m_layer_box, 1);
    controls->addWidget(m_kind_box, 1);
    controls->addWidget(m_unscaled);
    auto* step_row = new QHBoxLayout;
    step_row->setContentsMargins(0, 0, 0, 0);
    step_row->addWidget(title, 1);
    step_row->addWidget(m_step);
    step_row->addWidget(m_step_label);

    m_canvas = new HistogramCanvas;
    m_fractions = new QLabel;
    m_fractions->setObjectName("histogram_fractions");
    m_fractions->setWordWrap(true);
    m_fractions->setTextFormat(Qt::RichText);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->setSpacing(3);
    layout->addLayout(step_row);
    layout->addLayout(controls);
    layout->addWidget(m_canvas, 1);
    layout->addWidget(m_fractions);

    connect(m_run_box, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0) return;
        m_run_id = m_run_box->itemData(index).toInt();
        m_follow_latest = true;
        rebuild_selectors();
        refresh();
    });
    connect(m_layer_box, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
    connect(m_kind_box, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
    connect(m_unscaled, &QCheckBox::toggled, this, [this] { refresh(); });
    connect(m_step, &QSlider::valueChanged, this, [this](int value) {
        m_follow_latest = value == m_step->maximum();
        m_pinned_step = 0; // the user's choice from now on
        refresh();
    });
    rebuild_selectors();
    refresh();
}

void GradientHistogramChart::add_histograms(int run_id, const QString& run_name,
                                            const QColor& color,
                                            const QVector<GradientHistogram>& histograms) {
    if (histograms.isEmpty()) return;
    const bool is_new = !m_runs.contains(run_id);
    RunHistograms& run = m_runs[run_id];
    run.name = run_name;
    run.color = color;
    for (const GradientHistogram& h : histograms) {
        if (run.history.size() >= kMaxHistory) {
            QVector<GradientHistogram> thinned; // keep the first and every other one after it
            for (qsizetype i = 0; i < run.history.size(); i += 2) thinned.append(run.history[i]);
            run.history = std::move(thinned);
        }
        run.history.append(h);
    }
    if (is_new) {
        m_order.append(run_id);
        m_run_id = run_id; // a new run is what the user just started: show it
        m_follow_latest = true;
    }
    rebuild_selectors();
    refresh();
}

void GradientHistogramChart::remove_run(int run_id) {
    if (!m_runs.remove(run_id)) return;
    m_order.removeAll(run_id);
    if (m_run_id == run_id) m_run_id = m_order.isEmpty() ? -1 : m_order.back();
    rebuild_selectors();
    refresh();
}

void GradientHistogramChart::show_run(int run_id) {
    if (!m_runs.contains(run_id)) return;
    m_run_id = run_id;
    m_follow_latest = true;
    rebuild_selectors();
    refresh();
}

void GradientHistogramChart::set_layer(const QString& layer) {
    const int index = layer.isEmpty() ? 0 : m_layer_box->findData(layer);
    if (index >= 0) m_layer_box->setCurrentIndex(index);
}

void GradientHistogramChart::set_weights(bool weights) {
    m_kind_box->setCurrentIndex(weights ? 1 : 0);
}

void GradientHistogramChart::set_unscaled(bool unscaled) {
    m_unscaled->setChecked(unscaled);
}

void GradientHistogramChart::pin_step(std::int64_t step) {
    m_pinned_step = step;
    m_follow_latest = step <= 0;
    rebuild_selectors();
    refresh();
}

void GradientHistogramChart::rebuild_selectors() {
    const QSignalBlocker b1(m_run_box), b2(m_layer_box), b3(m_step);
    m_run_box->clear();
    for (int id : std::as_const(m_order))
        m_run_box->addItem(QStringLiteral("#%1 %2").arg(id).arg(m_runs[id].name), id);
    m_run_box->setCurrentIndex(m_run_box->findData(m_run_id));

    const QString layer = m_layer_box->currentData().toString();
    m_layer_box->clear();
    m_layer_box->addItem(tr("all layers"), QString());
    const auto it = m_runs.constFind(m_run_id);
    if (it != m_runs.constEnd() && !it->history.isEmpty())
        for (const LayerGradientHistogram& l : it->history.back().layers)
            m_layer_box->addItem(QString::fromStdString(l.layer), QString::fromStdString(l.layer));
    m_layer_box->setCurrentIndex(std::max(0, m_layer_box->findData(layer)));

    const int count = it == m_runs.constEnd() ? 0 : static_cast<int>(it->history.size());
    const int old = m_step->value();
    m_step->setRange(0, std::max(0, count - 1));
    int value = m_follow_latest ? m_step->maximum() : std::min(old, m_step->maximum());
    if (m_pinned_step > 0 && count > 0) { // the last histogram at or before the lesson's step
        value = 0;
        for (int i = 0; i < count; ++i)
            if (it->history[i].step <= m_pinned_step) value = i;
    }
    m_step->setValue(value);
    m_step->setEnabled(count > 1);
}

const GradientHistogram* GradientHistogramChart::shown_histogram() const {
    const auto it = m_runs.constFind(m_run_id);
    if (it == m_runs.constEnd() || it->history.isEmpty()) return nullptr;
    const int index = std::clamp(m_step->value(), 0, static_cast<int>(it->history.size()) - 1);
    return &it->history[index];
}

const ExponentCounts* GradientHistogramChart::shown_counts() const {
    const GradientHistogram* h = shown_histogram();
    if (!h) return nullptr;
    const bool weights = m_kind_box->currentIndex() == 1;
    const QString layer = m_layer_box->currentData().toString();
    if (layer.isEmpty()) return weights ? &h->all_weight : &h->all_activation;
    for (const LayerGradientHistogram& l : h->layers)
        if (QString::fromStdString(l.layer) == layer) {
            if (weights && !l.has_weights) return nullptr;
            return weights ? &l.weight : &l.activation;
        }
    return nullptr;
}

int GradientHistogramChart::exponent_shift() const {
    const GradientHistogram* h = shown_histogram();
    return h && m_unscaled->isChecked() ? -loss_scale_shift(h->loss_scale) : 0;
}

int GradientHistogramChart::bar_count() const {
    return m_canvas->bar_count();
}

Float16Fractions GradientHistogramChart::fractions() const {
    const ExponentCounts* counts = shown_counts();
    return counts ? float16_fractions(*counts, exponent_shift()) : Float16Fractions{};
}

QString GradientHistogramChart::fractions_text() const {
    return m_fractions->text()
        .remove(QRegularExpression("<[^>]*>"))
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
}

void GradientHistogramChart::refresh() {
    const GradientHistogram* h = shown_histogram();
    const ExponentCounts* counts = shown_counts();
    if (!h) {
        m_step_label->clear();
        m_fractions->setText(tr("Fractions that underflow, go subnormal or overflow in float16 "
                                "appear here once a run has gradients."));
        m_canvas->clear();
        return;
    }
    const bool exact = loss_scale_is_power_of_two(h->loss_scale);
    m_step_label->setText(
        tr("step %1 · loss scale %2").arg(h->step).arg(scale_text(h->loss_scale)));
    if (!counts) {
        m_canvas->clear();
        m_fractions->setText(tr("This layer has no variables, so it has no weight gradients."));
        return;
    }
    const int shift = exponent_shift();
    m_canvas->set_histogram(*counts, shift, m_runs[m_run_id].color);
    const Float16Fractions f = float16_fractions(*counts, shift);
    QString view =
        m_unscaled->isChecked()
            ? tr("unscaled (÷ %1%2)")
                  .arg(scale_text(h->loss_scale), exact ? QString() : tr(", approximate"))
            : tr("as computed (× loss scale %1)").arg(scale_text(h->loss_scale));
    m_fractions->setText(
        tr("In float16: <b>%1 underflow</b> (&lt; 2⁻²⁴ → 0) · <b>%2 subnormal</b> (2⁻²⁴ to "
           "2⁻¹⁴, fewer bits) · <b>%3 overflow</b> (≥ 2¹⁶ or inf/NaN; ≥ 65520 rounds to inf) · "
           "%4 exact zeros · of %5 values %6.")
            .arg(percent(f.underflow), percent(f.subnormal), percent(f.overflow), percent(f.zero),
                 QLocale().toString(static_cast<qlonglong>(f.total)), view));
}

} // namespace mantissa::ui
