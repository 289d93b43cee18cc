// MainWindow: layout and wiring. Errors become banner messages and the window stays usable;
// Train is disabled, with the reason in its tooltip, while the stack does not fit.
#include "ui/window/main_window.h"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

#include "core/error.h"
#include "ui/charts/chart_export_dialog.h"
#include "ui/charts/charts_panel.h"
#include "ui/editor/experiment_document.h"
#include "ui/editor/experiment_form.h"
#include "ui/editor/file_drop.h"
#include "ui/editor/layer_stack_editor.h"
#include "ui/editor/policy_picker.h"
#include "ui/editor/recent_files.h"
#include "ui/float_lab/float_lab_tab.h"
#include "ui/lessons/lesson_focus.h"
#include "ui/lessons/lesson_library.h"
#include "ui/lessons/lessons_panel.h"
#include "ui/plan_view/plan_view.h"
#include "ui/runs/compare_queue.h"
#include "ui/runs/comparison_model.h"
#include "ui/runs/run_history.h"
#include "ui/runs/run_history_menu.h"
#include "ui/runs/run_store.h"
#include "ui/runs/table_rows.h"
#include "ui/training/device_menu.h"
#include "ui/training/training_controller.h"
#include "ui/weights/weights_evaluator.h"
#include "ui/weights/weights_loader.h"
#include "ui/window/dialog_folder.h"
#include "ui/window/error_banner.h"
#include "ui/window/help_menu.h"
#include "ui/window/presentation_mode.h"
#include "ui/window/window_geometry.h"

