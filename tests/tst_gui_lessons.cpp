// The Lessons panel, offscreen: every shipped lesson opens, shows its title, text, runs and what
// to look at, and loads its first run into the editor; Run queues all its runs; bad files are
// listed.
#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QListWidget>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>

#include "core/backend/factory/backend_factory.h"
#include "core/train/experiment.h"
#include "isolated_app_dirs.h"
#include "ui/editor/experiment_document.h"
#include "ui/lessons/lesson_library.h"
#include "ui/lessons/lessons_panel.h"
#include "ui/runs/compare_queue.h"
#include "ui/runs/run_store.h"
#include "ui/training/training_controller.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

bool has_gpu() {
    for (const DeviceInfo& d : available_devices())
        if (d.is_gpu) return true;
    return false;
}

void write(const QString& path, const QByteArray& text) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

} // namespace

class TestGuiLessons : public QObject {
    Q_OBJECT

    IsolatedAppDirs m_dirs; // no runs or recent files from elsewhere

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); }

    void everyShippedLessonLoads() {
        const LessonLibrary library = load_lesson_library();
        QVERIFY2(library.errors.isEmpty(), qPrintable(library.errors.join('\n')));
        // Every lesson file of resources/lessons is in resources.qrc (a file left out of it
        // would exist for the tests and the README but never reach the app).
        const int files = static_cast<int>(QDir(MANTISSA_SOURCE_DIR "/resources/lessons")
                                               .entryList({"*.json"}, QDir::Files)
                                               .size());
        QCOMPARE(files, 11);
        QCOMPARE(static_cast<int>(library.lessons.size()), files);
        MainWindow window;
        QCOMPARE(window.lessons_panel()->lesson_count(), files);
        QCOMPARE(window.lessons_panel()->list()->count(), files);
        QVERIFY(window.lessons_panel()->list()->item(0)->text().startsWith("1. "));
        QVERIFY(!window.lessons_panel()->run_button()->isEnabled()); // nothing open yet
    }

    void openEveryLesson_data() {
        QTest::addColumn<int>("index");
        const LessonLibrary library = load_lesson_library();
        for (int i = 0; i < library.lessons.size(); ++i)
            QTest::newRow(library.lessons[i].id.c_str()) << i;
    }
    void openEveryLesson() {
        QFETCH(int, index);
        MainWindow window;
        LessonsPanel* panel = window.lessons_panel();
        panel->open_lesson(index);
        const Lesson* lesson = panel->current_lesson();
        QVERIFY(lesson);
        const QString shown = panel->shown_text();
        QVERIFY2(shown.contains(QString::fromStdString(lesson->title)), qPrintable(shown));
        for (const std::string& p : lesson->text)
            QVERIFY2(shown.contains(QString::fromStdString(p)), p.c_str());
        for (const std::string& p : lesson->look_at)
            QVERIFY2(shown.contains(QString::fromStdString(p)), p.c_str());
        for (const LessonExperiment& run : lesson->experiments)
            QVERIFY(shown.contains(QString::fromStdString(run.label)));
        // A lesson that needs a GPU says so on a machine without one, and still opens.
        QCOMPARE(shown.contains("Needs a GPU"), lesson->needs_gpu && !has_gpu());
        QVERIFY(panel->run_button()->isEnabled());

        // Its first run is now in the editor and the settings.
        const Experiment& first = lesson->experiments.front().experiment;
        const Experiment e = window.current_experiment();
        QCOMPARE(e.policy, first.policy);
        QCOMPARE(e.model.layers.size(), first.model.layers.size());
        QCOMPARE(e.loss_scale.mode, first.loss_scale.mode);
        QCOMPARE(e.optimizer.type, first.optimizer.type);
        QCOMPARE(e.max_steps, first.max_steps);
        QCOMPARE(e.histogram_every, first.histogram_every);
        // A new document with no file, named after the lesson and its first run.
        QCOMPARE(QString::fromStdString(e.name),
                 QString("Lesson %1 — %2").arg(index + 1).arg(QString::fromStdString(first.name)));
        QVERIFY(window.windowTitle().contains(QString::fromStdString(e.name)));
        QVERIFY(window.document()->path().isEmpty());
    }

    void runQueuesEveryRunOfTheLesson() {
        MainWindow window;
        LessonsPanel* panel = window.lessons_panel();
        int index = -1; // the lesson with the most runs
        const LessonLibrary library = load_lesson_library();
        for (int i = 0; i < library.lessons.size(); ++i)
            if (index < 0 ||
                library.lessons[i].experiments.size() > library.lessons[index].experiments.size())
                index = i;
        panel->open_lesson(index);
        QTest::mouseClick(panel->run_button(), Qt::LeftButton);
        QVERIFY(window.compare_queue()->active());
        QVERIFY(!panel->run_button()->isEnabled()); // busy while the lesson runs
        const RunRecord& first = window.run_store()->runs().front();
        QVERIFY(first.name.startsWith(
            QString::fromStdString(library.lessons[index].experiments.front().label)));
        QCOMPARE(first.experiment.device, window.current_experiment().device);
        window.stop_action()->trigger(); // cancels the queue and stops the first run
        QTRY_VERIFY_WITH_TIMEOUT(
            !window.controller()->is_running() && !window.compare_queue()->active(), 60000);
        QCOMPARE(window.run_store()->runs().size(), 1);
        QTRY_VERIFY(panel->run_button()->isEnabled());
    }

    void lessonsDockIsOneClickAway() {
        MainWindow window;
        auto* dock = window.findChild<QDockWidget*>("lessons_dock");
        QVERIFY(dock);
        QVERIFY(dock->isHidden());
        dock->toggleViewAction()->trigger();
        QVERIFY(!dock->isHidden());
    }

    void openByNumberOrId() {
        // What `mantissa --lesson 3` and `--lesson 03-loss-scaling` call.
        MainWindow window;
        QVERIFY(window.open_lesson("3"));
        QCOMPARE(window.lessons_panel()->current_lesson()->id, std::string("03-loss-scaling"));
        QVERIFY(!window.findChild<QDockWidget*>("lessons_dock")->isHidden());
        QVERIFY(window.open_lesson("06-float32-softmax"));
        QCOMPARE(window.lessons_panel()->current_lesson()->title,
                 window.lessons_panel()->lessons()[5].title);
        QVERIFY(!window.open_lesson("nope"));
        QVERIFY(!window.open_lesson("0"));
        QVERIFY(!window.controller()->is_running()); // opening never starts a run
    }

    void badLessonIsListedAndTheOthersLoad() {
        QTemporaryDir dir;
        write(dir.filePath("a-good.json"),
              R"({"title": "good", "text": ["p"], "look_at": ["x"],
                  "experiments": [{"label": "r", "file": "mlp-small.json"}]})");
        write(dir.filePath("b-bad.json"),
              R"({"title": "bad", "text": ["p"], "look_at": ["x"],
                  "experiments": [{"label": "r", "file": "mlp-small.json",
                                   "set": {"batch_size": 0}}]})");
        const LessonLibrary library = load_lesson_library(dir.path(), ":/experiments");
        QCOMPARE(library.lessons.size(), 1);
        QCOMPARE(library.errors.size(), 1);
        QVERIFY2(library.errors[0].contains("b-bad.json") &&
                     library.errors[0].contains("batch_size"),
                 qPrintable(library.errors[0]));
        LessonsPanel panel;
        panel.set_lessons(library.lessons, library.errors);
        QCOMPARE(panel.lesson_count(), 1);
    }
};

QTEST_MAIN(TestGuiLessons)
#include "tst_gui_lessons.moc"
