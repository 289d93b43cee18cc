// Lessons own the screen: opening or running a lesson after other runs exist shows only the
// lesson's runs, on an x-axis fitted to them, with chart titles that count only them; "Back to
// my runs" or closing the panel brings the earlier view back. The runs list shows 8 rows and has
// "show only these" / "show all".
#include <QAbstractAxis>
#include <QAction>
#include <QApplication>
#include <QChart>
#include <QDockWidget>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QMenu>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QValueAxis>

#include "core/train/lesson.h"
#include "isolated_app_dirs.h"
#include "tiny_experiment.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/loss_scale_chart.h"
#include "ui/charts/metric_chart.h"
#include "ui/lessons/lesson_focus.h"
#include "ui/lessons/lessons_panel.h"
#include "ui/runs/compare_queue.h"
#include "ui/runs/comparison_model.h"
#include "ui/runs/run_history_menu.h"
#include "ui/runs/run_store.h"
#include "ui/training/training_controller.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

struct OwnRunsDir {
    QTemporaryDir dir;
    OwnRunsDir() { qputenv(RunHistory::kEnvVar, dir.path().toUtf8()); }
};

// A long earlier run (1,500 steps) whose dynamic loss scaler skipped 5 steps.
RunRecord earlier_run(const QString& name) {
    RunRecord r;
    r.name = name;
    r.experiment = tiny_experiment(name, 1500);
    r.experiment.policy = "mixed_float16";
    r.device = "CPU";
    r.state = RunState::Completed;
    for (int i = 1; i <= 1500; ++i) {
        StepRecord s;
        s.step = i;
        s.epoch = 1;
        s.loss = 2.0 / i;
        s.step_ms = 3;
        s.loss_scale = 1;
        s.skipped = i <= 5;
        r.steps.append(s);
    }
    return r;
}

// A two-run lesson of tiny experiments (12 steps each) that skip nothing.
Lesson tiny_lesson() {
    Lesson lesson;
    lesson.id = "99-tiny";
    lesson.title = "Tiny lesson";
    lesson.text = {"Two short runs."};
    lesson.look_at = {"The loss."};
    for (const char* policy : {"float32", "mixed_bfloat16"}) {
        LessonExperiment run;
        run.label = std::string("tiny ") + policy;
        run.experiment = tiny_experiment(QString::fromStdString(run.label), 12);
        run.experiment.policy = policy;
        lesson.experiments.push_back(run);
    }
    return lesson;
}

double x_max(const MetricChart* chart) {
    const auto axes = chart->chart()->axes(Qt::Horizontal);
    const auto* axis = axes.isEmpty() ? nullptr : qobject_cast<const QValueAxis*>(axes.front());
    return axis ? axis->max() : -1;
}

QSet<int> visible_ids(const RunStore& store) {
    QSet<int> out;
    for (const RunRecord& run : store.runs())
        if (run.visible) out.insert(run.id);
    return out;
}

} // namespace

class TestGuiLessonFocus : public QObject {
    Q_OBJECT