namespace mantissa::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle("Mantissa — mixed-precision training studio");
    m_store = new RunStore(this);
    m_controller = new TrainingController(this);
    m_comparison = new ComparisonModel(m_store, this);
    m_history = new RunHistory(m_store, this);
    m_recent = new RecentFiles(this);
    m_weights = new WeightsLoader(this);
    m_evaluator = new WeightsEvaluator(this);
    m_document = new ExperimentDocument(this, this);
    setAcceptDrops(true);

    // Left: the model and its settings. Centre: charts. Bottom: runs, comparison, log.
    m_editor = new LayerStackEditor;
    m_form = new ExperimentForm;
    auto* form_scroll = new QScrollArea;
    form_scroll->setWidget(m_form);
    form_scroll->setWidgetResizable(true);
    form_scroll->setFrameShape(QFrame::NoFrame);
    auto* left = new QTabWidget;
    left->addTab(m_editor, "Model");
    left->addTab(form_scroll, "Settings");
    left->setMinimumWidth(400);
    m_left = left;

    m_charts = new ChartsPanel(m_store);
    m_banner = new ErrorBanner;
    auto* centre = new QWidget;
    auto* centre_layout = new QVBoxLayout(centre);
    centre_layout->setContentsMargins(0, 0, 0, 0);
    centre_layout->addWidget(m_banner);
    m_plan_view = new PlanView;
    // Side tabs (West) cost width, not height: the charts already fill a 1000-pixel screen.
    auto* centre_tabs = new QTabWidget;
    centre_tabs->setTabPosition(QTabWidget::West);
    centre_tabs->setDocumentMode(true);
    centre_tabs->addTab(m_charts, "Charts");
    centre_tabs->addTab(m_charts->histogram_chart(), "Gradients");
    centre_tabs->setTabToolTip(1, "Live histograms of log2|gradient| against float16's and "
                                  "bfloat16's ranges: what underflows without loss scaling");
    centre_tabs->addTab(m_plan_view, "Plan");
    centre_tabs->setTabToolTip(2, "The compiled plan: every step, its dtypes and the casts the "
                                  "policy inserts, bytes, FLOPs and memory per category");
    const int scaling_tab = centre_tabs->addTab(m_charts->scaling_chart(), "Scaling");
    centre_tabs->setTabToolTip(scaling_tab, "Quantised policies: amax, the scale in use and the "
                                            "shares clipped and flushed to zero, per layer");
    centre_layout->addWidget(centre_tabs, 1);

    m_runs_view = new QTableView;
    m_runs_view->setModel(m_store);
    m_runs_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_runs_view->horizontalHeader()->setStretchLastSection(true);
    m_runs_view->verticalHeader()->hide();
    m_runs_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    // ResizeToContents sizes columns at layout time only; runs arrive later (from the history
    // thread, or as they start), so size the columns again for each new one.
    connect(m_store, &QAbstractItemModel::rowsInserted, m_runs_view, [this] {
        QHeaderView* header = m_runs_view->horizontalHeader();
        header->resizeSections(QHeaderView::ResizeToContents);
        header->setStretchLastSection(false); // resizing dropped the stretch: set it again
        header->setStretchLastSection(true);
    });
    auto* comparison_view = new QTableView;
    comparison_view->setModel(m_comparison);
    comparison_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    comparison_view->verticalHeader()->hide();
    fit_rows(comparison_view, 8); // compact rows, as in the runs list
    // The configuration repeats on each row of its group: a capped width (elided, the whole text
    // in its tooltip) so speedup, ms/step and test accuracy fit a 1366-px window unscrolled,
    // beside an editor wide enough for its layers' settings (140 px: "MLP 128-128-10 · b…").
    comparison_view->horizontalHeader()->setSectionResizeMode(ComparisonModel::ColConfiguration,
                                                              QHeaderView::Interactive);
    comparison_view->horizontalHeader()->resizeSection(ComparisonModel::ColConfiguration, 140);
    m_log = new QPlainTextEdit;
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    m_log->setFont(QFont("monospace"));
    auto* bottom = new QTabWidget;
    bottom->addTab(m_runs_view, "Runs");
    bottom->addTab(comparison_view, "Comparison");
    bottom->addTab(m_log, "Log");

    auto* right = new QSplitter(Qt::Vertical);
    right->addWidget(centre);
    right->addWidget(bottom);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 1);
    m_bottom = bottom;
    fit_runs_list();
    right->setChildrenCollapsible(false);
    auto* main = new QSplitter(Qt::Horizontal);
    main->addWidget(left);
    main->addWidget(right);
    main->setStretchFactor(1, 1);
    main->setChildrenCollapsible(false);
    // The Float Lab gets the whole window: it is shown to a class, not beside the charts.
    m_float_lab = new FloatLabTab;
    auto* top = new QTabWidget;
    top->setTabPosition(QTabWidget::West);
    top->setDocumentMode(true); // no frame: every pixel of height goes to the pages
    top->addTab(main, "Training");
    top->addTab(m_float_lab, "Float Lab");
    top->setTabToolTip(1, "A value in float32, float16, bfloat16 and float8: bits, rounding, "
                          "range and arithmetic");
    setCentralWidget(top);
    m_presentation = new PresentationMode({this,
                                           {{centre_tabs, m_charts}, {top, main}},
                                           {left, bottom, m_banner},
                                           {main, right},
                                           m_charts},
                                          this);

    m_progress = new QProgressBar;
    m_progress->setMaximumWidth(260);
    // The whole run's progress, to the step it will stop at (max_steps or its epochs' end), as the
    // ETA beside it counts (it showed the current epoch's, and 40% at step 191 of 300).
    m_progress->setFormat("run %p%");
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    m_status = new QLabel("Ready");
    statusBar()->addWidget(m_status, 1);
    statusBar()->addPermanentWidget(m_progress);

    m_compare = new CompareQueue(m_store, m_controller, this);
    m_runs_menu = new RunHistoryMenu(m_runs_view, m_store, m_history, this);
    bottom->setCornerWidget(m_runs_menu->make_visibility_buttons(bottom));
    connect(m_runs_menu, &RunHistoryMenu::error, m_banner, &ErrorBanner::show_error);
    connect(m_runs_menu, &RunHistoryMenu::message, this, &MainWindow::log);
    connect(m_history, &RunHistory::problem, this, &MainWindow::log);
    wire_weights();
    build_toolbar();
    build_file_menu();
    wire_training();
    connect(m_editor, &LayerStackEditor::model_changed, this, [this] {
        update_actions();
        document_edited();
        refresh_plan();
    });
    connect(m_form, &ExperimentForm::changed, this, [this] {
        const Experiment e = current_experiment();
        m_editor->set_context(QString::fromStdString(e.policy), e.loss_scale);
        update_actions();
        document_edited();
        refresh_plan();
    });
    connect(m_document, &ExperimentDocument::modified_changed, this, &MainWindow::update_title);
    connect(m_recent, &RecentFiles::open_requested, this, &MainWindow::open_file);

    // Earlier sessions' runs come back with their curves and comparison rows.
    connect(m_history, &RunHistory::finished_loading, this, [this](int reopened) {
        log(QString("Run history: %1 earlier runs reopened from %2 (File › Runs Folder… to "
                    "change; right-click a run to rename, export or delete it)")
                .arg(reopened)
                .arg(m_history->dir()));
    });
    m_history->load_async(); // parsed off the GUI thread: big runs take seconds

    // First launch: a ready experiment; one click on Train shows curves within seconds.
    const bool gpu = m_device->gpu_selected();
    load_experiment_file(gpu ? ":/experiments/seed-mlp.json" : ":/experiments/mlp-small.json");
    build_lessons(gpu);
    QStringList lesson_titles;
    for (const Lesson& lesson : m_lessons->lessons())
        lesson_titles << QString::fromStdString(lesson.title);
    add_help_menu(this, lesson_titles,
                  [this](int number) { open_lesson(QString::number(number)); });
    // Where the user left it; on a first launch 1500×950, or the screen's available area when
    // that is smaller (a laptop, a projector at 1280×800: the status bar and the bottom tabs must
    // stay on screen), centred.
    place_window(this, QSize(1500, 950));
    const QSize size = this->size();
    // The charts get what the bottom tabs (a header and three runs) leave, and the editor what
    // its columns need: on a 1366×768 screen every pixel counts. The settings editors too, up
    // to half the window (issue 28: at its minimum the settings column was cut to "Se" and the
    // activations lay behind horizontal scrolling); the charts keep the rest.
    right->setSizes({size.height(), std::min(size.height() / 6, 140)});
    const int left_minimum = left->minimumSizeHint().width();
    const int left_whole = left_minimum + m_editor->settings_column_width();
    main->setSizes({std::max(left_minimum, std::min(left_whole, size.width() / 2)), size.width()});
}

