// The toolbar's device menu, offscreen: every engine listed with its state, the CPU preselected
// unless a qualified GPU exists, "Check now" checking a GPU off the UI thread, and an experiment
// asking for a device this machine cannot give said so in the banner, never trained elsewhere
// silently. Fake GPUs (a CPU engine behind a GPU's fingerprint) stand in for real ones.
#include <QComboBox>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/factory/backend_factory.h"
#include "core/device/device_selection.h"
#include "ui/training/device_menu.h"
#include "ui/window/error_banner.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

const char* kNoDriver = "CUDA unavailable: CUDA driver version is insufficient for CUDA runtime "
                        "version";

GpuCandidate fake_gpu() {
    GpuFingerprint g;
    g.device_id = "cuda:0";
    g.name = "Fake GPU 80GB";
    g.compute_major = 9;
    g.driver_version = 13000;
    g.runtime_version = 13000;
    g.build = "test";
    return {g, [] { return std::unique_ptr<Backend>(std::make_unique<CpuBackend>()); }};
}

Qualifier fake_check(bool pass) {
    return [pass](Backend&, const QualificationProgressFn& progress) {
        if (progress) progress({"Checking the CUDA engine on Fake GPU 80GB…", 1, 2});
        QualificationRecord r;
        r.cases = 86;
        r.passed = pass;
        r.failures = pass ? 0 : 1;
        if (!pass) r.first_failure = "maxpool bwd 4x6x6x8 float16: max error 1 > 0";
        return r;
    };
}

bool item_enabled(const QComboBox* combo, int row) {
    const auto* model = qobject_cast<const QStandardItemModel*>(combo->model());
    return model && model->item(row)->isEnabled();
}

} // namespace

class TestGuiDeviceMenu : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    DeviceOpenOptions options(bool with_gpu, bool check_passes = true) const {
        DeviceOpenOptions o;
        o.cache_path = (m_dir.path() + "/gpu-qualification.json").toStdString();
        o.gpus = with_gpu ? std::vector<GpuCandidate>{fake_gpu()} : std::vector<GpuCandidate>{};
        o.no_gpu_reason = kNoDriver;
        o.qualifier = fake_check(check_passes);
        return o;
    }

