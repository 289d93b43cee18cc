// Weights from the app, offscreen, with the runs folder and the settings in temporary folders:
// every run ends with a weights.safetensors in its folder, the runs list exports it to ONNX / NPZ
// / safetensors, and Load Weights puts the file's experiment into the editor and its weights into
// the next run.
#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocumentFragment>
#include <cmath>
#include <memory>

#include "core/io/safetensors.h"
#include "core/records/trained_model.h"
#include "core/train/experiment.h"
#include "tiny_experiment.h"
#include "ui/runs/run_history.h"
#include "ui/runs/run_history_menu.h"
#include "ui/runs/run_store.h"
#include "ui/training/training_controller.h"
#include "ui/weights/weights_evaluator.h"
#include "ui/weights/weights_files.h"
#include "ui/weights/weights_loader.h"
#include "ui/window/error_banner.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

QStringList tensor_names(const ModelWeights& weights) {
    QStringList names;
    for (const WeightTensor& t : weights.tensors) names << QString::fromStdString(t.name);
    return names;
}

QAction* action_named(QMenu* menu, const QString& name) {
    for (QAction* action : menu->actions())
        if (action->objectName() == name) return action;
    return nullptr;
}

double max_difference(const ModelWeights& a, const ModelWeights& b) {
    double worst = 0;
    for (const WeightTensor& t : a.tensors) {
        const WeightTensor* other = b.find(t.name);
        if (!other) return INFINITY;
        const std::vector<double> x = values_as_double(t), y = values_as_double(*other);
        if (x.size() != y.size()) return INFINITY;
        for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
    }
    return worst;
}

} // namespace

class TestGuiWeights : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> m_runs, m_config, m_files;
    QString m_weights; // the weights.safetensors of the run trainedRunKeepsItsWeights made
    double m_accuracy = 0;