void MainWindow::build_lessons(bool gpu) {
    m_lessons = new LessonsPanel;
    const LessonLibrary library = load_lesson_library();
    m_lessons->set_lessons(library.lessons, library.errors);
    m_lessons->set_gpu_available(gpu);
    auto* dock = new QDockWidget("Lessons", this);
    dock->setObjectName("lessons_dock");
    dock->setWidget(m_lessons);
    // Beside the editor (400 px) and two chart columns (about 620) on a 1366-pixel screen: at 300
    // the three needed 1388 px and the window grew past the projector (issue 28).
    dock->setMinimumWidth(260);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    dock->hide();
    QAction* toggle = dock->toggleViewAction();
    toggle->setToolTip("Guided lessons: each loads an experiment and explains what to watch");
    findChild<QToolBar*>()->addAction(toggle);
    // A lesson owns the charts while open: only its runs, on axes fitted to them.
    m_lesson_focus = new LessonFocus(m_store, this);
    connect(m_lesson_focus, &LessonFocus::changed, this, [this](bool active) {
        m_lessons->set_focused(active);
        m_charts->fit_to_visible();
        if (!active) m_charts->histogram_chart()->pin_step(0); // the newest again
    });
    connect(m_lessons, &LessonsPanel::back_requested, m_lesson_focus, &LessonFocus::leave);
    connect(dock, &QDockWidget::visibilityChanged, this, [this, dock](bool visible) {
        if (!visible && dock->isHidden()) m_lesson_focus->leave(); // closed, not just covered
        // The editor (its columns), two chart columns and the panel need about 1350 px: on a
        // narrower screen (a 1280-px projector) the editor steps aside while the panel is open,
        // as Presentation mode sets it aside, and comes back when the panel closes (issue 28).
        if (visible && !dock->isHidden() && m_left->isVisible() && !isFullScreen() &&
            minimumSizeHint().width() > screen_room(this).width()) {
            m_left->hide();
            m_left_hidden_for_lessons = true;
            m_status->setText("The Model and Settings tabs make room for the Lessons panel on "
                              "this screen; close the panel to see them again");
        } else if (dock->isHidden() && m_left_hidden_for_lessons) {
            m_left->show();
            m_left_hidden_for_lessons = false;
        }
    });
    connect(m_lessons, &LessonsPanel::lesson_opened, this, [this](const Lesson& lesson) {
        if (!adopt_lesson(lesson)) return;
        m_lesson_focus->enter(lesson);
        m_charts->fit_to_visible();
        m_charts->histogram_chart()->pin_step(lesson.histogram_step); // the step its text reads
        log("opened lesson " + QString::fromStdString(lesson.id));
    });
    connect(m_lessons, &LessonsPanel::run_requested, this, [this](const Lesson& lesson) {
        if (QString::fromStdString(current_experiment().name) != lesson_document_name(lesson) &&
            !adopt_lesson(lesson))
            return;
        // Each run on the device picked in the toolbar, one after the other.
        QVector<Experiment> runs;
        for (const LessonExperiment& run : lesson.experiments) {
            runs.append(run.experiment);
            runs.back().device = m_device->current_id().toStdString();
        }
        m_banner->hide();
        m_lesson_focus->enter(lesson);
        m_charts->fit_to_visible();
        m_charts->histogram_chart()->pin_step(lesson.histogram_step);
        m_compare->start(runs);
        update_actions();
    });
}

