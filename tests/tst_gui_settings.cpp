// Settings, controls and stale state: the experiment's name and the run-length and divergence
// settings in the form, the policy's description, the Compare dialog's run length, undo/redo of
// stack edits, the Help menu; a divergence banner that gives this run's advice once; no banner,
// clamped spin box, scroll position, chart fragment or repeated run colour left over.
#include <QAction>
#include <QChartView>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <set>

#include "core/numeric/policy.h"
#include "core/train/experiment.h"
#include "tests/isolated_app_dirs.h"
#include "ui/charts/charts_panel.h"
#include "ui/editor/experiment_form.h"
#include "ui/editor/layer_stack_editor.h"
#include "ui/editor/policy_picker.h"
#include "ui/lessons/lessons_panel.h"
#include "ui/runs/run_store.h"
#include "ui/window/error_banner.h"
#include "ui/window/help_menu.h"
#include "ui/window/main_window.h"
#include "ui/window/theme.h"
#include "ui/window/window_geometry.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

Experiment mlp_small() {
    return load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");
}

ModelSpec dense_model(std::int64_t units) {
    ModelSpec model = mlp_small().model;
    model.layers[1].units = units; // Flatten, Dense(units), Dense(128), Dense(10), softmax
    return model;
}

QTableWidget* table_of(LayerStackEditor& editor) {
    return editor.findChild<QTableWidget*>("layer_table");
}

// The units field of the layer stack's row `row`.
QWidget* units_field(LayerStackEditor& editor, int row) {
    QWidget* cell = table_of(editor)->cellWidget(row, 2);
    return cell ? cell->findChild<QWidget*>("units") : nullptr;
}

} // namespace

class TestGuiSettings : public QObject {
    Q_OBJECT

