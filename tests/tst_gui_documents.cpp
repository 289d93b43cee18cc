// Documents: nothing is overwritten by surprise. The sequence (open an experiment file,
// open a lesson, New experiment, answer Save) leaves the file's bytes as they were; a lesson, New
// and a built-in preset are documents with no file, whose Save asks for a new one; file dialogs
// start in the last-used folder or the user's documents, never the source checkout.
#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include "core/io/atomic_file.h"
#include "core/train/experiment.h"
#include "tests/isolated_app_dirs.h"
#include "ui/editor/experiment_document.h"
#include "ui/lessons/lessons_panel.h"
#include "ui/window/dialog_folder.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

QByteArray bytes_of(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QAction* action_named(const MainWindow& window, const QString& text) {
    for (QAction* a : window.findChildren<QAction*>())
        if (a->text() == text) return a;
    return nullptr;
}

// Answers the Save / Discard / Cancel question and the file dialog, and counts both.
struct Answers {
    int asked = 0, paths_asked = 0;
    QString asked_name, suggested, save_to;
    ExperimentDocument::Choice choice = ExperimentDocument::Choice::Save;

    void install(MainWindow& window) {
        window.document()->set_prompt([this](const QString& name) {
            ++asked;
            asked_name = name;
            return choice;
        });
        window.document()->set_path_prompt([this](const QString& suggested_path) {
            ++paths_asked;
            suggested = suggested_path;
            return save_to;
        });
    }
};

} // namespace

class TestGuiDocuments : public QObject {
    Q_OBJECT

    IsolatedAppDirs m_dirs;
    QTemporaryDir m_tmp;
    QString m_file; // the user's experiment, "wants-cuda"
    QByteArray m_bytes;

private slots:
    void initTestCase() {
        Q_INIT_RESOURCE(resources);
        QVERIFY(m_tmp.isValid());
    }

    void init() {
        // A fresh copy of the user's file for each test.
        m_file = m_tmp.filePath("cuda.json");
        Experiment e = load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");
        e.name = "wants-cuda";
        e.device = "cpu";
        e.epochs = 2;
        save_experiment(e, m_file.toStdString());
        m_bytes = bytes_of(m_file);
        QVERIFY(!m_bytes.isEmpty());
    }

    // The exact sequence, answering Save: the lesson is not written over cuda.json.
    void lessonThenNewAnswerSaveKeepsTheFile() {
        MainWindow window;
        Answers answers;
        answers.save_to = m_tmp.filePath("lesson-copy.json");
        answers.install(window);
        QVERIFY(window.load_experiment_file(m_file));
        QCOMPARE(window.document()->path(), m_file);

        QVERIFY(window.open_lesson("2"));
        QCOMPARE(QString::fromStdString(window.current_experiment().name),
                 QString("Lesson 2 — float16 (pure)"));
        QCOMPARE(window.document()->path(), QString()); // a new document with no file
        QVERIFY(!window.isWindowModified());
        QVERIFY(!window.windowTitle().contains("cuda.json"));

        // An edit, so New has something to ask about.
        Experiment edited = window.current_experiment();
        edited.batch_size = 64;
        window.set_experiment(edited);
        QVERIFY(window.isWindowModified());

        QAction* new_action = action_named(window, "&New Experiment");
        QVERIFY(new_action);
        new_action->trigger();
        QCOMPARE(answers.asked, 1);
        QCOMPARE(answers.asked_name, QString("Lesson 2 — float16 (pure)"));
        QCOMPARE(answers.paths_asked, 1); // Save asked for a new file...
        QVERIFY(answers.suggested != m_file);
        QCOMPARE(bytes_of(m_file), m_bytes); // ...and cuda.json is untouched
        const Experiment saved = load_experiment(answers.save_to.toStdString());
        QCOMPARE(saved.policy, std::string("float16"));
        QCOMPARE(saved.batch_size, std::int64_t(64));

        // New: an untitled document with no file.
        QCOMPARE(QString::fromStdString(window.current_experiment().name), QString("untitled"));
        QCOMPARE(window.document()->path(), QString());
        QVERIFY(!window.isWindowModified());
        QCOMPARE(bytes_of(m_file), m_bytes);
    }