MainWindow::~MainWindow() {
    // The Lessons dock is hidden as QWidget's destructor deletes the children, after this part of
    // the window is gone: its visibility handler must not reach into it (UBSan caught it).
    if (auto* dock = findChild<QDockWidget*>("lessons_dock")) dock->disconnect(this);
}

QString MainWindow::lesson_document_name(const Lesson& lesson) const {
    int number = 0;
    for (int i = 0; i < m_lessons->lesson_count(); ++i)
        if (m_lessons->lessons()[i].id == lesson.id) number = i + 1;
    return QString("Lesson %1 — %2")
        .arg(number)
        .arg(QString::fromStdString(lesson.experiments.front().label));
}

bool MainWindow::adopt_lesson(const Lesson& lesson) {
    // A lesson is a new document with no file: the file open before it is never a Save target.
    if (!m_document->maybe_save([this] { return save(); })) return false;
    Experiment e = lesson.experiments.front().experiment;
    e.name = lesson_document_name(lesson).toStdString();
    m_banner->hide(); // before set_experiment, which may report its own problem
    set_experiment(e);
    m_document->set_clean(current_experiment(), QString());
    update_title();
    return true;
}

void MainWindow::build_toolbar() {
    QToolBar* bar = addToolBar("Main");
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_open = bar->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), "Open…");
    m_open->setShortcut(QKeySequence::Open);
    m_open->setToolTip("Open an experiment file (Ctrl+O); or drop one onto the window");
    connect(m_open, &QAction::triggered, this, [this] {
        if (!m_document->maybe_save([this] { return save(); })) return;
        const QString path = QFileDialog::getOpenFileName(this, "Open experiment", dialog_folder(),
                                                          "Experiments (*.json)");
        remember_dialog_folder(path);
        if (!path.isEmpty()) load_experiment_file(path);
    });
    m_save = bar->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), "Save");
    m_save->setShortcut(QKeySequence::Save);
    m_save->setToolTip("Save the experiment as JSON (Ctrl+S)");
    connect(m_save, &QAction::triggered, this, [this] { save(); });
    bar->addSeparator();
    bar->addWidget(new QLabel(" Device: "));
    m_device = new DeviceMenu;
    connect(m_device, &DeviceMenu::device_changed, this, [this] {
        m_form->set_cuda_options_enabled(m_device->gpu_selected());
        document_edited();
    });
    connect(m_device, &DeviceMenu::check_progress, this,
            [this](const QString& message) { m_status->setText(message); });
    connect(m_device, &DeviceMenu::check_finished, this,
            [this](bool passed, const QString& message) {
                log(message);
                m_status->setText(message);
                if (!passed) m_banner->show_error("The CUDA engine failed its check.", message);
            });
    bar->addWidget(m_device);
    bar->addSeparator();
    m_train = bar->addAction(style()->standardIcon(QStyle::SP_MediaPlay), "Train");
    m_train->setShortcut(QKeySequence("Ctrl+R"));
    connect(m_train, &QAction::triggered, this, &MainWindow::train);
    m_pause = bar->addAction(style()->standardIcon(QStyle::SP_MediaPause), "Pause");
    m_pause->setShortcut(QKeySequence(Qt::Key_Space));
    m_pause->setCheckable(true);
    m_pause->setToolTip("Pause or resume between steps (Space)");
    connect(m_pause, &QAction::toggled, this,
            [this](bool paused) { paused ? m_controller->pause() : m_controller->resume(); });
    m_stop = bar->addAction(style()->standardIcon(QStyle::SP_MediaStop), "Stop");
    m_stop->setToolTip("Stop after the current step and keep the run's metrics");
    connect(m_stop, &QAction::triggered, this, [this] {
        m_compare->cancel();
        m_controller->stop();
    });
    bar->addSeparator();
    m_compare_action = bar->addAction("Compare policies…");
    m_compare_action->setToolTip(
        "Train this model once per chosen policy and fill the comparison table");
    connect(m_compare_action, &QAction::triggered, this, [this] { compare_policies({}); });
    update_actions();
}