    IsolatedAppDirs m_dirs;

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); }

    // --- 8: missing controls ---

    void nameAndRunLengthAreEditable() {
        ExperimentForm form;
        Experiment e = mlp_small();
        form.set_experiment(e);
        auto* name = form.findChild<QLineEdit*>("experiment_name");
        auto* max_steps = form.findChild<QSpinBox*>("max_steps");
        auto* histogram = form.findChild<QSpinBox*>("histogram_every");
        auto* divergence = form.findChild<QComboBox*>("on_divergence");
        QVERIFY(name && max_steps && histogram && divergence);
        QCOMPARE(name->text(), QString("mlp-small"));
        QCOMPARE(max_steps->value(), 0);
        QCOMPARE(max_steps->text(), QString("no limit"));
        QCOMPARE(histogram->value(), 50);

        name->clear();
        QTest::keyClicks(name, "fast net");
        max_steps->setValue(300);
        histogram->setValue(0);
        divergence->setCurrentIndex(
            divergence->findData(static_cast<int>(DivergencePolicy::Continue)));
        const Experiment out = form.apply_to(e);
        QCOMPARE(out.name, std::string("fast net"));
        QCOMPARE(out.max_steps, std::int64_t(300));
        QCOMPARE(out.histogram_every, std::int64_t(0));
        QCOMPARE(out.on_divergence, DivergencePolicy::Continue);
        validate_experiment(out); // throws on a bad field

        // The name flows into the run's name: "<name> · <policy>".
        RunStore store;
        const int id = store.add_run(out);
        QCOMPARE(store.run(id)->name, QString("fast net · float32"));
    }

    void policyComboDescribesEachPolicy() {
        ExperimentForm form;
        auto* combo = form.findChild<QComboBox*>("policy");
        auto* note = form.findChild<QLabel*>("policy_description");
        QVERIFY(combo && note);
        for (int i = 0; i < combo->count(); ++i) {
            const Policy p = policy_from_name(combo->itemData(i).toString().toStdString());
            const QString description = QString::fromStdString(policy_description(p));
            QCOMPARE(combo->itemData(i, Qt::ToolTipRole).toString(), description);
            combo->setCurrentIndex(i);
            QCOMPARE(note->text(), description); // the CLI's `policies` text, shown
        }
    }

    // Issue 28: on a 1366x768 projector the dialog was 803 px tall, its buttons off the screen.
    // Whatever the screen, the dialog is bounded by it and its button row is inside.
    void compareDialogFitsTheScreen() {
        ComparePoliciesDialog dialog(3, 0);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        const QSize room = screen_room(&dialog);
        // It uses the room it has: the list is not squeezed into a few rows.
        QVERIFY(dialog.height() >= std::min(room.height(), 500));
        QVERIFY2(dialog.height() <= room.height() && dialog.width() <= room.width(),
                 qPrintable(QString("%1x%2 on %3x%4")
                                .arg(dialog.width())
                                .arg(dialog.height())
                                .arg(room.width())
                                .arg(room.height())));
        auto* buttons = dialog.findChild<QDialogButtonBox*>();
        QVERIFY(buttons);
        QVERIFY(
            dialog.rect().contains(QRect(buttons->mapTo(&dialog, QPoint(0, 0)), buttons->size())));
        // For the docs: MANTISSA_SCREENSHOT_DIR=docs with QT_QPA_PLATFORM=xcb on a 1366x768
        // display saves the dialog as it opens there.
        if (const QByteArray dir = qgetenv("MANTISSA_SCREENSHOT_DIR"); !dir.isEmpty())
            QVERIFY(dialog.grab().save(QString::fromLocal8Bit(dir) + "/compare-policies.png"));
        // The list scrolls rather than pushing the buttons down (under Xvfb at 1366x768 the
        // dialog is 728 px tall at most, the screenshot in docs/ shows it).
        QVERIFY(dialog.findChild<QScrollArea*>("compare_policies"));
    }

    void compareDialogSetsTheRunLength() {
        ComparePoliciesDialog dialog(3, 0);
        auto* epochs = dialog.findChild<QSpinBox*>("compare_epochs");
        auto* steps = dialog.findChild<QSpinBox*>("compare_max_steps");
        QVERIFY(epochs && steps);
        QCOMPARE(epochs->value(), 3);
        QCOMPARE(steps->value(), 0);
        epochs->setValue(1);
        steps->setValue(200);
        const CompareChoice choice = dialog.choice();
        QCOMPARE(choice.epochs, 1);
        QCOMPARE(choice.max_steps, qint64(200));
        QCOMPARE(choice.policies, QStringList({"float32", "mixed_float16", "mixed_bfloat16"}));
    }

    void stackEditsUndoAndRedo() {
        LayerStackEditor editor;
        const ModelSpec original = mlp_small().model;
        editor.set_model(original);
        QVERIFY(!editor.undo_stack()->canUndo()); // a loaded model has no history
        auto* undo = editor.findChild<QPushButton*>("undo");
        auto* redo = editor.findChild<QPushButton*>("redo");
        QVERIFY(undo && redo);
        QVERIFY(!undo->isEnabled());

        table_of(editor)->selectRow(1);
        QTest::mouseClick(editor.findChild<QPushButton*>("remove_layer"), Qt::LeftButton);
        QCOMPARE(editor.model().layers.size(), original.layers.size() - 1);
        QVERIFY(undo->isEnabled());
        QTest::mouseClick(undo, Qt::LeftButton);
        QCOMPARE(editor.model(), original);
        QVERIFY(redo->isEnabled());
        QTest::mouseClick(redo, Qt::LeftButton);
        QCOMPARE(editor.model().layers.size(), original.layers.size() - 1);
        editor.undo_stack()->undo();

        // A spin box's steps undo as one edit.
        auto* units = qobject_cast<QSpinBox*>(units_field(editor, 1));
        QVERIFY(units);
        units->setValue(129);
        units = qobject_cast<QSpinBox*>(units_field(editor, 1));
        units->setValue(130);
        QCOMPARE(editor.model().layers[1].units, std::int64_t(130));
        editor.undo_stack()->undo();
        QCOMPARE(editor.model(), original);

        // Ctrl+Z / Ctrl+Shift+Z.
        QStringList keys;
        for (const QAction* a : editor.actions())
            for (const QKeySequence& k : a->shortcuts()) keys << k.toString();
        QVERIFY2(keys.contains("Ctrl+Z") && keys.contains("Ctrl+Shift+Z"),
                 qPrintable(keys.join(", ")));
    }

    void helpMenu() {
        MainWindow window;
        QMenu* help = window.menuBar()->findChild<QMenu*>("help_menu");
        QVERIFY(help);
        QStringList texts;
        for (const QAction* a : help->actions()) texts << a->text();
        QVERIFY2(texts.contains("&About Mantissa") && texts.contains("&Keyboard Shortcuts") &&
                     texts.contains("What Has Run on a &GPU") && texts.contains("&Lessons"),
                 qPrintable(texts.join(", ")));
        auto* lessons = help->findChild<QMenu*>("help_lessons");
        QVERIFY(lessons);
        QCOMPARE(lessons->actions().size(), window.lessons_panel()->lesson_count());
        lessons->actions().at(3)->trigger();
        QCOMPARE(window.lessons_panel()->current_lesson()->id,
                 window.lessons_panel()->lessons()[3].id);

        const QStringList shortcuts = keyboard_shortcuts(&window);
        const QString all = shortcuts.join('\n');
        QVERIFY2(all.contains("Ctrl+O\tOpen") && all.contains("Ctrl+R\tTrain") &&
                     all.contains("Ctrl+Z / Ctrl+Shift+Z"),
                 qPrintable(all));
        QVERIFY(!all.contains("http"));
        // What ran on a GPU, on what and when, and what has not run (README's GPU section).
        const QString history = gpu_history_text();
        QVERIFY(history.contains("H100") && history.contains("2026") &&
                history.contains("passed its whole check") && history.contains("Not yet run"));
    }

    // --- 6: the divergence banner ---

    void divergenceBannerAdvisesOnce() {
        MainWindow window;
        // Lesson 1's first run: mixed_float16, loss scale fixed at 2^24, diverges at step 2.
        Experiment e = window.lessons_panel()->lessons()[0].experiments[0].experiment;
        e.device = "cpu";
        e.histogram_every = 0;
        window.set_experiment(e);
        window.train();
        QTRY_VERIFY_WITH_TIMEOUT(!window.error_banner()->isHidden(), 60000);
        const QString text = window.error_banner()->text();
        QCOMPARE(text.count("learning rate"), 1);
        QCOMPARE(text.count("Try "), 1);
        QVERIFY2(text.contains("fixed loss scale of 16777216") &&
                     text.contains("Try dynamic loss scaling"),
                 qPrintable(text));
        QVERIFY2(!text.contains("mixed policy"), qPrintable(text)); // it is one already
        QTRY_VERIFY_WITH_TIMEOUT(window.train_action()->isEnabled(), 30000);
    }

    // --- 9: stale state ---

    void bannerClearedByTheNextOpen() {
        QTemporaryDir dir;
        const QString bad = dir.filePath("bad.json");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{ not json");
        f.close();
        MainWindow window;
        QVERIFY(!window.load_experiment_file(bad));
        QVERIFY(!window.error_banner()->isHidden());
        QVERIFY(window.load_experiment_file(":/experiments/mlp-small.json"));
        QVERIFY(window.error_banner()->isHidden());
    }

    void unitsShowTheModelsNumber() {
        LayerStackEditor editor;
        editor.set_memory_limit(qint64(1) << 30); // 1 GiB, whatever this machine has
        editor.set_model(dense_model(50'000'000));
        auto* units = qobject_cast<QSpinBox*>(units_field(editor, 1));
        QVERIFY(units);
        QCOMPARE(units->value(), 50'000'000); // not a clamped 65,536
        QCOMPARE(editor.model().layers[1].units, std::int64_t(50'000'000));
        // 39 billion float32 weights do not fit in 1 GiB: the stack does not say "fits" (Train
        // stays enabled: the run reports the out-of-memory error itself).
        QLabel* message = editor.findChild<QLabel*>("stack_message");
        QVERIFY2(!message->text().contains("fits") && message->text().contains("GiB"),
                 qPrintable(message->text()));
        editor.set_model(dense_model(128));
        QVERIFY2(message->text().contains("fits"), qPrintable(message->text()));

        // Beyond a spin box's range: the real number, as text.
        editor.set_model(dense_model(5'000'000'000));
        auto* shown = qobject_cast<QLabel*>(units_field(editor, 1));
        QVERIFY(shown);
        QCOMPARE(shown->text(), QString("5,000,000,000"));
        QCOMPARE(editor.model().layers[1].units, std::int64_t(5'000'000'000));
    }

    void openingAModelScrollsTheTableHome() {
        LayerStackEditor editor;
        editor.resize(260, 500);
        editor.show();
        editor.set_model(mlp_small().model);
        QScrollBar* bar = table_of(editor)->horizontalScrollBar();
        QTRY_VERIFY(bar->maximum() > 0);
        bar->setValue(bar->maximum());
        editor.set_model(dense_model(64));
        QCOMPARE(bar->value(), 0); // the # and Type columns are in view
    }

    void chartsRepaintWholeAfterRemovingALine() {
        MainWindow window;
        const QList<QChartView*> views = window.charts()->findChildren<QChartView*>();
        QVERIFY(!views.isEmpty());
        for (const QChartView* view : views)
            QCOMPARE(view->viewportUpdateMode(), QGraphicsView::FullViewportUpdate);
    }

    void runColoursDoNotRepeat() {
        for (bool dark : {false, true}) {
            std::set<QRgb> seen;
            for (int i = 0; i < 40; ++i) seen.insert(run_color(i, dark).rgb());
            QCOMPARE(seen.size(), std::size_t(40));
        }
        RunStore store;
        std::set<QRgb> colours;
        for (int i = 0; i < 12; ++i)
            colours.insert(store.run(store.add_run(mlp_small()))->color.rgb());
        QCOMPARE(colours.size(), std::size_t(12));
    }
};

QTEST_MAIN(TestGuiSettings)
#include "tst_gui_settings.moc"
