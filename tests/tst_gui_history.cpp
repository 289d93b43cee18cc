// The run history and the experiment file workflow, offscreen, with the runs folder and the
// settings in temporary folders: runs survive a restart, rename and delete reach the disk, a
// killed run reopens as incomplete; recent files, drag-and-drop, the unsaved-changes prompt and
// chart export behave as a user expects.
#include <QAction>
#include <QChart>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLegend>
#include <QMenu>
#include <QMimeData>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <memory>

#include "core/plan/plan.h"
#include "core/records/metrics_jsonl.h"
#include "core/train/experiment.h"
#include "tiny_experiment.h"
#include "ui/charts/chart_export.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/gradient_histogram_chart.h"
#include "ui/editor/experiment_document.h"
#include "ui/editor/file_drop.h"
#include "ui/editor/recent_files.h"
#include "ui/runs/comparison_model.h"
#include "ui/runs/run_history.h"
#include "ui/runs/run_history_menu.h"
#include "ui/runs/run_store.h"
#include "ui/training/training_controller.h"
#include "ui/window/error_banner.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

QJsonObject read_json(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

const RunRecord* only_run(const MainWindow& window) {
    const auto& runs = window.run_store()->runs();
    return runs.size() == 1 ? &runs.front() : nullptr;
}

} // namespace

class TestGuiHistory : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> m_runs, m_settings, m_files;
    QString m_first_folder;

    QString runs_dir() const { return m_runs->path(); }

    // An empty runs folder, for the tests that count runs.
    void clear_runs() {
        QDir(runs_dir()).removeRecursively();
        QDir().mkpath(runs_dir());
    }

    QString save_file(const QString& name, const Experiment& e) {
        const QString path = m_files->filePath(name);
        save_experiment(e, path.toStdString());
        return path;
    }

