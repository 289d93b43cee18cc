// The "Compare policies…" dialog: one checkbox per dtype policy (float32, mixed_float16 and
// mixed_bfloat16 preselected), each with its one-sentence description, how long each run trains
// (epochs, max steps) so a comparison can be quick without editing the experiment, and how many
// runs per policy (a repeat count, so a speedup can be told from run-to-run noise).
#pragma once

#include <QDialog>
#include <QList>
#include <QStringList>

class QCheckBox;
class QSpinBox;

namespace mantissa::ui {

struct CompareChoice {
    QStringList policies; // in table order; empty when the user cancels
    int epochs = 1;
    qint64 max_steps = 0; // 0: whole epochs
    int repeats = 1;      // runs per policy, taking turns
};

class ComparePoliciesDialog final : public QDialog {
    Q_OBJECT

public:
    // Starts with the experiment's `epochs` and `max_steps`.
    ComparePoliciesDialog(int epochs, qint64 max_steps, QWidget* parent = nullptr);
    CompareChoice choice() const; // what the controls say now

private:
    QList<QCheckBox*> m_boxes;
    QSpinBox* m_epochs = nullptr;
    QSpinBox* m_max_steps = nullptr;
    QSpinBox* m_repeats = nullptr;
};

// Shows the dialog; an empty `policies` when the user cancels.
CompareChoice ask_comparison(QWidget* parent, int epochs, qint64 max_steps);

} // namespace mantissa::ui
