// MainWindow: composes the toolbar (open/save, device, train/pause/stop, compare), the layer
// stack editor and settings, the live charts and the Plan view, the runs / comparison / log tabs,
// and the Float Lab beside the training page. It wires their signals together and holds no
// training or chart logic of its own.
#pragma once

#include <QMainWindow>

#include "core/train/experiment.h"
#include "core/train/lesson.h"
#include "ui/window/quit_guard.h"

class QAction;
class QComboBox;
class QMenu;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QTableView;
class QTabWidget;

namespace mantissa::ui {

class ChartsPanel;
class DeviceMenu;
class CompareQueue;
class ComparisonModel;
class ErrorBanner;
class ExperimentDocument;
class ExperimentForm;
class FloatLabTab;
class LayerStackEditor;
class LessonFocus;
class LessonsPanel;
class PlanView;
class PresentationMode;
class RecentFiles;
class RunHistory;
class RunHistoryMenu;
class RunStore;
class TrainingController;
class WeightsEvaluator;
class WeightsLoader;

class MainWindow final : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // The experiment the controls describe now (model, settings, device).
    Experiment current_experiment() const;
    // Loads without asking (startup, tests); errors go to the banner. Returns whether it loaded.
    bool load_experiment_file(const QString& path);
    void set_experiment(const Experiment& experiment);
    // As the user opens a file (menu, recent list, drop): asks about unsaved changes first.
    void open_file(const QString& path);
    // Saves to the experiment's file (asks for one when it has none); false when cancelled or
    // failed. save_as(path) writes to `path` without asking (empty: ask).
    bool save();
    bool save_as(const QString& path = {});

    RunStore* run_store() const { return m_store; }
    TrainingController* controller() const { return m_controller; }
    QAction* train_action() const { return m_train; }
    QAction* pause_action() const { return m_pause; }
    QAction* stop_action() const { return m_stop; }
    CompareQueue* compare_queue() const { return m_compare; }
    ErrorBanner* error_banner() const { return m_banner; }
    ComparisonModel* comparison_model() const { return m_comparison; }
    ChartsPanel* charts() const { return m_charts; }
    LessonsPanel* lessons_panel() const { return m_lessons; }
    LessonFocus* lesson_focus() const { return m_lesson_focus; }
    QTableView* runs_view() const { return m_runs_view; }
    RunHistory* run_history() const { return m_history; }
    RunHistoryMenu* runs_menu() const { return m_runs_menu; }
    RecentFiles* recent_files() const { return m_recent; }
    ExperimentDocument* document() const { return m_document; }
    QMenu* recent_menu() const { return m_recent_menu; }
    PlanView* plan_view() const { return m_plan_view; }
    FloatLabTab* float_lab() const { return m_float_lab; }
    WeightsLoader* weights_loader() const { return m_weights; }
    WeightsEvaluator* weights_evaluator() const { return m_evaluator; }
    PresentationMode* presentation() const { return m_presentation; }

public slots:
    void train();
    // Empty: ask with a dialog (policies and runs per policy).
    void compare_policies(const QStringList& policies, int repeats = 1);
    // Test loss and accuracy of a weights file, on a background thread; the result goes to the
    // log and the status line.
    void evaluate_weights(const QString& path);
    // Shows the Lessons panel with lesson `which` (its number from 1, or its id) open; with
    // `run`, runs it too. False when there is no such lesson.
    bool open_lesson(const QString& which, bool run = false);

    // How the window asks before quitting while a run trains (quit_guard.h); tests replace it.
    void set_quit_prompt(QuitPrompt prompt) { m_quit_prompt = std::move(prompt); }

protected:
    // Asks before stopping a run in training (and recording it as stopped), then about unsaved
    // changes.
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override; // a .json experiment file
    void dropEvent(QDropEvent* event) override;
    void resizeEvent(QResizeEvent* event) override; // the runs list's rows follow the height

private:
    void build_toolbar();
    void fit_runs_list();
    void build_file_menu();
    void update_title();
    void document_edited();
    void wire_training();
    void wire_weights(); // Load Weights… (File menu, runs list) into the editor and the next run
    void update_actions();
    void refresh_plan(); // the Plan tab follows the stack and the settings
    void log(const QString& line);
    void build_lessons(bool gpu);
    // Opens a lesson's first run as a new document with no file ("Lesson 2 — float16 (pure)"),
    // after asking about unsaved changes; false when the user cancelled.
    bool adopt_lesson(const Lesson& lesson);
    QString lesson_document_name(const Lesson& lesson) const;

    Experiment m_base; // name, dataset and fields the form does not show
    RunStore* m_store = nullptr;
    TrainingController* m_controller = nullptr;
    QuitPrompt m_quit_prompt = default_quit_prompt();
    CompareQueue* m_compare = nullptr;
    ComparisonModel* m_comparison = nullptr;
    LayerStackEditor* m_editor = nullptr;
    ExperimentForm* m_form = nullptr;
    ChartsPanel* m_charts = nullptr;
    LessonsPanel* m_lessons = nullptr;
    LessonFocus* m_lesson_focus = nullptr;
    PlanView* m_plan_view = nullptr;
    FloatLabTab* m_float_lab = nullptr;
    ErrorBanner* m_banner = nullptr;
    QPlainTextEdit* m_log = nullptr;
    QTableView* m_runs_view = nullptr;
    DeviceMenu* m_device = nullptr;
    QTabWidget* m_bottom = nullptr; // runs, comparison, log
    QWidget* m_left = nullptr;      // the Model and Settings tabs
    // The editor stepped aside for the Lessons panel on a screen too narrow for both (1280 px).
    bool m_left_hidden_for_lessons = false;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QAction* m_train = nullptr;
    QAction* m_pause = nullptr;
    QAction* m_stop = nullptr;
    QAction* m_compare_action = nullptr;
    QAction* m_open = nullptr;
    QAction* m_save = nullptr;
    QMenu* m_recent_menu = nullptr;
    RunHistory* m_history = nullptr;
    RunHistoryMenu* m_runs_menu = nullptr;
    RecentFiles* m_recent = nullptr;
    ExperimentDocument* m_document = nullptr;
    WeightsLoader* m_weights = nullptr;
    WeightsEvaluator* m_evaluator = nullptr;
    PresentationMode* m_presentation = nullptr;
};

} // namespace mantissa::ui
