// Policy picker dialog: built on demand, modal; returns the checked policy names in table order
// and the run length. The description under each name says what the policy trades, so the
// choice teaches too.
#include "ui/editor/policy_picker.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

#include "core/numeric/policy.h"

namespace mantissa::ui {

ComparePoliciesDialog::ComparePoliciesDialog(int epochs, qint64 max_steps, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle("Compare policies");
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel("Train the current model once per policy, with the same seed and "
                                 "data order, one after the other:"));
    for (const Policy& policy : all_policies()) {
        auto* box = new QCheckBox(QString::fromStdString(policy.name), this);
        box->setToolTip(QString::fromStdString(policy_description(policy)));
        box->setChecked(policy.name == "float32" || policy.name == "mixed_float16" ||
                        policy.name == "mixed_bfloat16");
        auto* note = new QLabel(QString::fromStdString(policy_description(policy)), this);
        note->setContentsMargins(24, 0, 0, 4);
        note->setStyleSheet("color: palette(mid);");
        layout->addWidget(box);
        layout->addWidget(note);
        m_boxes << box;
    }
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