    // Unedited, opening a lesson leaves nothing to save; cancelling the file dialog cancels.
    void lessonWithoutEditsAsksNothing() {
        MainWindow window;
        Answers answers;
        answers.install(window);
        QVERIFY(window.load_experiment_file(m_file));
        QVERIFY(window.open_lesson("5"));
        action_named(window, "&New Experiment")->trigger();
        QCOMPARE(answers.asked, 0);
        QCOMPARE(bytes_of(m_file), m_bytes);

        // Edited lesson, Save, then the file dialog cancelled: nothing written, nothing replaced.
        QVERIFY(window.open_lesson("3"));
        Experiment edited = window.current_experiment();
        edited.epochs = 9;
        window.set_experiment(edited);
        answers.save_to.clear();
        action_named(window, "&New Experiment")->trigger();
        QCOMPARE(answers.asked, 1);
        QCOMPARE(answers.paths_asked, 1);
        QCOMPARE(window.current_experiment().epochs, 9); // New did not go on
        QCOMPARE(bytes_of(m_file), m_bytes);
    }

    // Save on a lesson or a built-in preset asks for a file; on the user's file it writes there.
    void saveAsksUnlessTheDocumentHasAFile() {
        MainWindow window;
        Answers answers;
        answers.install(window);
        QVERIFY(window.load_experiment_file(m_file));
        QVERIFY(window.open_lesson("2"));
        answers.save_to.clear();
        QVERIFY(!window.save()); // asked, cancelled
        QCOMPARE(answers.paths_asked, 1);
        QCOMPARE(bytes_of(m_file), m_bytes);

        QVERIFY(window.load_experiment_file(":/experiments/mlp-small.json"));
        QCOMPARE(window.document()->path(), QString());
        answers.save_to = m_tmp.filePath("preset-copy"); // ".json" is added
        QVERIFY(window.save());
        QCOMPARE(answers.paths_asked, 2);
        QVERIFY(QFileInfo::exists(m_tmp.filePath("preset-copy.json")));
        QCOMPARE(window.document()->path(), m_tmp.filePath("preset-copy.json"));

        // Now it has a file: Save writes there without asking.
        Experiment edited = window.current_experiment();
        edited.epochs = 5;
        window.set_experiment(edited);
        QVERIFY(window.save());
        QCOMPARE(answers.paths_asked, 2);
        QCOMPARE(load_experiment(m_tmp.filePath("preset-copy.json").toStdString()).epochs, 5);
        QCOMPARE(bytes_of(m_file), m_bytes);
    }

    // A lesson picked in the Lessons panel is a document with no file, named after it.
    void lessonFromThePanelHasNoFile() {
        MainWindow window;
        Answers answers;
        answers.install(window);
        QVERIFY(window.load_experiment_file(m_file));
        window.lessons_panel()->open_lesson(0);
        QCOMPARE(window.document()->path(), QString());
        QCOMPARE(
            QString::fromStdString(window.current_experiment().name),
            QString("Lesson 1 — ") +
                QString::fromStdString(window.lessons_panel()->lessons()[0].experiments[0].label));
    }

    // File dialogs start in the last-used folder, else the user's documents (or home).
    void dialogsStartInTheUsersFolders() {
        const QString first = dialog_folder();
        QVERIFY(!first.isEmpty());
        QVERIFY2(!QDir::cleanPath(first).startsWith(QDir::cleanPath(MANTISSA_SOURCE_DIR)),
                 qPrintable(first));
        remember_dialog_folder(m_file);
        QCOMPARE(dialog_folder(), QDir::cleanPath(m_tmp.path()));
        remember_dialog_folder(":/experiments/mlp-small.json"); // a resource changes nothing
        QCOMPARE(dialog_folder(), QDir::cleanPath(m_tmp.path()));

        // A document with no file suggests a name in that folder.
        MainWindow window;
        Answers answers;
        answers.install(window);
        QVERIFY(window.open_lesson("2"));
        window.save_as();
        QCOMPARE(QFileInfo(answers.suggested).absolutePath(), QDir::cleanPath(m_tmp.path()));
        QCOMPARE(QFileInfo(answers.suggested).fileName(), QString("Lesson-2-float16-pure.json"));
    }
};

QTEST_MAIN(TestGuiDocuments)
#include "tst_gui_documents.moc"