void MainWindow::build_file_menu() {
    QMenu* file = menuBar()->addMenu("&File");
    QAction* new_action = file->addAction("&New Experiment", this, [this] {
        if (!m_document->maybe_save([this] { return save(); })) return;
        // mlp-small's model and settings as an untitled document with no file.
        if (!load_experiment_file(":/experiments/mlp-small.json")) return;
        m_base.name = "untitled";
        m_form->set_experiment(m_base);
        m_document->set_clean(current_experiment(), QString());
        update_title();
    });
    new_action->setShortcut(QKeySequence::New);
    file->addAction(m_open);
    m_recent_menu = file->addMenu("Open &Recent");
    connect(m_recent_menu, &QMenu::aboutToShow, this,
            [this] { m_recent->fill_menu(m_recent_menu); });
    m_recent->fill_menu(m_recent_menu);
    connect(m_recent, &RecentFiles::changed, this, [this] { m_recent->fill_menu(m_recent_menu); });
    file->addAction(m_save);
    QAction* save_as_action = file->addAction("Save &As…", this, [this] { save_as(); });
    save_as_action->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    file->addAction("Export &Chart…", this, [this] {
        ChartExportDialog dialog(m_charts, this);
        if (dialog.exec() != QDialog::Accepted) return;
        if (const QString error = dialog.export_to_chosen_file(); !error.isEmpty())
            m_banner->show_error("Could not export the chart.", error);
    });
    QAction* runs_dir = file->addAction("Runs &Folder…", this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, "Folder for the run history", m_history->dir());
        remember_dialog_folder(dir);
        if (dir.isEmpty()) return;
        m_history->set_dir(dir);
        log("Run history: now in " + dir);
    });
    runs_dir->setToolTip("Where every run's config, metrics and weights are kept");
    QAction* load_weights = file->addAction("Load &Weights…", this, [this] {
        if (m_document->maybe_save([this] { return save(); })) m_weights->ask_and_load(this);
    });
    load_weights->setObjectName("load_weights");
    load_weights->setToolTip("Open a .safetensors file: its experiment goes into the editor and "
                             "the next run starts from its weights");
    file->addAction("&Evaluate Weights…", this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, "Evaluate weights", dialog_folder(),
                                                          "safetensors (*.safetensors)");
        remember_dialog_folder(path);
        if (!path.isEmpty()) evaluate_weights(path);
    });
    file->addSeparator();
    QAction* quit = file->addAction("&Quit", this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    QMenu* view = menuBar()->addMenu("&View");
    view->addAction(m_presentation->action());
    view->addAction(m_charts->ignore_outliers_action());
    addAction(m_presentation->action()); // F11 works with the menu bar hidden in full screen
}

void MainWindow::evaluate_weights(const QString& path) {
    const QString device = QString::fromStdString(current_experiment().device);
    if (!m_evaluator->evaluate(path, device))
        log("An evaluation is still running; evaluate " + path + " when it has finished.");
}

