// Policy picker dialog: built on demand, modal; returns the checked policy names in table order
// and the run length. The description under each name says what the policy trades, so the
// choice teaches too. The policies sit in two columns inside a scroll area and the dialog is
// bounded by the screen, so its buttons stay on a 1366x768 projector (one column of thirteen
// policies made it 803 px tall).
#include "ui/editor/policy_picker.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

#include "core/numeric/policy.h"
#include "ui/window/window_geometry.h"

namespace mantissa::ui {

ComparePoliciesDialog::ComparePoliciesDialog(int epochs, qint64 max_steps, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle("Compare policies");
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel("Train the current model once per policy, with the same seed and "
                                 "data order, one after the other:"));
    // Two columns, filled down then across, so table order reads top to bottom per column.
    auto* list = new QWidget;
    auto* grid = new QGridLayout(list);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(18);
    const std::vector<Policy>& policies = all_policies();
    const int per_column = (static_cast<int>(policies.size()) + 1) / 2;
    for (int i = 0; i < static_cast<int>(policies.size()); ++i) {
        const Policy& policy = policies[static_cast<std::size_t>(i)];
        auto* box = new QCheckBox(QString::fromStdString(policy.name), list);
        box->setToolTip(QString::fromStdString(policy_description(policy)));
        box->setChecked(policy.name == "float32" || policy.name == "mixed_float16" ||
                        policy.name == "mixed_bfloat16");
        auto* note = new QLabel(QString::fromStdString(policy_description(policy)), list);
        note->setWordWrap(true);
        note->setMinimumWidth(300);
        note->setContentsMargins(24, 0, 0, 4);
        note->setStyleSheet("color: palette(dark);"); // readable on a projector
        const int row = 2 * (i % per_column), column = i / per_column;
        grid->addWidget(box, row, column);
        grid->addWidget(note, row + 1, column);
        m_boxes << box;
    }
    grid->setRowStretch(2 * per_column, 1);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName("compare_policies");
    scroll->setWidget(list);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(list->sizeHint().width() + 20);
    layout->addWidget(scroll, 1);
    auto* length = new QFormLayout;
    m_epochs = new QSpinBox(this);
    m_epochs->setObjectName("compare_epochs");
    m_epochs->setRange(1, 1000);
    m_epochs->setValue(std::clamp(epochs, 1, 1000));
    m_epochs->setToolTip("Passes over the 60,000 training images, for every run.");
    length->addRow("Epochs", m_epochs);
    m_max_steps = new QSpinBox(this);
    m_max_steps->setObjectName("compare_max_steps");
    m_max_steps->setRange(0, std::numeric_limits<int>::max());
    m_max_steps->setSpecialValueText("no limit");
    m_max_steps->setSingleStep(100);
    m_max_steps->setValue(
        static_cast<int>(std::clamp<qint64>(max_steps, 0, std::numeric_limits<int>::max())));
    m_max_steps->setToolTip("Stop every run after this many steps (a quick comparison); \"no "
                            "limit\" trains the whole epochs.");
    length->addRow("Max steps", m_max_steps);
    // One run's step times include whatever else the machine did; a few runs per policy show
    // whether a difference is the policy's or the machine's.
    m_repeats = new QSpinBox(this);
    m_repeats->setObjectName("repeats");
    m_repeats->setRange(1, 10);
    m_repeats->setValue(1);
    m_repeats->setToolTip("Train each policy this many times, taking turns, so the table shows "
                          "whether a speedup is more than run-to-run noise");
    length->addRow("Runs per policy", m_repeats);
    layout->addLayout(length);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText("Run comparison");
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    // The whole list where the screen has room for it beside the rest of the dialog; the list
    // scrolls where it has not.
    const int rest = layout->sizeHint().height() - scroll->sizeHint().height();
    const int room = screen_room(this).height() - rest;
    scroll->setMinimumHeight(std::max(120, std::min(list->sizeHint().height(), room)));
    fit_to_screen(this);
}

CompareChoice ComparePoliciesDialog::choice() const {
    CompareChoice out;
    for (QCheckBox* box : m_boxes)
        if (box->isChecked()) out.policies << box->text();
    out.epochs = m_epochs->value();
    out.max_steps = m_max_steps->value();
    out.repeats = m_repeats->value();
    return out;
}

CompareChoice ask_comparison(QWidget* parent, int epochs, qint64 max_steps) {
    ComparePoliciesDialog dialog(epochs, max_steps, parent);
    if (dialog.exec() != QDialog::Accepted) return {};
    return dialog.choice();
}

} // namespace mantissa::ui