private slots:
    void initTestCase() {
        Q_INIT_RESOURCE(resources);
        m_runs = std::make_unique<QTemporaryDir>();
        m_config = std::make_unique<QTemporaryDir>();
        m_files = std::make_unique<QTemporaryDir>();
        QVERIFY(m_runs->isValid() && m_config->isValid() && m_files->isValid());
        qputenv(RunHistory::kEnvVar, m_runs->path().toUtf8());
        qputenv("XDG_CONFIG_HOME", m_config->path().toUtf8());
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_config->path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_config->path());
        QSettings().clear();
    }

    void trainedRunKeepsItsWeights() {
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        window.set_experiment(tiny_experiment("weights-a", 20));
        window.train();
        QTRY_VERIFY_WITH_TIMEOUT(!window.controller()->is_running(), 60000);
        const RunRecord* run = window.run_store()->run(window.controller()->current_run());
        QVERIFY(run);
        QCOMPARE(run->state, RunState::Completed);
        m_weights = QDir(run->folder).filePath("weights.safetensors");
        QCOMPARE(window.run_history()->weights_path(run->id), m_weights);
        QVERIFY(QFileInfo::exists(m_weights));

        const SafetensorsFile file = read_safetensors(m_weights.toStdString());
        QCOMPARE(tensor_names(file.weights),
                 QStringList({"dense_1.kernel", "dense_1.bias", "dense_2.kernel", "dense_2.bias",
                              "dense_3.kernel", "dense_3.bias"}));
        for (const WeightTensor& t : file.weights.tensors) QCOMPARE(t.dtype, DType::Float32);
        const TrainedModel model = load_trained_model(m_weights.toStdString());
        QCOMPARE(QString::fromStdString(model.experiment.name), QString("weights-a"));
        QVERIFY(run->summary.has_value());
        QCOMPARE(model.test_accuracy, run->summary->val_accuracy);
        m_accuracy = model.test_accuracy;
        QVERIFY(m_accuracy > 0.5); // 20 steps of RMSprop already classify most digits

        // The menu offers both weights actions for it.
        std::unique_ptr<QMenu> menu(window.runs_menu()->menu_for(run->id, &window));
        QVERIFY(action_named(menu.get(), "export_weights")->isEnabled());
        QVERIFY(action_named(menu.get(), "load_weights")->isEnabled());
    }

    void unwritableFolderCostsOnlyTheWeights() {
        TrainingController controller;
        RunStore store;
        controller.set_metrics_path_provider(
            [](int) { return QStringLiteral("/nonexistent/dir/metrics.jsonl"); });
        QSignalSpy finished(&controller, &TrainingController::run_finished);
        QSignalSpy logs(&controller, &TrainingController::log_line);
        const Experiment e = tiny_experiment("unwritable", 5);
        controller.start(e, store.add_run(e));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
        QCOMPARE(finished[0][1].value<RunSummary>().status, RunStatus::Completed);
        bool said = false;
        for (const QList<QVariant>& args : std::as_const(logs))
            said = said || (args[0].toString().contains("weights were not saved") &&
                            args[0].toString().contains("/nonexistent/dir/weights.safetensors"));
        QVERIFY(said);
    }

    void exportFromTheRunsList_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("dtype"); // -1: as stored
        QTest::addColumn<QByteArray>("magic");
        QTest::newRow("onnx") << "model.onnx" << -1 << QByteArray();
        QTest::newRow("onnx float16") << "model16.onnx" << int(DType::Float16) << QByteArray();
        QTest::newRow("npz") << "model.npz" << -1 << QByteArray("PK\x03\x04");
        QTest::newRow("safetensors float16")
            << "model16.safetensors" << int(DType::Float16) << QByteArray();
    }

    void exportFromTheRunsList() {
        QFETCH(QString, file);
        QFETCH(int, dtype);
        QFETCH(QByteArray, magic);
        QVERIFY(!m_weights.isEmpty());
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        QCOMPARE(window.run_store()->runs().size(), qsizetype(1));
        const int id = window.run_store()->runs().front().id;
        const QString path = m_files->filePath(file);
        QSignalSpy errors(window.runs_menu(), &RunHistoryMenu::error);
        const std::optional<DType> as =
            dtype < 0 ? std::nullopt : std::optional<DType>(static_cast<DType>(dtype));
        QVERIFY(window.runs_menu()->export_weights(id, path, as));
        QCOMPARE(errors.count(), 0);
        QFile written(path);
        QVERIFY(written.open(QIODevice::ReadOnly));
        QVERIFY(written.size() > 100'000); // 118k parameters, at least 2 bytes each
        if (!magic.isEmpty()) QCOMPARE(written.read(magic.size()), magic);
        if (file.endsWith(".safetensors")) {
            const TrainedModel model = load_trained_model(path.toStdString());
            for (const WeightTensor& t : model.weights.tensors) QCOMPARE(t.dtype, DType::Float16);
            QCOMPARE(model.test_accuracy, m_accuracy);
        }
    }

    void exportErrorsGoToTheBanner() {
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        const int id = window.run_store()->runs().front().id;
        QVERIFY(!window.runs_menu()->export_weights(id, m_files->filePath("model.txt")));
        QVERIFY(window.error_banner()->isVisibleTo(&window));
        QVERIFY(window.error_banner()->text().contains("model.txt"));
        QVERIFY(window.error_banner()->text().contains(".onnx"));
        QVERIFY(!QFileInfo::exists(m_files->filePath("model.txt")));
    }

    void dialogOffersTheFormatsDtypes() {
        QCOMPARE(weights_file_filters().size(), qsizetype(3));
        QCOMPARE(weights_format_for_filter(weights_file_filters()[1]), WeightsFormat::Onnx);
        QCOMPARE(weights_format_for_filter(weights_file_filters()[2]), WeightsFormat::Npz);
        // ONNX has no stored dtype of its own: float32 or float16 only.
        QCOMPARE(weights_dtype_choices(WeightsFormat::Onnx).size(), qsizetype(2));
        QCOMPARE(weights_dtype_choices(WeightsFormat::Npz).front().dtype, std::nullopt);
    }

    // The ONNX step of the dialog names the runtimes the file is tested with and shows the Python
    // that runs it in each, line for line as the README has it.
    void onnxNoteShowsTheRuntimesAndTheirCode() {
        QVERIFY(weights_format_note(WeightsFormat::Safetensors).isEmpty());
        QVERIFY(weights_format_note(WeightsFormat::Npz).isEmpty());
        const QString note = weights_format_note(WeightsFormat::Onnx);
        QVERIFY2(note.contains("onnxruntime 1.30") && note.contains("OpenCV 4.6"),
                 qPrintable(note));
        QFile file(QStringLiteral(MANTISSA_SOURCE_DIR "/README.md"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString readme = QString::fromUtf8(file.readAll());
        const QRegularExpression pre(QStringLiteral("<pre>(.*?)</pre>"),
                                     QRegularExpression::DotMatchesEverythingOption);
        QStringList blocks;
        for (const QRegularExpressionMatch& m : pre.globalMatch(note))
            blocks << QTextDocumentFragment::fromHtml(m.captured(0)).toPlainText().trimmed();
        QCOMPARE(blocks.size(), qsizetype(2));
        QVERIFY(blocks[0].contains("onnxruntime") && blocks[1].contains("cv2.dnn"));
        for (const QString& block : blocks) {
            QCOMPARE(block.split('\n').size(), qsizetype(5));
            QVERIFY2(readme.contains("```python\n" + block + "\n```"), qPrintable(block));
        }
    }

    void runWithoutWeightsHasTheActionsDisabled() {
        QVERIFY(!m_weights.isEmpty());
        const QString kept = m_files->filePath("kept.safetensors");
        QVERIFY(QFile::copy(m_weights, kept));
        QVERIFY(QFile::remove(m_weights)); // as a run from before runs kept their weights
        {
            MainWindow window;
            QTRY_VERIFY(!window.run_history()->is_loading());
            const int id = window.run_store()->runs().front().id;
            std::unique_ptr<QMenu> menu(window.runs_menu()->menu_for(id, &window));
            for (const char* name : {"export_weights", "load_weights", "evaluate_weights"}) {
                QAction* action = action_named(menu.get(), name);
                QVERIFY(action);
                QVERIFY(!action->isEnabled());
                QVERIFY(action->toolTip().contains("no weights file"));
            }
        }
        QVERIFY(QFile::copy(kept, m_weights));
    }

    void loadWeightsSetsTheExperiment() {
        QVERIFY(!m_weights.isEmpty());
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        Experiment other = tiny_experiment("something-else", 5);
        other.model.layers[1].units = 64;
        window.set_experiment(other);
        QVERIFY(window.weights_loader()->load(m_weights));
        const Experiment e = window.current_experiment();
        QCOMPARE(QString::fromStdString(e.name), QString("weights-a"));
        QCOMPARE(e.model.layers[1].units, std::int64_t(128));
        QCOMPARE(e.max_steps, std::int64_t(20));
        QVERIFY(window.weights_loader()->has_weights());
        QCOMPARE(window.weights_loader()->source(), m_weights);

        // The next run starts from them, says so, and uses them up.
        QSignalSpy logs(window.controller(), &TrainingController::log_line);
        window.train();
        QVERIFY(!window.weights_loader()->has_weights());
        QTRY_VERIFY_WITH_TIMEOUT(!window.controller()->is_running(), 60000);
        bool said = false;
        for (const QList<QVariant>& args : std::as_const(logs))
            said =
                said || args[0].toString().startsWith("Starting from the weights in " + m_weights);
        QVERIFY(said);
        QCOMPARE(window.run_store()->run(window.controller()->current_run())->state,
                 RunState::Completed);
    }

    void loadingABadFileGoesToTheBanner() {
        const QString bad = m_files->filePath("bad.safetensors");
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("not a safetensors file");
        file.close();
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        window.set_experiment(tiny_experiment("unchanged", 5));
        QVERIFY(!window.weights_loader()->load(bad));
        QVERIFY(window.error_banner()->isVisibleTo(&window));
        QVERIFY(window.error_banner()->text().contains("bad.safetensors"));
        QCOMPARE(QString::fromStdString(window.current_experiment().name), QString("unchanged"));
        QVERIFY(!window.weights_loader()->has_weights());
    }

    void evaluateReproducesTheRunsTestAccuracy() {
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        window.set_experiment(
            tiny_experiment("device-cpu", 5)); // evaluations run on the chosen device
        QSignalSpy finished(window.weights_evaluator(), &WeightsEvaluator::finished);
        window.evaluate_weights(m_weights);
        QVERIFY(window.weights_evaluator()->is_running());
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
        QVERIFY(!window.weights_evaluator()->is_running());
        QCOMPARE(finished[0][0].toString(), m_weights);
        QCOMPARE(finished[0][2].toDouble(), m_accuracy); // same weights, same 10,000 images
        QCOMPARE(finished[0][3].toLongLong(), qint64(10000));
        QVERIFY(!window.error_banner()->isVisibleTo(&window));
        QLabel* status = nullptr;
        for (QLabel* label : window.statusBar()->findChildren<QLabel*>())
            if (label->text().startsWith("Evaluated")) status = label;
        QVERIFY(status);
        QVERIFY(status->text().contains(QString::number(100.0 * m_accuracy, 'f', 2) + "%"));
    }

    void evaluatingABadFileGoesToTheBanner() {
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        window.set_experiment(tiny_experiment("device-cpu", 5));
        QSignalSpy failed(window.weights_evaluator(), &WeightsEvaluator::failed);
        window.evaluate_weights(m_files->filePath("missing.safetensors"));
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, 60000);
        QVERIFY(window.error_banner()->isVisibleTo(&window));
        QVERIFY(window.error_banner()->text().contains("missing.safetensors"));
    }

    void initialWeightsAreTheStartingPoint() {
        // With a learning rate far below float32's resolution the weights cannot move, so the
        // run's saved weights are the loaded ones: proof they replaced the random initialisation.
        const TrainedModel loaded = load_trained_model(m_weights.toStdString());
        QTemporaryDir folder;
        TrainingController controller;
        RunStore store;
        controller.set_metrics_path_provider(
            [&folder](int) { return QDir(folder.path()).filePath("metrics.jsonl"); });
        auto initial = std::make_shared<InitialWeights>();
        initial->weights = loaded.weights;
        initial->source = m_weights;
        controller.set_initial_weights(initial);
        QSignalSpy finished(&controller, &TrainingController::run_finished);
        Experiment e = tiny_experiment("still", 2);
        e.optimizer.learning_rate = 1e-20;
        controller.start(e, store.add_run(e));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
        const TrainedModel after =
            load_trained_model(QDir(folder.path()).filePath("weights.safetensors").toStdString());
        QVERIFY(max_difference(loaded.weights, after.weights) < 1e-6);
        QCOMPARE(finished[0][1].value<RunSummary>().val_accuracy, m_accuracy);
    }

    void mismatchedInitialWeightsFailTheRunNamingTheTensor() {
        TrainingController controller;
        RunStore store;
        auto initial = std::make_shared<InitialWeights>();
        initial->weights = load_trained_model(m_weights.toStdString()).weights;
        initial->source = m_weights;
        controller.set_initial_weights(initial);
        QSignalSpy failed(&controller, &TrainingController::run_failed);
        Experiment e = tiny_experiment("narrower", 2);
        e.model.layers[1].units = 64;
        controller.start(e, store.add_run(e));
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, 60000);
        QVERIFY(failed[0][1].toString().contains("dense_1.kernel"));
    }
};

QTEST_MAIN(TestGuiWeights)
#include "tst_gui_weights.moc"