void MainWindow::wire_weights() {
    connect(m_runs_menu, &RunHistoryMenu::evaluate_weights_requested, this,
            &MainWindow::evaluate_weights);
    connect(m_evaluator, &WeightsEvaluator::started, this, [this](const QString& path) {
        m_status->setText("Evaluating " + QFileInfo(path).fileName() + " on the test set…");
    });
    connect(m_evaluator, &WeightsEvaluator::finished, this,
            [this](const QString& path, double loss, double accuracy, qint64 examples) {
                const QString line = QString("Evaluated %1: test accuracy %2% · test loss %3 "
                                             "over %4 images")
                                         .arg(path)
                                         .arg(100.0 * accuracy, 0, 'f', 2)
                                         .arg(loss, 0, 'f', 4)
                                         .arg(examples);
                m_status->setText(line);
                log(line);
            });
    connect(m_evaluator, &WeightsEvaluator::failed, this,
            [this](const QString& path, const QString& message) {
                m_status->setText("Evaluation failed");
                m_banner->show_error("Could not evaluate " + path,
                                     message + " Pick a .safetensors file Mantissa wrote.");
            });
    connect(m_runs_menu, &RunHistoryMenu::load_weights_requested, this, [this](const QString& p) {
        if (m_document->maybe_save([this] { return save(); })) m_weights->load(p);
    });
    connect(m_weights, &WeightsLoader::error, m_banner, &ErrorBanner::show_error);
    connect(m_weights, &WeightsLoader::loaded, this,
            [this](const Experiment& experiment, const QString& summary) {
                m_banner->hide();
                set_experiment(experiment);
                m_document->set_clean(current_experiment(), QString());
                update_title();
                m_status->setText("Weights loaded: the next run starts from them");
                log(summary);
            });
}

void MainWindow::wire_training() {
    TrainingController* c = m_controller;
    c->set_metrics_path_provider([this](int id) { return m_history->prepare(id); });
    connect(
        c, &TrainingController::run_started, this,
        [this](int id, const QString& device, const MemoryByCategory& memory, qint64 per_epoch) {
            m_store->set_started(id, device, memory, per_epoch);
            m_status->setText("Training " + m_store->run(id)->name + " on " + device);
        });
    connect(
        c, &TrainingController::steps_arrived, this,
        [this](int id, const QVector<StepRecord>& steps) {
            m_store->append_steps(id, steps);
            const RunRecord* run = m_store->run(id);
            if (!run || steps.isEmpty() || run->steps_per_epoch <= 0) return;
            const StepRecord& last = steps.back();
            const std::int64_t planned = std::max<std::int64_t>(1, planned_steps(*run));
            m_progress->setValue(static_cast<int>(100 * std::min(last.step, planned) / planned));
            m_progress->setToolTip(QString("step %1 of %2").arg(last.step).arg(planned));
            if (m_controller->is_paused()) { // the step in flight when Pause came
                m_status->setText(QString("%1 · paused at step %2").arg(run->name).arg(last.step));
                return;
            }
            const double eta_s =
                static_cast<double>(planned_steps(*run) - last.step) * last.step_ms / 1000.0;
            m_status->setText(QString("%1 · epoch %2/%3 · step %4 · loss %5 · scale %6 · ETA %7 s")
                                  .arg(run->name)
                                  .arg(last.epoch)
                                  .arg(run->experiment.epochs)
                                  .arg(last.step)
                                  .arg(last.loss, 0, 'f', 4)
                                  .arg(last.loss_scale)
                                  .arg(std::max(0.0, eta_s), 0, 'f', 0));
        });
    connect(c, &TrainingController::device_notice, this,
            [this](int, const QString& text, bool warning) {
                if (warning)
                    m_banner->show_error("About the engine this run uses:", text);
                else
                    m_status->setText(text);
            });
    // Validation and saving send no steps: without this the status line looks frozen on the CPU,
    // where a CNN's pass over the test set takes seconds.
    connect(c, &TrainingController::phase_changed, this, [this](int id, RunPhase phase) {
        const RunRecord* run = m_store->run(id);
        if (!run) return;
        if (phase == RunPhase::Validating)
            m_status->setText(run->name + " · validating on the 10,000 test images…");
        else if (phase == RunPhase::Saving)
            m_status->setText(run->name + " · saving the weights…");
    });
    connect(c, &TrainingController::epoch_finished, this,
            [this](int id, const EpochRecord& epoch) { m_store->append_epoch(id, epoch); });
    connect(c, &TrainingController::run_finished, this, [this](int id, const RunSummary& summary) {
        m_store->set_finished(id, summary);
        // Full only for a run that ran to its end: a stopped or diverged one shows where it got.
        if (summary.status == RunStatus::Completed) m_progress->setValue(100);
        m_status->setText(
            m_store->run(id)->name + ": " + run_status_name(summary.status) +
            QString(" · test accuracy %1%").arg(100.0 * summary.val_accuracy, 0, 'f', 2));
        // The message already holds the advice for this run's policy and scaling: once.
        if (summary.status == RunStatus::Diverged)
            m_banner->show_error(QString::fromStdString(summary.message),
                                 "The run is kept in the runs list.");
        update_actions();
    });
    connect(c, &TrainingController::run_failed, this, [this](int id, const QString& message) {
        m_store->set_state(id, RunState::Failed, message);
        m_banner->show_error("The run could not start or failed.", message);
        m_status->setText("Failed: " + message);
        update_actions();
    });
    connect(c, &TrainingController::histograms_arrived, m_charts, &ChartsPanel::add_histograms);
    connect(c, &TrainingController::quant_arrived, m_store, &RunStore::append_quant);
    connect(c, &TrainingController::log_line, this, &MainWindow::log);
    connect(c, &TrainingController::state_changed, this, &MainWindow::update_actions);
    // A paused run has no time left to count down: the status line says where it waits.
    connect(c, &TrainingController::state_changed, this, [this] {
        if (!m_controller->is_running() || !m_controller->is_paused()) return;
        const RunRecord* run = m_store->run(m_controller->current_run());
        if (!run) return;
        m_status->setText(
            run->steps.isEmpty()
                ? run->name + " · paused"
                : QString("%1 · paused at step %2").arg(run->name).arg(run->steps.back().step));
    });
}

