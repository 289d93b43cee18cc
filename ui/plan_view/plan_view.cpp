// PlanView composition. Memory uses the memory chart's category colours so the two views read
// alike; the error replaces the body rather than leaving a stale plan on screen.
#include "ui/plan_view/plan_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>
#include <array>

#include "core/error.h"
#include "ui/float_lab/lab_style.h"
#include "ui/plan_view/plan_diagram.h"
#include "ui/plan_view/plan_steps_model.h"

namespace mantissa::ui {

namespace {

// The memory chart's category colours (Tableau 10), in MemCategory order.
constexpr std::array<const char*, kMemCategoryCount> kCategoryColors = {
    "#4E79A7", "#A0CBE8", "#F28E2B", "#E15759", "#76B7B2", "#B07AA1", "#9C755F"};

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

    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(diagram_scroll);
    split->addWidget(m_table);
    split->setChildrenCollapsible(false);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    split->setSizes({m_diagram->minimumSizeHint().width() + 30, 900});

    m_body = new QWidget;
    auto* body = new QVBoxLayout(m_body);
    body->setContentsMargins(0, 0, 0, 0);
    body->addWidget(m_memory);
    body->addWidget(m_lint);
    body->addWidget(split, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_error);
    layout->addWidget(m_body, 1);
}

void PlanView::set_experiment(const Experiment& experiment) {
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
    m_model->set_steps(d.steps);
    m_diagram->set_digest(d);
    fit_diagram_width();
}

void PlanView::fit_diagram_width() {
    // The diagram's boxes are as wide as their longest label needs; the scroll area never
    // gives them less (the step table beside it takes what is left).
    const int scrollbar = style()->pixelMetric(QStyle::PM_ScrollBarExtent);
    m_diagram_scroll->setMinimumWidth(m_diagram->minimumSizeHint().width() + scrollbar + 4);
}

} // namespace mantissa::ui
