// PlanView composition. Memory uses the memory chart's category colours so the two views read
// alike; the error replaces the body rather than leaving a stale plan on screen.
#include "ui/plan_view/plan_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStringList>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>
#include <array>
#include <cmath>

#include "core/error.h"
#include "core/numeric/policy.h"
#include "ui/float_lab/lab_style.h"
#include "ui/plan_view/plan_diagram.h"
#include "ui/plan_view/plan_steps_model.h"
#include "ui/plan_view/step_timer.h"

namespace mantissa::ui {

namespace {

// The memory chart's category colours (Tableau 10), in MemCategory order.
constexpr std::array<const char*, kMemCategoryCount> kCategoryColors = {
    "#4E79A7", "#A0CBE8", "#F28E2B", "#E15759", "#76B7B2", "#B07AA1", "#9C755F"};

// Steps timed per press of "Time each step", as `mantissa-cli profile` times them by default.
constexpr int kTimedSteps = 5;
constexpr int kWarmupSteps = 2;

// What a timing was measured for: the engine, the batch and every step's identity. A timing
// stays on screen while this is unchanged (a new name or epoch count keeps it).
std::string timing_key(const Experiment& e, const PlanDigest& d) {
    std::string key = e.device + "|" + std::to_string(e.batch_size);
    for (const PlanStepRow& s : d.steps)
        key += "|" + std::string(step_phase_name(s.phase)) + ":" + s.layer + ":" + s.op + ":" +
               s.inputs + ">" + s.outputs;
    return key;
}

// The step beside the same step under the policy it was timed against (mantissa-cli profile
// --against says the same): the matrix math's and the step's ratios, and whether the conversions
// the policy adds cost more than its matrix math saves.
QString against_text(const TimedStep& result) {
    const StepComparison c = compare_steps(result.profile, *result.against);
    auto ratio = [](double r) {
        return r > 0 ? QString::number(r, 'f', 2) + QStringLiteral("×") : QStringLiteral("–");
    };
    QString text =
        QStringLiteral("<br>Against <b>%1</b> (%2 a step): matrix math <b>%3</b>, "
                       "step <b>%4</b>. ")
            .arg(result.against_policy.toHtmlEscaped(), duration_text(result.against->step_ms),
                 ratio(c.matrix_math_ratio), ratio(c.step_ratio));
    const QString conversions = c.conversions_added_ms >= 0
                                    ? QStringLiteral("its casts and quantisation add %1")
                                          .arg(duration_text(c.conversions_added_ms))
                                    : QStringLiteral("its casts and quantisation take %1 less")
                                          .arg(duration_text(-c.conversions_added_ms));
    if (c.conversions_outweigh_savings())
        return text + QStringLiteral("Its matrix math saves %1, but %2: more than it saves.")
                          .arg(duration_text(c.math_saved_ms), conversions);
    if (c.math_saved_ms > 0)
        return text + QStringLiteral("Its matrix math saves %1; %2.")
                          .arg(duration_text(c.math_saved_ms), conversions);
    return text + QStringLiteral("Its matrix math is no faster here; %1.").arg(conversions);
}

} // namespace

PlanView::PlanView(QWidget* parent) : QWidget(parent) {
    const QFont bigger = lab::scaled_font(font(), 1.15);
    m_summary = new QLabel;
    m_summary->setFont(lab::scaled_font(font(), 1.2, true));
    m_summary->setWordWrap(true);
    m_memory = new QLabel;
    m_memory->setFont(bigger);
    m_memory->setWordWrap(true);
    m_memory->setToolTip("Bytes allocated before step 1, by category (the dataset on the device "
                         "comes on top). Mixed policies keep float32 master weights and add "
                         "16-bit copies; 16-bit activations and gradients halve their share.");
    m_lint = new QLabel;
    m_lint->setWordWrap(true);
    m_lint->setFont(bigger);
    m_error = new QLabel;
    m_error->setWordWrap(true);
    m_error->setFont(lab::scaled_font(font(), 1.2, true));
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->hide();

    m_diagram = new PlanDiagram;
    auto* diagram_scroll = new QScrollArea;
    m_diagram_scroll = diagram_scroll;
    diagram_scroll->setWidget(m_diagram);
    diagram_scroll->setWidgetResizable(true);
    diagram_scroll->setFrameShape(QFrame::NoFrame);
    diagram_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    fit_diagram_width();

    m_model = new PlanStepsModel(this);
    m_table = new QTableView;
    m_table->setModel(m_model);
    m_table->setFont(bigger);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(QFontMetrics(bigger).height() + 10);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setWordWrap(false);
    m_table->setColumnHidden(PlanStepsModel::Measured, true); // until Time each step fills them
    m_table->setColumnHidden(PlanStepsModel::Roof, true);
    // The timings come right after the step number, as a profiler lists times before names, and
    // the phase (which the order already shows) after the op: beside a quantised policy's
    // diagram at 1366×768 the table is about 270 px wide, which left the timings past its edge
    // when they came last.
    QHeaderView* header = m_table->horizontalHeader();
    header->moveSection(header->visualIndex(PlanStepsModel::Measured), PlanStepsModel::Index + 1);
    header->moveSection(header->visualIndex(PlanStepsModel::Roof), PlanStepsModel::Index + 2);
    header->moveSection(header->visualIndex(PlanStepsModel::Phase),
                        header->visualIndex(PlanStepsModel::Op));

    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(diagram_scroll);
    split->addWidget(m_table);
    split->setChildrenCollapsible(false);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    split->setSizes({m_diagram->minimumSizeHint().width() + 30, 900});

    m_timer = new StepTimer(this);
    m_time_button = new QPushButton(QStringLiteral("Time each step"));
    m_time_button->setObjectName("plan_time_steps");
    m_timing = new QLabel;
    m_timing->setWordWrap(true);
    m_timing->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_timing->setText(QStringLiteral("Time each step: one training step on the experiment's "
                                     "engine, plan step by plan step, beside the least time the "
                                     "device allows for each step's work."));
    // Does the format pay on this device? The same step under a second policy, work by work.
    m_against = new QComboBox;
    m_against->setObjectName("plan_time_against");
    m_against->addItem(QStringLiteral("against: none"), QString());
    for (const Policy& policy : all_policies())
        m_against->addItem(QStringLiteral("against %1").arg(QString::fromStdString(policy.name)),
                           QString::fromStdString(policy.name));
    m_against->setToolTip(QStringLiteral(
        "Time the same step under a second policy too (with its own defaults) and compare the "
        "two work by work: does this policy's matrix math pay on this device, and do its casts "
        "and quantisation cost more than it saves?"));
    auto* timing_controls = new QVBoxLayout;
    timing_controls->addWidget(m_time_button);
    timing_controls->addWidget(m_against);
    timing_controls->addStretch(1);
    auto* timing_row = new QHBoxLayout;
    timing_row->addLayout(timing_controls);
    timing_row->addWidget(m_timing, 1);
    connect(m_time_button, &QPushButton::clicked, this, &PlanView::time_steps);
    connect(m_timer, &StepTimer::progress, this, [this](int done, int total) {
        m_timing->setText(
            QStringLiteral("Timing on %1: step %2 of %3 (%4 warm-up%5)…")
                .arg(QString::fromStdString(m_experiment.device))
                .arg(done)
                .arg(total)
                .arg(kWarmupSteps)
                .arg(m_timing_against.isEmpty()
                         ? QString()
                         : QStringLiteral(" each, then under %1").arg(m_timing_against)));
    });
    connect(m_timer, &StepTimer::finished, this, [this](const TimedStep& result) {
        if (m_has_plan && m_timed_key == timing_key(m_experiment, m_digest))
            show_timing(result);
        else
            m_timing->setText(QStringLiteral("The plan changed while it was timed: Time each "
                                             "step again to measure it."));
        update_time_button();
        emit timing_finished();
    });
    connect(m_timer, &StepTimer::failed, this, [this](const QString& message) {
        m_timing->setText(QStringLiteral("The timing failed: ") + message);
        update_time_button();
        emit timing_finished();
    });
    connect(m_timer, &StepTimer::cancelled, this, [this] {
        m_timing->setText(QStringLiteral("Timing cancelled."));
        update_time_button();
        emit timing_finished();
    });

    m_body = new QWidget;
    auto* body = new QVBoxLayout(m_body);
    body->setContentsMargins(0, 0, 0, 0);
    body->addWidget(m_memory);
    body->addWidget(m_lint);
    body->addLayout(timing_row);
    body->addWidget(split, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_error);
    layout->addWidget(m_body, 1);
}

void PlanView::set_experiment(const Experiment& experiment) {
    m_experiment = experiment;
    try {
        m_digest = preview_plan(experiment);
    } catch (const Error& e) {
        show_error(QString::fromUtf8(e.what()));
        return;
    } catch (const std::exception& e) { // e.g. std::bad_alloc while building a huge stack
        show_error(QString::fromUtf8(e.what()));
        return;
    }
    m_has_plan = true;
    show_digest();
}

QString PlanView::error_text() const {
    return m_has_plan ? QString() : m_error->text();
}

QString PlanView::summary_text() const {
    return m_summary->text();
}

QString PlanView::memory_text() const {
    return m_memory->text();
}

void PlanView::show_error(const QString& message) {
    m_has_plan = false;
    m_digest = {};
    m_model->clear();
    m_diagram->clear();
    m_summary->setText(QStringLiteral("The plan does not compile"));
    m_error->setText(message);
    m_error->setStyleSheet(
        QStringLiteral("color: %1;").arg(lab::overflow_colour(palette()).name()));
    m_error->show();
    m_body->hide();
}

void PlanView::show_digest() {
    const PlanDigest& d = m_digest;
    m_error->hide();
    m_body->show();
    m_summary->setText(QStringLiteral("%1 · batch %2 · %3 steps, %4 casts · %5 per training step "
                                      "· %6 parameters")
                           .arg(QString::fromStdString(d.policy))
                           .arg(d.batch_size)
                           .arg(d.steps.size())
                           .arg(d.casts)
                           .arg(flops_text(d.flops))
                           .arg(QLocale().toString(static_cast<qlonglong>(d.params))));
    QString memory = QStringLiteral("Memory: ");
    for (std::size_t c = 0; c < kMemCategoryCount; ++c) {
        if (d.memory.bytes[c] == 0) continue;
        memory += QStringLiteral("<span style='color:%1'>■</span> %2 <b>%3</b> &nbsp; ")
                      .arg(QLatin1String(kCategoryColors[c]),
                           QLatin1String(mem_category_name(static_cast<MemCategory>(c))),
                           bytes_text(static_cast<double>(d.memory.bytes[c])));
    }
    memory +=
        QStringLiteral("· total <b>%1</b>").arg(bytes_text(static_cast<double>(d.memory.total())));
    // The plan is described without an engine; the workspace's scratch (cuBLASLt, cuDNN, im2col)
    // is what the engine asks for when the plan is bound, so it is named, not guessed.
    memory += QStringLiteral(" + workspace scratch, sized by the engine when training starts");
    m_memory->setText(memory);
    QString lint;
    for (const LintMessage& message : d.lint)
        lint += QStringLiteral("%1 %2%3%4<br>")
                    .arg(message.severity == LintSeverity::Warning ? QStringLiteral("⚠")
                                                                   : QStringLiteral("ℹ"),
                         QString::fromStdString(message.layer),
                         message.layer.empty() ? QString() : QStringLiteral(": "),
                         QString::fromStdString(message.text).toHtmlEscaped());
    m_lint->setText(lint);
    m_lint->setVisible(!lint.isEmpty());
    const bool same_plan = m_timed_key == timing_key(m_experiment, d);
    m_model->set_steps(d.steps); // clears the timings
    show_timing_columns(false);
    if (same_plan && m_timed) {
        show_timing(*m_timed);
    } else if (m_timed) {
        m_timed.reset();
        m_timed_key.clear();
        if (!m_timer->running())
            m_timing->setText(QStringLiteral("The plan changed since it was timed: Time each step "
                                             "again to measure it."));
    }
    update_time_button();
    m_diagram->set_digest(d);
    fit_diagram_width();
}

QString PlanView::timing_text() const {
    return m_timing->text();
}

bool PlanView::timing_columns_shown() const {
    return !m_table->isColumnHidden(PlanStepsModel::Measured);
}

bool PlanView::timing() const {
    return m_timer->running();
}

void PlanView::set_training(bool training) {
    m_training = training;
    if (training && m_timer->running()) m_timer->cancel();
    update_time_button();
}

void PlanView::update_time_button() {
    const bool running = m_timer->running();
    m_time_button->setText(running ? QStringLiteral("Cancel timing")
                                   : QStringLiteral("Time each step"));
    m_time_button->setEnabled(running || (m_has_plan && !m_training));
    m_time_button->setToolTip(
        running       ? QStringLiteral("Stop the timing after the step in flight.")
        : m_training  ? QStringLiteral("A run is training: timing now would measure the two "
                                        "competing for the engine. Wait for it to finish.")
        : !m_has_plan ? QStringLiteral("The plan does not compile.")
                      : QStringLiteral("Train %1 steps (%2 of them warm-up) of this experiment on "
                                       "its engine, timing each plan step (on a GPU, by events), "
                                       "and measure the device's GEMM and copy rates: what "
                                       "mantissa-cli profile does. Nothing you trained is "
                                       "touched.")
                            .arg(kTimedSteps + kWarmupSteps)
                            .arg(kWarmupSteps));
}

void PlanView::time_steps() {
    if (m_timer->running()) {
        m_timer->cancel();
        return;
    }
    if (!m_has_plan || m_training) return;
    m_timed.reset();
    m_timed_key = timing_key(m_experiment, m_digest);
    m_model->set_timings({});
    show_timing_columns(false);
    m_timing->setText(
        QStringLiteral("Opening %1…").arg(QString::fromStdString(m_experiment.device)));
    std::string against = m_against->currentData().toString().toStdString();
    if (against == m_experiment.policy) against.clear(); // itself: nothing to compare
    m_timing_against = QString::fromStdString(against);
    m_timer->start(m_experiment, kTimedSteps, kWarmupSteps, against);
    update_time_button();
}

void PlanView::show_timing(const TimedStep& result) {
    const StepProfile& p = result.profile;
    if (!m_timed || &*m_timed != &result) m_timed = std::make_shared<TimedStep>(result);
    // The engine binds the plan the preview described; where it chose differently (FP8 GEMMs on
    // a GPU that has them), the rows no longer line up and those steps are left blank.
    std::vector<PlanStepsModel::Timing> timings(m_digest.steps.size());
    std::size_t matched = 0;
    if (p.rows.size() == m_digest.steps.size())
        for (std::size_t i = 0; i < p.rows.size(); ++i) {
            const StepProfileRow& row = p.rows[i];
            if (row.layer != m_digest.steps[i].layer || row.op != m_digest.steps[i].op) continue;
            timings[i] = {true, row.ms, row.roof_ms, row.compute_bound};
            ++matched;
        }
    m_model->set_timings(std::move(timings));
    show_timing_columns(true);
    const DeviceRoof& r = p.roof;
    QString text =
        QStringLiteral("Measured on <b>%1</b>: <b>%2</b> a step plan step by plan step, <b>%3</b> "
                       "at the roof (%4×). Roof: %5 GFLOP/s (%6 GEMM %7×%7×%7), %8 GB/s (a copy). "
                       "Median of %9 steps after %10 warm-up.")
            .arg(result.device.toHtmlEscaped(), duration_text(p.step_ms), duration_text(p.roof_ms),
                 p.roof_ms > 0 ? QString::number(p.step_ms / p.roof_ms, 'f', 1)
                               : QStringLiteral("–"),
                 QString::number(r.flops_per_s / 1e9, 'f', 1),
                 QString::fromLatin1(dtype_name(r.dtype)))
            .arg(r.gemm_size)
            .arg(QString::number(r.bytes_per_s / 1e9, 'f', 1))
            .arg(result.steps)
            .arg(result.warmup);
    // Where the step goes: a format's own speed is its matrix math's; the casts and quantisation
    // that feed it are the engine's cost on top (mantissa-cli profile's summary).
    QStringList shares;
    for (int k = 0; k < kStepWorkCount; ++k) {
        const auto work = static_cast<StepWork>(k);
        const StepWorkTotal t = p.total(work);
        QString share = QStringLiteral("%1 <b>%2</b> (%3%")
                            .arg(QString::fromLatin1(step_work_title(work)), duration_text(t.ms))
                            .arg(p.step_ms > 0 ? qRound(100 * t.ms / p.step_ms) : 0);
        if (t.roof_ms > 0)
            share +=
                QStringLiteral(", %1× its roof").arg(QString::number(t.ms / t.roof_ms, 'f', 1));
        shares << share + QStringLiteral(")");
    }
    text += QStringLiteral("<br>Where the step goes: ") + shares.join(QStringLiteral(" · ")) +
            QStringLiteral(".");
    if (result.against) text += against_text(result);
    if (matched < p.rows.size())
        text += QStringLiteral(" The engine's plan has %1 steps where the preview has %2; %3 "
                               "could not be placed in the table (mantissa-cli profile lists "
                               "them all).")
                    .arg(p.rows.size())
                    .arg(m_digest.steps.size())
                    .arg(p.rows.size() - matched);
    if (!result.note.isEmpty()) text += QStringLiteral(" ") + result.note.toHtmlEscaped();
    m_timing->setText(text);
}

void PlanView::show_timing_columns(bool shown) {
    m_table->setColumnHidden(PlanStepsModel::Measured, !shown);
    m_table->setColumnHidden(PlanStepsModel::Roof, !shown);
}

void PlanView::fit_diagram_width() {
    // The diagram's boxes are as wide as their longest label needs; the scroll area never
    // gives them less (the step table beside it takes what is left).
    const int scrollbar = style()->pixelMetric(QStyle::PM_ScrollBarExtent);
    m_diagram_scroll->setMinimumWidth(m_diagram->minimumSizeHint().width() + scrollbar + 4);
}

} // namespace mantissa::ui