Experiment MainWindow::current_experiment() const {
    Experiment e = m_form->apply_to(m_base);
    e.model = m_editor->model();
    e.device = m_device->current_id().toStdString();
    return e;
}

void MainWindow::set_experiment(const Experiment& experiment) {
    m_base = experiment;
    m_form->set_experiment(experiment);
    m_editor->set_context(QString::fromStdString(experiment.policy), experiment.loss_scale);
    m_editor->set_model(experiment.model);
    const QString device_problem =
        m_device->select_for_experiment(QString::fromStdString(experiment.device));
    if (!device_problem.isEmpty())
        m_banner->show_error("This experiment's device is not available here.", device_problem);
    update_actions();
    refresh_plan();
}

bool MainWindow::load_experiment_file(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        m_banner->show_error("Could not open " + path, file.errorString());
        if (!QFileInfo::exists(path)) m_recent->remove(path);
        return false;
    }
    Experiment experiment;
    try {
        experiment = experiment_from_json(file.readAll().toStdString(),
                                          QFileInfo(path).fileName().toStdString());
    } catch (const Error& e) {
        m_banner->show_error("This experiment file cannot be used.", e.what());
        return false;
    }
    m_banner->hide(); // an error from an earlier open no longer applies
    set_experiment(experiment);
    // Built-in presets (":/...") open as untitled: Save asks where to write.
    const bool builtin = path.startsWith(':');
    m_document->set_clean(current_experiment(), path);
    if (!builtin) m_recent->add(path);
    update_title();
    log("loaded " + path);
    return true;
}

void MainWindow::open_file(const QString& path) {
    if (!m_document->maybe_save([this] { return save(); })) return;
    load_experiment_file(path);
}

bool MainWindow::save() {
    // Only a file the user opened or saved is written without asking; anything else (New, a
    // preset, a lesson) asks for a new file.
    const QString path = m_document->save_target();
    return !path.isEmpty() && save_as(path);
}

bool MainWindow::save_as(const QString& target) {
    const QString path = target.isEmpty() ? m_document->ask_save_path() : target;
    if (path.isEmpty()) return false;
    const Experiment e = current_experiment();
    try {
        save_experiment(e, path.toStdString());
    } catch (const Error& error) {
        m_banner->show_error("Could not save the experiment.", error.what());
        return false;
    }
    m_document->set_clean(e, path);
    m_recent->add(path);
    update_title();
    log("saved " + path);
    return true;
}