private slots:
    void initTestCase() {
        Q_INIT_RESOURCE(resources);
        qputenv("MANTISSA_RUNS_DIR", (m_dir.path() + "/runs").toUtf8());
        qputenv("XDG_CONFIG_HOME", (m_dir.path() + "/config").toUtf8());
        qputenv("MANTISSA_QUALIFICATION_FILE", (m_dir.path() + "/real-cache.json").toUtf8());
    }
    void init() { QFile::remove(m_dir.path() + "/gpu-qualification.json"); }

    void withoutAGpuTheMenuSaysWhyAndOffersTheCpu() {
        DeviceMenu menu(options(false));
        QCOMPARE(menu.current_id(), QString("cpu"));
        QCOMPARE(menu.combo()->count(), 2);
        QVERIFY(!item_enabled(menu.combo(), 1));
        QVERIFY2(menu.combo()->itemText(1).contains(
                     "CUDA engine built; no usable GPU: driver too old for this CUDA runtime"),
                 qPrintable(menu.combo()->itemText(1)));
        QVERIFY(menu.combo()
                    ->itemData(1, Qt::ToolTipRole)
                    .toString()
                    .contains("driver version is insufficient"));
        QVERIFY(menu.check_button()->isHidden());
        const QString problem = menu.select_for_experiment("cuda");
        QVERIFY2(problem.contains("asks for the device 'cuda'"), qPrintable(problem));
        QVERIFY2(problem.contains("driver version is insufficient"), qPrintable(problem));
        QVERIFY2(problem.contains("CPU engine"), qPrintable(problem));
        QCOMPARE(menu.current_id(), QString("cpu"));
        QVERIFY(menu.select_for_experiment("auto").isEmpty());
        QVERIFY(menu.select_for_experiment("cpu").isEmpty());
    }

    void anUncheckedGpuIsListedButNotPreselected() {
        DeviceMenu menu(options(true));
        QCOMPARE(menu.current_id(), QString("cpu"));
        QVERIFY2(menu.combo()->itemText(1).contains("Fake GPU 80GB — not checked"),
                 qPrintable(menu.combo()->itemText(1)));
        QVERIFY(item_enabled(menu.combo(), 1));
        QVERIFY(menu.check_button()->isHidden()); // the CPU is selected: nothing to check
        QVERIFY(menu.select_for_experiment("auto").isEmpty());
        QCOMPARE(menu.current_id(), QString("cpu")); // auto: the CPU until the GPU is qualified
        QVERIFY(menu.select_for_experiment("cuda").isEmpty()); // named: it may be picked
        QCOMPARE(menu.current_id(), QString("cuda:0"));
        QVERIFY(!menu.check_button()->isHidden());
    }

    void checkNowQualifiesOffTheUiThreadAndAQualifiedGpuBecomesTheDefault() {
        {
            DeviceMenu menu(options(true));
            menu.combo()->setCurrentIndex(1);
            QSignalSpy progress(&menu, &DeviceMenu::check_progress);
            QSignalSpy finished(&menu, &DeviceMenu::check_finished);
            QTest::mouseClick(menu.check_button(), Qt::LeftButton);
            QVERIFY(menu.checking());
            QVERIFY(finished.wait(10000));
            QCOMPARE(finished.first().at(0).toBool(), true);
            QVERIFY2(finished.first().at(1).toString().contains("passed its check on Fake GPU"),
                     qPrintable(finished.first().at(1).toString()));
            QVERIFY(progress.count() >= 1);
            QCOMPARE(menu.current_id(), QString("cuda:0"));
            QVERIFY2(menu.combo()->itemText(1).contains("qualified on"),
                     qPrintable(menu.combo()->itemText(1)));
            QVERIFY(menu.check_button()->isHidden() || menu.check_button()->isEnabled());
        }
        DeviceMenu again(options(true));
        QCOMPARE(again.current_id(), QString("cuda:0")); // qualified: preselected
        QVERIFY(again.select_for_experiment("auto").isEmpty());
        QCOMPARE(again.current_id(), QString("cuda:0"));
    }

    void aFailedCheckIsShownWithItsCase() {
        DeviceMenu menu(options(true, false));
        menu.combo()->setCurrentIndex(1);
        QSignalSpy finished(&menu, &DeviceMenu::check_finished);
        menu.check_now();
        QVERIFY(finished.wait(10000));
        QCOMPARE(finished.first().at(0).toBool(), false);
        QVERIFY2(finished.first().at(1).toString().contains("maxpool bwd 4x6x6x8 float16"),
                 qPrintable(finished.first().at(1).toString()));
        QVERIFY2(menu.combo()->itemText(1).contains("failed its check: maxpool bwd"),
                 qPrintable(menu.combo()->itemText(1)));
        DeviceMenu again(options(true, false));
        QCOMPARE(again.current_id(), QString("cpu"));
    }

    // The real window on this machine: the CPU is chosen unless a qualified GPU exists, the list
    // says what became of the CUDA engine, and an experiment that asks for "cuda" where there is
    // none says so in the banner.
    void theMainWindowIsHonestAboutCuda() {
        if (available_devices().size() > 1) QSKIP("a GPU is present: this checks the no-GPU case");
        MainWindow window;
        auto* menu = window.findChild<DeviceMenu*>();
        QVERIFY(menu);
        QCOMPARE(menu->current_id(), QString("cpu"));
        QCOMPARE(menu->combo()->count(), 2);
        const QString entry = menu->combo()->itemText(1);
        QVERIFY2(entry.contains("no usable GPU") || entry.contains("No CUDA engine"),
                 qPrintable(entry));
        QTemporaryDir dir;
        QFile file(dir.path() + "/wants-cuda.json");
        QVERIFY(file.open(QIODevice::WriteOnly));
        QFile builtin(":/experiments/mlp-small.json");
        QVERIFY(builtin.open(QIODevice::ReadOnly));
        QByteArray json = builtin.readAll();
        QVERIFY(json.contains("\"device\": \"auto\""));
        json.replace("\"device\": \"auto\"", "\"device\": \"cuda\"");
        file.write(json);
        file.close();
        QVERIFY(window.load_experiment_file(file.fileName()));
        QVERIFY(!window.error_banner()->isHidden());
        QVERIFY2(window.error_banner()->text().contains("asks for the device 'cuda'"),
                 qPrintable(window.error_banner()->text()));
        QCOMPARE(QString::fromStdString(window.current_experiment().device), QString("cpu"));
    }
};

QTEST_MAIN(TestGuiDeviceMenu)
#include "tst_gui_device_menu.moc"