    IsolatedAppDirs m_dirs;

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); }

    void lessonShowsOnlyItsRunsAndGivesTheViewBack() {
        OwnRunsDir runs_dir;
        MainWindow window;
        window.show(); // the dock reports being closed only when it was on screen
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        RunStore* store = window.run_store();
        const int old1 = store->add_stored_run(earlier_run("mine A"));
        const int old2 = store->add_stored_run(earlier_run("mine B"));
        const int hidden = store->add_stored_run(earlier_run("mine C"));
        store->set_visibility({{hidden, false}});
        ChartsPanel* charts = window.charts();
        charts->redraw();
        QCOMPARE(x_max(charts->chart("loss")), 1500.0);
        // Two visible runs that skipped: the title says how many runs skipped, not their sum
        // under one run's scale (issue 28).
        QVERIFY2(charts->chart("loss_scale")->full_title().contains("skips in 2 of 2 runs"),
                 qPrintable(charts->chart("loss_scale")->full_title()));

        LessonsPanel* panel = window.lessons_panel();
        panel->set_lessons({tiny_lesson()});
        QVERIFY(window.open_lesson("1"));
        // Opening: none of the lesson's runs exist yet, and nothing else is drawn.
        QVERIFY(visible_ids(*store).isEmpty());
        QVERIFY(window.lesson_focus()->active());
        QVERIFY(panel->back_button()->isVisibleTo(panel));

        QTest::mouseClick(panel->run_button(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(
            !window.compare_queue()->active() && !window.controller()->is_running(), 120000);
        charts->redraw();
        QCOMPARE(store->runs().size(), 5);
        const QSet<int> lesson_runs = {store->runs()[3].id, store->runs()[4].id};
        QCOMPARE(visible_ids(*store), lesson_runs);
        // The axis fits 12 steps, not the earlier runs' 1,500; the title counts only these runs.
        for (const char* name : {"loss", "accuracy", "step_time", "loss_scale"}) {
            const double max = x_max(charts->chart(name));
            QVERIFY2(max >= 12 && max <= 20, qPrintable(QString("%1: %2").arg(name).arg(max)));
        }
        const QString title = charts->chart("loss_scale")->full_title();
        QVERIFY2(title.contains("no skipped steps"), qPrintable(title));
        QCOMPARE(charts->drawn_points("memory", old1), 0);
        QCOMPARE(window.comparison_model()->rowCount(), 2); // the table shows the lesson's too

        // One click back: the earlier view, the lesson's runs unticked but kept.
        QTest::mouseClick(panel->back_button(), Qt::LeftButton);
        QVERIFY(!window.lesson_focus()->active());
        QVERIFY(!panel->back_button()->isVisibleTo(panel));
        QCOMPARE(visible_ids(*store), QSet<int>({old1, old2}));
        charts->redraw();
        // The earlier runs' 1,500 steps again (rounded to a tick that the narrower chart beside
        // the Lessons panel can label: 1,500 or 2,000), not the lesson's 12.
        const double back_max = x_max(charts->chart("loss"));
        QVERIFY2(back_max >= 1500 && back_max <= 2000, qPrintable(QString::number(back_max)));

        // Opening the lesson again shows its runs of before; closing the panel leaves it too.
        QVERIFY(window.open_lesson("1"));
        QCOMPARE(visible_ids(*store), lesson_runs);
        auto* dock = window.findChild<QDockWidget*>("lessons_dock");
        QVERIFY(dock->isVisible());
        dock->close();
        QTRY_VERIFY(!window.lesson_focus()->active());
        QCOMPARE(visible_ids(*store), QSet<int>({old1, old2}));
    }

    // The history may reopen runs after a lesson opened (a launch with --lesson): they stay out
    // of the lesson's view unless they are its runs, and come back with the user's view.
    void runsReopenedDuringALesson() {
        RunStore store;
        LessonFocus focus(&store);
        const int mine = store.add_stored_run(earlier_run("mine"));
        const Lesson lesson = tiny_lesson();
        focus.enter(lesson);
        QVERIFY(visible_ids(store).isEmpty());
        RunRecord other = earlier_run("reopened");
        other.reopened = true;
        const int reopened = store.add_stored_run(other);
        RunRecord earlier_lesson_run;
        earlier_lesson_run.experiment = lesson.experiments[1].experiment;
        earlier_lesson_run.reopened = true;
        const int lessons_own = store.add_stored_run(earlier_lesson_run);
        RunRecord started; // a run started in the lesson (not reopened): shown
        const int fresh = store.add_stored_run(started);
        QCOMPARE(visible_ids(store), QSet<int>({lessons_own, fresh}));
        focus.leave();
        QCOMPARE(visible_ids(store), QSet<int>({mine, reopened, lessons_own}));
    }

    void runsListShowsEightRowsWithShowOnlyAndShowAll() {
        OwnRunsDir runs_dir;
        MainWindow window;
        window.resize(1366, 768);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        RunStore* store = window.run_store();
        for (int i = 0; i < 9; ++i)
            store->add_stored_run(earlier_run(QString("run %1").arg(i + 1)));
        QTableView* view = window.runs_view();
        QTRY_VERIFY(view->isVisible());
        // Give the charts all the height they can take: the runs list keeps its 8 rows.
        QSplitter* splitter = nullptr;
        for (QWidget* w = view; w && !splitter; w = w->parentWidget())
            if (auto* s = qobject_cast<QSplitter*>(w); s && s->orientation() == Qt::Vertical)
                splitter = s;
        QVERIFY(splitter);
        splitter->setSizes({5000, 1});
        QApplication::processEvents();
        const int rows_shown =
            view->viewport()->height() / view->verticalHeader()->defaultSectionSize();
        QVERIFY2(rows_shown >= 8, qPrintable(QString::number(rows_shown)));
        qInfo("runs list: %d rows in %d px", rows_shown, view->viewport()->height());

        // Right-click menu: "show only these" on a selection of two, then "show all".
        view->selectionModel()->select(view->model()->index(1, 0),
                                       QItemSelectionModel::Select | QItemSelectionModel::Rows);
        view->selectionModel()->select(view->model()->index(4, 0),
                                       QItemSelectionModel::Select | QItemSelectionModel::Rows);
        const int id1 = store->runs()[1].id, id4 = store->runs()[4].id;
        std::unique_ptr<QMenu> menu(window.runs_menu()->menu_for(id1, view));
        QAction* only = menu->findChild<QAction*>("show_only");
        QVERIFY(only);
        QVERIFY(only->text().contains("2"));
        only->trigger();
        QCOMPARE(visible_ids(*store), QSet<int>({id1, id4}));
        // Right-clicking a run outside the selection acts on that run alone.
        std::unique_ptr<QMenu> single(window.runs_menu()->menu_for(store->runs()[7].id, view));
        single->findChild<QAction*>("show_only")->trigger();
        QCOMPARE(visible_ids(*store), QSet<int>({store->runs()[7].id}));
        menu->findChild<QAction*>("show_all")->trigger();
        QCOMPARE(visible_ids(*store).size(), 9);

        // The buttons beside the tabs do the same.
        auto* only_button = window.findChild<QToolButton*>("show_only_button");
        auto* all_button = window.findChild<QToolButton*>("show_all_button");
        QVERIFY(only_button && all_button);
        QVERIFY(only_button->isVisible());
        QTest::mouseClick(only_button, Qt::LeftButton);
        QCOMPARE(visible_ids(*store), QSet<int>({id1, id4}));
        QTest::mouseClick(all_button, Qt::LeftButton);
        QCOMPARE(visible_ids(*store).size(), 9);
    }
};

QTEST_MAIN(TestGuiLessonFocus)
#include "tst_gui_lesson_focus.moc"
