// MainWindow: composes the toolbar (open/save, device, train/pause/stop, compare), the layer
// stack editor and settings, the live charts and the Plan view, the runs / comparison / log tabs,
// and the Float Lab beside the training page. It wires their signals together and holds no
// training or chart logic of its own.
#pragma once

#include <QMainWindow>

#include "core/train/experiment.h"

class QAction;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QTableView;

namespace mantissa::ui {

class ChartsPanel;
class CompareQueue;
class ComparisonModel;
class ErrorBanner;
class ExperimentForm;
class FloatLabTab;
class LayerStackEditor;
class PlanView;
class RunStore;
class TrainingController;

class MainWindow final : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // The experiment the controls describe now (model, settings, device).
    Experiment current_experiment() const;
    void load_experiment_file(const QString& path);
    void set_experiment(const Experiment& experiment);

    RunStore* run_store() const { return m_store; }
    TrainingController* controller() const { return m_controller; }
    QAction* train_action() const { return m_train; }
    QAction* pause_action() const { return m_pause; }
    QAction* stop_action() const { return m_stop; }
    CompareQueue* compare_queue() const { return m_compare; }
    ErrorBanner* error_banner() const { return m_banner; }
    ComparisonModel* comparison_model() const { return m_comparison; }
    PlanView* plan_view() const { return m_plan_view; }
    FloatLabTab* float_lab() const { return m_float_lab; }

public slots:
    void train();
    void compare_policies(const QStringList& policies); // empty: ask with a dialog

private:
    void build_toolbar();
    void wire_training();
    void update_actions();
    void refresh_plan(); // the Plan tab follows the stack and the settings
    void log(const QString& line);

    Experiment m_base; // name, dataset and fields the form does not show
    RunStore* m_store = nullptr;
    TrainingController* m_controller = nullptr;
    CompareQueue* m_compare = nullptr;
    ComparisonModel* m_comparison = nullptr;
    LayerStackEditor* m_editor = nullptr;
    ExperimentForm* m_form = nullptr;
    ChartsPanel* m_charts = nullptr;
    PlanView* m_plan_view = nullptr;
    FloatLabTab* m_float_lab = nullptr;
    ErrorBanner* m_banner = nullptr;
    QPlainTextEdit* m_log = nullptr;
    QTableView* m_runs_view = nullptr;
    QComboBox* m_device = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QAction* m_train = nullptr;
    QAction* m_pause = nullptr;
    QAction* m_stop = nullptr;
    QAction* m_compare_action = nullptr;
};

} // namespace mantissa::ui