private slots:
    void initTestCase() {
        Q_INIT_RESOURCE(resources);
        m_runs = std::make_unique<QTemporaryDir>();
        m_settings = std::make_unique<QTemporaryDir>();
        m_files = std::make_unique<QTemporaryDir>();
        QVERIFY(m_runs->isValid() && m_settings->isValid() && m_files->isValid());
        qputenv(RunHistory::kEnvVar, runs_dir().toUtf8());
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settings->path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settings->path());
        QSettings().clear();
    }

    void runsFolderFollowsTheEnvironment() {
        QCOMPARE(RunHistory::configured_dir(), runs_dir());
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        QCOMPARE(window.run_history()->dir(), runs_dir());
    }

    void runsFolderIsASetting() {
        QTemporaryDir other;
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        window.run_history()->set_dir(other.path());
        QTRY_VERIFY(!window.run_history()->is_loading());
        QCOMPARE(window.run_history()->dir(), other.path());
        QCOMPARE(QSettings().value(RunHistory::kSettingsKey).toString(), other.path());
        qunsetenv(RunHistory::kEnvVar); // the environment wins over the setting
        QCOMPARE(RunHistory::configured_dir(), other.path());
        QSettings().remove(RunHistory::kSettingsKey);
        QVERIFY(RunHistory::configured_dir().endsWith("/runs"));
        qputenv(RunHistory::kEnvVar, runs_dir().toUtf8());
        QCOMPARE(RunHistory::configured_dir(), runs_dir());
    }

    void trainedRunSurvivesARestart() {
        clear_runs();
        QString name;
        QColor color;
        QDateTime created;
        {
            MainWindow window;
            QTRY_VERIFY(!window.run_history()->is_loading());
            window.set_experiment(tiny_experiment("history-a", 30));
            window.train();
            QTRY_VERIFY_WITH_TIMEOUT(!window.controller()->is_running(), 60000);
            const RunRecord* run = only_run(window);
            QVERIFY(run);
            QCOMPARE(run->state, RunState::Completed);
            QVERIFY(!run->folder.isEmpty());
            m_first_folder = run->folder;
            name = run->name;
            color = run->color;
            created = run->created;
            const QDir folder(run->folder);
            QVERIFY(folder.exists("experiment.json"));
            QVERIFY(folder.exists("metrics.jsonl"));
            QCOMPARE(read_json(folder.filePath("run.json"))["status"].toString(),
                     QString("completed"));
            QCOMPARE(window.run_history()->weights_path(run->id),
                     folder.filePath("weights.safetensors"));
        }
        MainWindow restarted;
        QTRY_VERIFY(!restarted.run_history()->is_loading());
        const RunRecord* run = only_run(restarted);
        QVERIFY(run);
        QVERIFY(run->reopened);
        QCOMPARE(run->folder, m_first_folder);
        QCOMPARE(run->name, name);
        QCOMPARE(run->color, color);
        QCOMPARE(run->state, RunState::Completed);
        QCOMPARE(run->created.toString(Qt::ISODate), created.toString(Qt::ISODate));
        QVERIFY(!restarted.run_store()
                     ->data(restarted.run_store()->index(0, RunStore::ColStarted), Qt::DisplayRole)
                     .toString()
                     .isEmpty());
        QCOMPARE(run->steps.size(), qsizetype(30));
        QCOMPARE(run->epochs.size(), qsizetype(1));
        QVERIFY(run->summary.has_value());
        QCOMPARE(run->summary->steps, std::int64_t(30));
        QCOMPARE(QString::fromStdString(run->experiment.name), QString("history-a"));
        QVERIFY(run->memory.total() > 0);
        QVERIFY(!run->device.isEmpty());
        // Its curves and its comparison row come back.
        restarted.charts()->redraw();
        QVERIFY(restarted.charts()->drawn_points("loss", run->id) > 0);
        QCOMPARE(restarted.comparison_model()->rowCount(), 1);
        QVERIFY(restarted.comparison_model()
                    ->index(0, ComparisonModel::ColAccuracy)
                    .data()
                    .toString()
                    .endsWith("%"));
    }

    void unwritableMetricsFileKeepsTheRun() {
        // A full or read-only disk costs the history file, never the run.
        TrainingController controller;
        RunStore store;
        controller.set_metrics_path_provider(
            [](int) { return QStringLiteral("/nonexistent/dir/metrics.jsonl"); });
        QSignalSpy finished(&controller, &TrainingController::run_finished);
        QSignalSpy logs(&controller, &TrainingController::log_line);
        const Experiment e = tiny_experiment("unwritable", 10);
        controller.start(e, store.add_run(e));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
        QCOMPARE(finished[0][1].value<RunSummary>().status, RunStatus::Completed);
        bool said = false;
        for (const QList<QVariant>& args : std::as_const(logs))
            said = said || (args[0].toString().startsWith("Run history:") &&
                            args[0].toString().contains("/nonexistent/dir/metrics.jsonl"));
        QVERIFY(said);
    }

    void renameAndDeleteReachTheDisk() {
        QVERIFY(!m_first_folder.isEmpty());
        int id = 0;
        {
            MainWindow window;
            QTRY_VERIFY(!window.run_history()->is_loading());
            const RunRecord* run = only_run(window);
            QVERIFY(run);
            id = run->id;
            QVERIFY(!window.run_history()->rename(id, "   ").isEmpty()); // a name is required
            QCOMPARE(window.run_history()->rename(id, "  baseline  "), QString());
            QCOMPARE(window.run_store()->run(id)->name, QString("baseline"));
            QCOMPARE(read_json(QDir(m_first_folder).filePath("run.json"))["name"].toString(),
                     QString("baseline"));
            // Unticking a run is remembered too.
            window.run_store()->setData(window.run_store()->index(0, RunStore::ColName),
                                        Qt::Unchecked, Qt::CheckStateRole);
        }
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        const RunRecord* run = only_run(window);
        QVERIFY(run);
        QCOMPARE(run->name, QString("baseline"));
        QVERIFY(!run->visible);

        std::unique_ptr<QMenu> menu(window.runs_menu()->menu_for(run->id, &window));
        QStringList names;
        for (QAction* action : menu->actions())
            if (!action->objectName().isEmpty()) names << action->objectName();
        QCOMPARE(names, QStringList({"show_only", "show_all", "rename", "export_csv", "export_json",
                                     "export_weights", "load_weights", "evaluate_weights",
                                     "open_folder", "delete"}));
        for (QAction* action : menu->actions())
            if (action->objectName() == "delete") QVERIFY(action->isEnabled());

        // Deleting asks; "no" keeps the run and its folder.
        QString asked;
        window.runs_menu()->set_confirm([&asked](const QString& question) {
            asked = question;
            return false;
        });
        window.runs_menu()->delete_run(run->id);
        QVERIFY(asked.contains("baseline"));
        QCOMPARE(window.run_store()->rowCount(), 1);
        QVERIFY(QDir(m_first_folder).exists());
        window.runs_menu()->set_confirm([](const QString&) { return true; });
        window.runs_menu()->delete_run(run->id);
        QCOMPARE(window.run_store()->rowCount(), 0);
        QVERIFY(!QDir(m_first_folder).exists());

        MainWindow restarted;

        QTRY_VERIFY(!restarted.run_history()->is_loading());
        QCOMPARE(restarted.run_store()->rowCount(), 0);
    }

    // The Gradients tab of a run trained in the app comes back when the run is reopened: the
    // worker's metrics file holds its histogram records and the history reads them.
    void reopenedRunShowsItsHistograms() {
        clear_runs();
        Experiment e = tiny_experiment("history-histograms", 30);
        e.histogram_every = 10; // steps 1, 11 and 21
        {
            MainWindow window;
            QTRY_VERIFY(!window.run_history()->is_loading());
            window.set_experiment(e);
            window.train();
            QTRY_VERIFY_WITH_TIMEOUT(!window.controller()->is_running(), 60000);
            const RunRecord* run = only_run(window);
            QVERIFY(run);
            QCOMPARE(run->state, RunState::Completed);
        }
        MainWindow restarted;
        QTRY_VERIFY(!restarted.run_history()->is_loading());
        const RunRecord* run = only_run(restarted);
        QVERIFY(run);
        QVERIFY(run->reopened);
        QCOMPARE(run->histograms.size(), qsizetype(3));
        QCOMPARE(run->histograms.front().step, std::int64_t(1));
        QCOMPARE(run->histograms.back().step, std::int64_t(21));
        GradientHistogramChart* chart = restarted.charts()->histogram_chart();
        QCOMPARE(chart->shown_run(), run->id);
        QVERIFY(chart->shown_histogram());
        QCOMPARE(chart->shown_histogram()->step, std::int64_t(21));
        QVERIFY(chart->bar_count() > 0);
        QVERIFY(chart->fractions().total > 0);
    }

    void killedRunReopensAsIncomplete() {
        clear_runs();
        // What a run folder looks like after the app was killed in epoch 1: run.json still says
        // "running" and metrics.jsonl ends without a summary (and with half a line).
        const QString folder = QDir(runs_dir()).filePath("20260101-120000-killed");
        QVERIFY(QDir().mkpath(folder));
        const Experiment e = tiny_experiment("killed", 100);
        save_experiment(e, QDir(folder).filePath("experiment.json").toStdString());
        {
            MetricsJsonlWriter writer(QDir(folder).filePath("metrics.jsonl").toStdString());
            Plan plan;
            writer.write_header(e, DeviceInfo{"cpu", "CPU (test)", false, 0}, plan, {});
            for (int i = 1; i <= 12; ++i) {
                StepRecord s;
                s.step = i;
                s.epoch = 1;
                s.loss = 2.0 / i;
                s.accuracy = 0.5;
                s.step_ms = 3;
                s.samples_per_s = 100;
                writer.write_step(s);
            }
        }
        {
            QFile metrics(QDir(folder).filePath("metrics.jsonl"));
            QVERIFY(metrics.open(QIODevice::Append));
            metrics.write("{\"type\":\"step\",\"st");
        }
        QFile meta(QDir(folder).filePath("run.json"));
        QVERIFY(meta.open(QIODevice::WriteOnly));
        meta.write("{\"name\": \"killed run\", \"color\": \"#009e73\", \"status\": \"running\"}");
        meta.close();

        MainWindow window;

        QTRY_VERIFY(!window.run_history()->is_loading());
        const RunRecord* run = only_run(window);
        QVERIFY(run);
        QCOMPARE(run->state, RunState::Incomplete);
        QCOMPARE(run->name, QString("killed run"));
        QCOMPARE(run->color, QColor("#009e73"));
        QCOMPARE(run->steps.size(), qsizetype(12));
        QVERIFY(!run->summary.has_value());
        QCOMPARE(window.run_store()
                     ->data(window.run_store()->index(0, RunStore::ColStatus), Qt::DisplayRole)
                     .toString(),
                 QString("incomplete"));

        // Its metrics still export.
        const QString csv = m_files->filePath("killed.csv");
        QCOMPARE(window.run_history()->export_metrics(run->id, csv), QString());
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll().count('\n'), 13); // header + 12 steps
        const QString json = m_files->filePath("killed.json");
        QCOMPARE(window.run_history()->export_metrics(run->id, json), QString());
        QCOMPARE(read_json(json)["status"].toString(), QString("incomplete"));
        QVERIFY(
            !window.run_history()->export_metrics(run->id, m_files->filePath("x.txt")).isEmpty());
    }

    void damagedRunIsSkippedWithTheLine() {
        clear_runs();
        const QString folder = QDir(runs_dir()).filePath("20260101-130000-damaged");
        QVERIFY(QDir().mkpath(folder));
        save_experiment(tiny_experiment("damaged", 10),
                        QDir(folder).filePath("experiment.json").toStdString());
        QFile metrics(QDir(folder).filePath("metrics.jsonl"));
        QVERIFY(metrics.open(QIODevice::WriteOnly));
        metrics.write("{\"type\":\"log\",\"message\":\"ok\"}\n{oops}\n");
        metrics.close();
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        QCOMPARE(window.run_store()->rowCount(), 0);
        const QStringList problems = window.run_history()->problems();
        QCOMPARE(problems.size(), 1);
        QVERIFY2(problems[0].contains("metrics.jsonl: line 2"), qPrintable(problems[0]));
    }

    void recentFilesKeepTheLastEight() {
        QSettings().remove(RecentFiles::kSettingsKey);
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        QStringList paths;
        for (int i = 0; i < 10; ++i)
            paths << save_file(QString("recent-%1.json").arg(i),
                               tiny_experiment(QString("r%1").arg(i), 5));
        for (const QString& path : paths) window.open_file(path);
        const QStringList recent = window.recent_files()->files();
        QCOMPARE(recent.size(), 8);
        QCOMPARE(recent.front(), paths.back());
        QVERIFY(!recent.contains(paths.front()));
        window.open_file(paths[5]); // reopening moves it to the front, once
        QCOMPARE(window.recent_files()->files().front(), paths[5]);
        QCOMPARE(window.recent_files()->files().count(paths[5]), 1);

        // The menu lists them, newest first; choosing one opens it.
        emit window.recent_menu()->aboutToShow();
        const QList<QAction*> actions = window.recent_menu()->actions();
        QVERIFY(actions.size() >= 8);
        QVERIFY(actions[0]->text().startsWith("&1 recent-5.json"));
        QCOMPARE(actions[1]->toolTip(), paths[9]);
        actions[1]->trigger();
        QCOMPARE(QString::fromStdString(window.current_experiment().name), QString("r9"));

        // A file that has gone away leaves the list when opening it fails.
        QFile::remove(paths[8]);
        window.open_file(paths[8]);
        QVERIFY(!window.error_banner()->isHidden());
        QVERIFY(!window.recent_files()->files().contains(paths[8]));

        // The list survives a restart (QSettings).
        MainWindow restarted;
        QTRY_VERIFY(!restarted.run_history()->is_loading());
        QCOMPARE(restarted.recent_files()->files().front(), paths[9]);
    }

    void droppedJsonFileOpens() {
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        const QString path = save_file("dropped.json", tiny_experiment("dropped", 5));
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(path)});
        QCOMPARE(dropped_experiment_file(&mime), path);
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QApplication::sendEvent(&window, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &drop);
        QCOMPARE(QString::fromStdString(window.current_experiment().name), QString("dropped"));
        QVERIFY(window.windowTitle().contains("dropped.json"));

        // Anything else is refused: a text file, a remote URL.
        QMimeData other;
        other.setUrls({QUrl::fromLocalFile(m_files->filePath("notes.txt")),
                       QUrl("https://example.com/x.json")});
        QCOMPARE(dropped_experiment_file(&other), QString());
        QDragEnterEvent refuse(QPoint(10, 10), Qt::CopyAction, &other, Qt::LeftButton,
                               Qt::NoModifier);
        refuse.setAccepted(false);
        QApplication::sendEvent(&window, &refuse);
        QVERIFY(!refuse.isAccepted());
    }

    void unsavedChangesAreAskedAbout() {
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        const QString first = save_file("first.json", tiny_experiment("first", 5));
        const QString second = save_file("second.json", tiny_experiment("second", 5));
        window.open_file(first);
        QVERIFY(!window.isWindowModified());
        QVERIFY(window.windowTitle().endsWith("[*]"));

        Experiment edited = window.current_experiment();
        edited.epochs = 7;
        window.set_experiment(edited);
        QVERIFY(window.document()->is_modified());
        QVERIFY(window.isWindowModified());

        int asked = 0;
        auto answer = [&](ExperimentDocument::Choice choice) {
            window.document()->set_prompt([&asked, choice](const QString&) {
                ++asked;
                return choice;
            });
        };
        answer(ExperimentDocument::Choice::Cancel);
        window.open_file(second);
        QCOMPARE(asked, 1);
        QCOMPARE(window.current_experiment().epochs, 7); // still the edited one
        QVERIFY(!window.close());                        // Cancel keeps the window open

        answer(ExperimentDocument::Choice::Save);
        window.open_file(second);
        QCOMPARE(asked, 3);
        QCOMPARE(load_experiment(first.toStdString()).epochs, 7); // saved to its own file
        QCOMPARE(QString::fromStdString(window.current_experiment().name), QString("second"));
        QVERIFY(!window.isWindowModified());

        edited = window.current_experiment();
        edited.batch_size = 64;
        window.set_experiment(edited);
        answer(ExperimentDocument::Choice::Discard);
        window.open_file(first);
        QCOMPARE(asked, 4);
        QCOMPARE(load_experiment(second.toStdString()).batch_size, std::int64_t(128));
        QCOMPARE(QString::fromStdString(window.current_experiment().name), QString("first"));

        // Unmodified: no question.
        window.open_file(second);
        QCOMPARE(asked, 4);
        window.set_experiment(edited);
        answer(ExperimentDocument::Choice::Discard);
        QVERIFY(window.close());
        QCOMPARE(asked, 5);
    }

    void jsonSyntaxErrorShowsTheLine() {
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        const QString path = m_files->filePath("broken.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\n  \"name\": \"broken\",\n  \"epochs\": 3,,\n}\n");
        file.close();
        QVERIFY(!window.load_experiment_file(path));
        QVERIFY(!window.error_banner()->isHidden());
        const QString text = window.error_banner()->text();
        QVERIFY2(text.contains("broken.json: line 3"), qPrintable(text));

        // An unknown field is named too.
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write("{\"name\": \"x\", \"epoch\": 3}");
        file.close();
        QVERIFY(!window.load_experiment_file(path));
        QVERIFY2(window.error_banner()->text().contains("epoch"),
                 qPrintable(window.error_banner()->text()));
    }

    void fileWithoutFormatVersionLoads() {
        // Format 1 is the only one; files written before the field existed have none.
        QFile preset(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");
        QVERIFY(preset.open(QIODevice::ReadOnly));
        QJsonObject o = QJsonDocument::fromJson(preset.readAll()).object();
        o.remove("format_version");
        o["name"] = "unversioned";
        const QString path = m_files->filePath("unversioned.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QJsonDocument(o).toJson());
        file.close();
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        QVERIFY(window.load_experiment_file(path));
        QVERIFY(window.error_banner()->isHidden());
        QCOMPARE(QString::fromStdString(window.current_experiment().name), QString("unversioned"));
    }

    void chartExportWritesPngAndSvg_data() {
        QTest::addColumn<QString>("chart");
        QTest::addColumn<QSize>("size");
        QTest::newRow("loss png") << "loss" << QSize(640, 480);
        QTest::newRow("accuracy wide") << "accuracy" << QSize(1600, 500);
        QTest::newRow("memory") << "memory" << QSize(800, 300);
    }

    void chartExportWritesPngAndSvg() {
        QFETCH(QString, chart);
        QFETCH(QSize, size);
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        window.show();
        QChart* c = window.charts()->qchart(chart);
        QVERIFY(c);
        const QRectF before = c->geometry();
        const bool legend_before = c->legend()->isVisible();
        const QString png = m_files->filePath(chart + ".png");
        QCOMPARE(export_chart(c, size, png, chart), QString());
        const QImage image(png);
        QCOMPARE(image.size(), size);
        // Not a blank image: the chart drew its background, axes and title.
        QVERIFY(image.pixel(size.width() / 2, size.height() / 2) != image.pixel(2, 2) ||
                image.pixel(size.width() / 4, 10) != image.pixel(2, 2) ||
                qAlpha(image.pixel(2, 2)) > 0);
        const QString svg = m_files->filePath(chart + ".svg");
        QCOMPARE(export_chart(c, size, svg, chart), QString());
        QSvgRenderer renderer(svg);
        QVERIFY(renderer.isValid());
        QCOMPARE(renderer.viewBox(), QRect(QPoint(0, 0), size));
        // The width and height are written in mm at 96 dpi, CSS's pixel: `size` in a browser.
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        const QRegularExpressionMatch width =
            QRegularExpression("width=\"([0-9.]+)mm\"").match(text);
        QVERIFY(width.hasMatch());
        QVERIFY(qAbs(width.captured(1).toDouble() / 25.4 * 96 - size.width()) < 1);
        QCOMPARE(c->geometry(), before); // the live chart is left as it was
        QCOMPARE(c->legend()->isVisible(), legend_before);

        QVERIFY(!export_chart(c, QSize(4, 4), png, chart).isEmpty());
        QVERIFY(!export_chart(c, size, m_files->filePath("x.bmp"), chart).isEmpty());
        QVERIFY(!export_chart(c, size, "/nonexistent/dir/x.png", chart).isEmpty());
    }
};

QTEST_MAIN(TestGuiHistory)
#include "tst_gui_history.moc"