void MainWindow::document_edited() {
    if (!m_document) return;
    m_document->update(current_experiment());
    update_title(); // the name is editable
}

void MainWindow::update_title() {
    const QString file = m_document->path().isEmpty()
                             ? QString()
                             : " (" + QFileInfo(m_document->path()).fileName() + ")";
    // "[*]" is where Qt draws the modified marker ("*") while isWindowModified().
    setWindowTitle("Mantissa — " + QString::fromStdString(current_experiment().name) + file +
                   "[*]");
    setWindowModified(m_document->is_modified());
}

// 8 rows of runs (a lesson's runs beside a repeated comparison, without scrolling) wherever the
// window is at least 760 pixels tall; a shorter window (a 1280×720 projector) keeps 4, so the
// charts above keep room for their titles and ticks. Drag the splitter for more.
void MainWindow::fit_runs_list() {
    const int rows = height() >= 760 ? 8 : 4;
    m_bottom->setMinimumHeight(fit_rows(m_runs_view, rows) +
                               m_bottom->tabBar()->sizeHint().height());
}

void MainWindow::resizeEvent(QResizeEvent* event) {
    QMainWindow::resizeEvent(event);
    if (m_bottom) fit_runs_list();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!stop_training_before_quit(this, *m_controller, *m_compare, *m_store, m_quit_prompt)) {
        event->ignore();
        return;
    }
    if (!m_document->maybe_save([this] { return save(); })) {
        event->ignore();
        return;
    }
    m_presentation->set_active(false); // the next launch opens as a window, not full screen
    remember_window_geometry(this);
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!dropped_experiment_file(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString path = dropped_experiment_file(event->mimeData());
    if (path.isEmpty()) return;
    event->acceptProposedAction();
    open_file(path);
}

void MainWindow::train() {
    if (m_controller->is_running()) return;
    m_banner->hide();
    const Experiment e = current_experiment();
    m_controller->set_initial_weights(m_weights->take());
    m_controller->start(e, m_store->add_run(e));
    update_actions();
}

void MainWindow::compare_policies(const QStringList& policies, int repeats) {
    Experiment e = current_experiment();
    QStringList chosen = policies;
    if (chosen.isEmpty()) { // the dialog also sets how long and how often each policy trains
        const CompareChoice choice = ask_comparison(this, e.epochs, e.max_steps);
        chosen = choice.policies;
        e.epochs = choice.epochs;
        e.max_steps = choice.max_steps;
        repeats = choice.repeats;
    }
    if (chosen.isEmpty()) return;
    m_banner->hide();
    m_compare->start(e, chosen, repeats);
    update_actions();
}

bool MainWindow::open_lesson(const QString& which, bool run) {
    bool numeric = false;
    int index = which.toInt(&numeric) - 1;
    if (!numeric) {
        index = -1;
        for (int i = 0; i < m_lessons->lesson_count() && index < 0; ++i)
            if (QString::fromStdString(m_lessons->lessons()[i].id) == which) index = i;
    }
    if (index < 0 || index >= m_lessons->lesson_count()) return false;
    findChild<QDockWidget*>("lessons_dock")->show();
    m_lessons->open_lesson(index);
    if (run) m_lessons->run_button()->click();
    return true;
}

void MainWindow::update_actions() {
    if (!m_train) return;
    const bool running = m_controller->is_running();
    const QString problem = m_editor ? m_editor->validation_error() : QString();
    m_train->setEnabled(!running && problem.isEmpty());
    m_train->setToolTip(problem.isEmpty() ? "Train the current experiment (Ctrl+R)"
                                          : "The layer stack does not fit: " + problem);
    m_compare_action->setEnabled(!running && problem.isEmpty());
    m_pause->setEnabled(running);
    m_stop->setEnabled(running);
    if (m_lessons) m_lessons->set_busy(running || m_compare->active());
    if (m_plan_view) m_plan_view->set_training(running || m_compare->active());
    if (!running && m_pause->isChecked()) {
        const QSignalBlocker block(m_pause);
        m_pause->setChecked(false);
    }
}

void MainWindow::refresh_plan() {
    if (m_plan_view) m_plan_view->set_experiment(current_experiment());
}

void MainWindow::log(const QString& line) {
    m_log->appendPlainText(line);
}

} // namespace mantissa::ui
