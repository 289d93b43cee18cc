// PlanView: the compiled Plan of the current experiment: a summary, memory per category, a
// diagram of the layers by compute dtype with casts marked, and the step table; or why the stack
// does not compile. It recompiles (without allocating) whenever it is given a new experiment.
#pragma once

#include <QWidget>

#include "core/train/experiment.h"
#include "ui/plan_view/plan_digest.h"

class QLabel;
class QScrollArea;
class QTableView;

namespace mantissa::ui {

class PlanDiagram;
class PlanStepsModel;

class PlanView final : public QWidget {
    Q_OBJECT

public:
    explicit PlanView(QWidget* parent = nullptr);

    void set_experiment(const Experiment& experiment);

    bool has_plan() const { return m_has_plan; }
    QString error_text() const; // empty when the plan compiled
    const PlanDigest& digest() const { return m_digest; }
    int cast_steps() const { return m_digest.casts; }
    QString summary_text() const;
    QString memory_text() const;
    PlanStepsModel* steps_model() const { return m_model; }
    PlanDiagram* diagram() const { return m_diagram; }

private:
    void show_digest();
    void show_error(const QString& message);
    void fit_diagram_width();

    bool m_has_plan = false;
    PlanDigest m_digest;
    QLabel* m_summary = nullptr;
    QLabel* m_memory = nullptr;
    QLabel* m_lint = nullptr;
    QLabel* m_error = nullptr;
    QWidget* m_body = nullptr;
    PlanDiagram* m_diagram = nullptr;
    QScrollArea* m_diagram_scroll = nullptr;
    PlanStepsModel* m_model = nullptr;
    QTableView* m_table = nullptr;
};

} // namespace mantissa::ui
