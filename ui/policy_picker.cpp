// Policy picker dialog: built on demand, modal; returns the checked policy names in table order.
// The description under each name says what the policy trades, so the choice teaches too.
#include "ui/policy_picker.h"

#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

#include "core/numeric/policy.h"

namespace mantissa::ui {

QStringList ask_policies(QWidget* parent, int* repeats) {
    QDialog dialog(parent);
    dialog.setWindowTitle("Compare policies");
    auto* layout = new QVBoxLayout(&dialog);
    layout->addWidget(new QLabel("Train the current model once per policy, with the same seed and "
                                 "data order, one after the other:"));
    QList<QCheckBox*> boxes;
    for (const Policy& policy : all_policies()) {
        auto* box = new QCheckBox(QString::fromStdString(policy.name), &dialog);
        box->setToolTip(QString::fromStdString(policy_description(policy)));
        box->setChecked(policy.name == "float32" || policy.name == "mixed_float16" ||
                        policy.name == "mixed_bfloat16");
        auto* note = new QLabel(QString::fromStdString(policy_description(policy)), &dialog);
        note->setContentsMargins(24, 0, 0, 4);
        note->setStyleSheet("color: palette(mid);");
        layout->addWidget(box);
        layout->addWidget(note);
        boxes << box;
    }
    QSpinBox* repeat_box = nullptr;
    if (repeats) {
        // One run's step times include whatever else the machine did; a few runs per policy
        // show whether a difference is the policy's or the machine's.
        auto* row = new QHBoxLayout;
        row->addWidget(new QLabel("Runs per policy:", &dialog));
        repeat_box = new QSpinBox(&dialog);
        repeat_box->setObjectName("repeats");
        repeat_box->setRange(1, 10);
        repeat_box->setValue(std::max(1, *repeats));
        repeat_box->setToolTip("Train each policy this many times, taking turns, so the table "
                               "shows whether a speedup is more than run-to-run noise");
        row->addWidget(repeat_box);
        row->addStretch(1);
        layout->addLayout(row);
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    buttons->button(QDialogButtonBox::Ok)->setText("Run comparison");
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    if (dialog.exec() != QDialog::Accepted) return {};
    if (repeat_box) *repeats = repeat_box->value();
    QStringList chosen;
    for (QCheckBox* box : boxes)
        if (box->isChecked()) chosen << box->text();
    return chosen;
}

} // namespace mantissa::ui
