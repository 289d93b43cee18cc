// PlanView: the compiled Plan of the current experiment: a summary, memory per category, a
// diagram of the layers by compute dtype with casts marked, and the step table; or why the stack
// does not compile. It recompiles (without allocating) whenever it is given a new experiment.
// "Time each step" runs one training step plan step by plan step on the experiment's engine
// (StepTimer) and fills the table's Measured and Roof columns, kept until the plan changes; with a
// policy chosen to time against, it compares the two steps work by work.
#pragma once

#include <QWidget>
#include <memory>
#include <string>

#include "core/train/experiment.h"
#include "ui/plan_view/plan_digest.h"

class QComboBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QTableView;

namespace mantissa::ui {

class PlanDiagram;
class PlanStepsModel;
class StepTimer;
struct TimedStep;

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

    // A run or comparison is training: timing would compete with it for the engine, so the
    // button waits (and a timing in flight is cancelled).
    void set_training(bool training);
    QPushButton* time_button() const { return m_time_button; }
    // The policy to time the same step against (first item: none), compared work by work.
    QComboBox* against_box() const { return m_against; }
    QString timing_text() const; // the line beside the button: progress, result or error
    bool timing_columns_shown() const;
    bool timing() const;

signals:
    void timing_finished(); // the columns are filled, or the timing failed or was cancelled

private:
    void show_digest();
    void show_error(const QString& message);
    void fit_diagram_width();
    void time_steps();
    void show_timing(const TimedStep& result);
    void update_time_button();
    void show_timing_columns(bool shown);

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
    QPushButton* m_time_button = nullptr;
    QComboBox* m_against = nullptr;
    QString m_timing_against; // the policy the timing in flight compares against, if any
    QLabel* m_timing = nullptr;
    StepTimer* m_timer = nullptr;
    Experiment m_experiment;
    bool m_training = false;
    std::shared_ptr<const TimedStep> m_timed; // the last timing, while the plan is unchanged
    std::string m_timed_key;                  // timing_key() of the plan it was measured for
};

} // namespace mantissa::ui
