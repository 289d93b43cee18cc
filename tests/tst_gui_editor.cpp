// GUI tests for the layer-stack editor and the experiment form: simulated clicks and keys,
// live shapes, inline errors, dtype combos, lint, and the form's round trip.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDrag>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMouseEvent>
#include <QProcess>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QtTest>

#include "core/train/experiment.h"
#include "ui/editor/experiment_form.h"
#include "ui/editor/layer_fields_widget.h"
#include "ui/editor/layer_stack_editor.h"

using namespace mantissa;
using mantissa::ui::ExperimentForm;
using mantissa::ui::LayerStackEditor;

namespace {
constexpr int kShapeColumn = 4;

LayerSpec layer(LayerType type, std::int64_t units = 0) {
    LayerSpec spec;
    spec.type = type;
    spec.units = units;
    return spec;
}

QTableWidget* table_of(LayerStackEditor& editor) {
    return editor.findChild<QTableWidget*>("layer_table");
}
void click_add(LayerStackEditor& editor, const char* type) {
    auto* button = editor.findChild<QToolButton*>(QStringLiteral("add_") + type);
    QVERIFY2(button, type);
    QTest::mouseClick(button, Qt::LeftButton);
}
QString shape_at(LayerStackEditor& editor, int row) {
    return table_of(editor)->item(row, kShapeColumn)->text();
}
bool marked(LayerStackEditor& editor, int row) {
    return table_of(editor)->item(row, 0)->data(Qt::UserRole).toBool();
}
// The stack's Dense sizes top to bottom: which layer sits where after a reorder.
QList<qint64> units_order(const LayerStackEditor& editor) {
    QList<qint64> units;
    for (const LayerSpec& spec : editor.model().layers) units.append(spec.units);
    return units;
}
// Drags `from` (a row) onto row `onto`, near its top or bottom edge, with the mouse events a user
// makes: Qt's own drag (QDrag::exec's nested loop) carries the row and delivers the drop. Needs a
// platform whose QDrag is Qt's (minimal); a guard cancels a drag that never ends.
void drag_row(QTableWidget* table, int from, int onto, bool lower_edge) {
    QWidget* viewport = table->viewport();
    auto send = [viewport](QEvent::Type type, QPoint at, Qt::MouseButtons buttons) {
        QMouseEvent event(type, at, viewport->mapToGlobal(at),
                          type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton, buttons,
                          Qt::NoModifier);
        QApplication::sendEvent(viewport, &event);
    };
    const QPoint start = table->visualRect(table->model()->index(from, 1)).center();
    const QRect target_rect = table->visualRect(table->model()->index(onto, 1));
    const QPoint target(target_rect.center().x(),
                        lower_edge ? target_rect.bottom() - 1 : target_rect.top() + 1);
    // Runs inside the drag's nested loop: two moves (enter, then move: the view picks above or
    // below on a move), then the release that drops.
    QTimer::singleShot(0, table, [send, target] {
        send(QEvent::MouseMove, target - QPoint(4, 0), Qt::LeftButton);
        send(QEvent::MouseMove, target, Qt::LeftButton);
        send(QEvent::MouseButtonRelease, target, Qt::NoButton);
    });
    QTimer guard;
    guard.setSingleShot(true);
    QObject::connect(&guard, &QTimer::timeout, [] { QDrag::cancel(); });
    guard.start(10'000);
    send(QEvent::MouseButtonPress, start, Qt::LeftButton);
    send(QEvent::MouseMove, start + QPoint(2, 0), Qt::LeftButton); // arms the drag
    // Past the start-drag distance: QDrag::exec runs here until the release above drops.
    send(QEvent::MouseMove, start + QPoint(QApplication::startDragDistance() + 20, 0),
         Qt::LeftButton);
    QVERIFY2(guard.isActive(), "the drag never ended: cancelled after 10 s");
}
} // namespace

class TestGuiEditor : public QObject {
    Q_OBJECT

private slots:
    void builds_stack_with_clicks() {
        LayerStackEditor editor;
        editor.set_model(ModelSpec{});
        QSignalSpy spy(&editor, &LayerStackEditor::model_changed);
        click_add(editor, "Flatten");
        click_add(editor, "Dense");
        QCOMPARE(spy.count(), 2);
        QCOMPARE(table_of(editor)->rowCount(), 2);
        QCOMPARE(shape_at(editor, 0), QStringLiteral("(784,)"));
        QCOMPARE(shape_at(editor, 1), QStringLiteral("(128,)"));
        QCOMPARE(table_of(editor)->item(1, 5)->text(), QStringLiteral("100,480"));
        // Not yet 10 classes: invalid, marked at the last layer.
        QVERIFY(!editor.validation_error().isEmpty());
        QVERIFY(marked(editor, 1));
        click_add(editor, "Dense"); // after the selected (new) Dense
        auto* units = table_of(editor)->cellWidget(2, 2)->findChild<QSpinBox*>("units");
        QVERIFY(units);
        units->setValue(10);
        QCOMPARE(shape_at(editor, 2), QStringLiteral("(10,)"));
        QVERIFY2(editor.validation_error().isEmpty(), qPrintable(editor.validation_error()));
        QVERIFY(!marked(editor, 1));
        QCOMPARE(editor.model().layers.size(), std::size_t(3));
        QCOMPARE(editor.model().layers[2].units, std::int64_t(10));
        // Remove with the Delete key.
        table_of(editor)->selectRow(0);
        QTest::keyClick(table_of(editor), Qt::Key_Delete);
        QCOMPARE(editor.model().layers.size(), std::size_t(2));
        QCOMPARE(editor.model().layers[0].type, LayerType::Dense);
    }

    void invalid_stack_is_explained_at_the_layer() {
        LayerStackEditor editor;
        ModelSpec spec;
        spec.layers = {layer(LayerType::Dense, 10)};
        editor.set_model(spec);
        QVERIFY(editor.validation_error().contains("dense_1"));
        QVERIFY(editor.validation_error().contains("Flatten"));
        QVERIFY(marked(editor, 0));
        QVERIFY(table_of(editor)->item(0, kShapeColumn)->toolTip().contains("Flatten"));
        QVERIFY(editor.findChild<QLabel*>("stack_message")->text().contains("dense_1"));

        // Conv2D after Flatten, added by clicking with Flatten selected.
        editor.set_model(ModelSpec{});
        click_add(editor, "Flatten");
        click_add(editor, "Conv2D");
        QCOMPARE(editor.model().layers[1].type, LayerType::Conv2D);
        QVERIFY(editor.validation_error().contains("conv2d_1"));
        QVERIFY(marked(editor, 1));
        QVERIFY(!marked(editor, 0));
    }

    void keyboard_reorders() {
        LayerStackEditor editor;
        ModelSpec spec;
        spec.layers = {layer(LayerType::Dense, 10), layer(LayerType::Flatten)};
        editor.set_model(spec);
        QVERIFY(!editor.validation_error().isEmpty());
        table_of(editor)->selectRow(1);
        QTest::keyClick(table_of(editor), Qt::Key_Up, Qt::ControlModifier);
        QCOMPARE(editor.model().layers[0].type, LayerType::Flatten);
        QCOMPARE(editor.model().layers[1].type, LayerType::Dense);
        QVERIFY(editor.validation_error().isEmpty());
        // The moved layer stays selected: Ctrl+Up again does nothing, Ctrl+Down moves it back.
        QCOMPARE(table_of(editor)->currentRow(), 0);
        QTest::keyClick(table_of(editor), Qt::Key_Up, Qt::ControlModifier);
        QCOMPARE(editor.model().layers[0].type, LayerType::Flatten);
        QTest::keyClick(table_of(editor), Qt::Key_Down, Qt::ControlModifier);
        QCOMPARE(editor.model().layers[0].type, LayerType::Dense);
        QCOMPARE(editor.model().layers[1].type, LayerType::Flatten);
    }

    void drop_lands_between_rows_data() {
        QTest::addColumn<int>("from");
        QTest::addColumn<int>("hovered");
        QTest::addColumn<bool>("below");
        QTest::addColumn<int>("to");
        // Four rows. Dropping into either gap next to the dragged row leaves the stack alone.
        QTest::newRow("up, above a row") << 2 << 0 << false << 0;
        QTest::newRow("up, below a row") << 2 << 0 << true << 1;
        QTest::newRow("down, above a row") << 0 << 3 << false << 2;
        QTest::newRow("down, below the last row") << 0 << 3 << true << 3;
        QTest::newRow("down, empty space below the rows") << 1 << -1 << false << 3;
        QTest::newRow("onto itself") << 1 << 1 << false << -1;
        QTest::newRow("below itself") << 1 << 1 << true << -1;
        QTest::newRow("above the next row") << 1 << 2 << false << -1;
        QTest::newRow("below the previous row") << 1 << 0 << true << -1;
        QTest::newRow("no current row") << -1 << 2 << false << -1;
    }
    void drop_lands_between_rows() {
        QFETCH(int, from);
        QFETCH(int, hovered);
        QFETCH(bool, below);
        QFETCH(int, to);
        QCOMPARE(ui::drag_destination(from, hovered, below, 4), to);
    }

    // A real drag: mouse press and moves on a row start QDrag::exec, its nested loop delivers the
    // drop to the table, and the layer moves. The offscreen platform's QDrag::exec returns at
    // once without a drop, so there the test runs itself again on the minimal platform, whose
    // drag is Qt's own, in a child process that is killed if it does not finish in a minute.
    void dragging_a_row_reorders_the_stack() {
        if (QGuiApplication::platformName() != QLatin1String("minimal")) {
            QProcess child;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("minimal:enable_fonts"));
            child.setProcessEnvironment(env);
            child.setProcessChannelMode(QProcess::MergedChannels);
            child.start(QCoreApplication::applicationFilePath(),
                        {QStringLiteral("dragging_a_row_reorders_the_stack")});
            QVERIFY(child.waitForStarted(10'000));
            const bool finished = child.waitForFinished(60'000);
            if (!finished) {
                child.kill();
                child.waitForFinished(5'000);
            }
            const QByteArray output = child.readAll();
            QVERIFY2(finished, ("the drag test hung and was killed:\n" + output).constData());
            QVERIFY2(child.exitStatus() == QProcess::NormalExit && child.exitCode() == 0,
                     output.constData());
            QVERIFY2(output.contains("PASS   : TestGuiEditor::dragging_a_row_reorders_the_stack()"),
                     output.constData());
            return;
        }
        LayerStackEditor editor;
        ModelSpec spec;
        for (qint64 units : {11, 22, 33, 44}) spec.layers.push_back(layer(LayerType::Dense, units));
        editor.set_model(spec);
        editor.resize(900, 500);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        QTableWidget* table = table_of(editor);
        QSignalSpy changed(&editor, &LayerStackEditor::model_changed);

        drag_row(table, 3, 0, false); // the last layer, dropped above the first
        QTRY_COMPARE_WITH_TIMEOUT(units_order(editor), (QList<qint64>{44, 11, 22, 33}), 5'000);
        QCOMPARE(table->currentRow(), 0); // the moved layer stays selected
        QCOMPARE(changed.count(), 1);

        drag_row(table, 0, 2, true); // the first layer, dropped below the third
        QTRY_COMPARE_WITH_TIMEOUT(units_order(editor), (QList<qint64>{11, 22, 44, 33}), 5'000);
        QCOMPARE(table->currentRow(), 2);

        drag_row(table, 2, 1, true); // into the gap it came from: nothing moves
        QTest::qWait(50);
        QCOMPARE(units_order(editor), (QList<qint64>{11, 22, 44, 33}));
        QCOMPARE(changed.count(), 2);
    }

    // Square sizes get one spin box that sets both sides; a non-square kernel from a file keeps
    // its height and width (two spin boxes) instead of being squared by the editor.
    void conv_sizes_keep_height_and_width() {
        LayerSpec conv = layer(LayerType::Conv2D);
        conv.filters = 8;
        mantissa::ui::LayerFieldsWidget square(conv);
        QVERIFY(!square.findChild<QSpinBox*>("kernel_w"));
        QCOMPARE(square.findChild<QSpinBox*>("stride")->value(), 1); // default stride shown as 1
        square.findChild<QSpinBox*>("kernel")->setValue(5);
        QCOMPARE(square.spec().kernel[0], 5);
        QCOMPARE(square.spec().kernel[1], 5);
        QCOMPARE(square.spec().stride[0], 0); // untouched: still "the default"

        conv.kernel[0] = 3;
        conv.kernel[1] = 5;
        mantissa::ui::LayerFieldsWidget wide(conv);
        auto* height = wide.findChild<QSpinBox*>("kernel");
        auto* width = wide.findChild<QSpinBox*>("kernel_w");
        QVERIFY(height && width);
        QCOMPARE(height->value(), 3);
        QCOMPARE(width->value(), 5);
        width->setValue(7);
        QCOMPARE(wide.spec().kernel[0], 3);
        QCOMPARE(wide.spec().kernel[1], 7);

        LayerSpec pool = layer(LayerType::MaxPool2D);
        mantissa::ui::LayerFieldsWidget pooling(pool);
        QCOMPARE(pooling.findChild<QSpinBox*>("stride")->text(), QStringLiteral("auto"));
    }

    // BatchNormalization and LayerNormalization from the palette: Keras's defaults in the
    // fields, momentum and epsilon edited through them land in the LayerSpec, and nothing else
    // of the layer changes.
    void normalization_layers_from_the_palette() {
        LayerStackEditor editor;
        editor.set_model(ModelSpec{});
        QSignalSpy spy(&editor, &LayerStackEditor::model_changed);
        click_add(editor, "Flatten");
        click_add(editor, "BatchNormalization");
        click_add(editor, "LayerNormalization");
        QCOMPARE(spy.count(), 3);
        auto* add_batch = editor.findChild<QToolButton*>("add_BatchNormalization");
        auto* add_layer = editor.findChild<QToolButton*>("add_LayerNormalization");
        QCOMPARE(add_batch->text(), QStringLiteral("+ BatchNorm")); // short: the grid stays narrow
        QCOMPARE(add_layer->text(), QStringLiteral("+ LayerNorm"));
        QVERIFY(add_batch->toolTip().contains("float32"));
        QVERIFY(add_layer->toolTip().contains("float32"));
        QCOMPARE(editor.model().layers.size(), std::size_t(3));
        LayerSpec batch_norm;
        batch_norm.type = LayerType::BatchNormalization;
        QVERIFY(editor.model().layers[1] == batch_norm);
        QCOMPARE(editor.model().layers[1].momentum, 0.99);
        QCOMPARE(editor.model().layers[1].epsilon, 1e-3);
        LayerSpec layer_norm;
        layer_norm.type = LayerType::LayerNormalization;
        QVERIFY(editor.model().layers[2] == layer_norm);
        // The type column says "BatchNorm" and elides Keras's long default name rather than
        // widening the table (its tooltip has the name whole).
        QTableWidgetItem* type = table_of(editor)->item(1, 1);
        QVERIFY(type->text().startsWith(QStringLiteral("BatchNorm\nbatch_normalization_1")));
        QVERIFY(type->toolTip().startsWith(QStringLiteral("batch_normalization_1: ")));
        const int cap = table_of(editor)->fontMetrics().horizontalAdvance("max_pool2d_10") + 16;
        QVERIFY(table_of(editor)->columnWidth(1) <= cap);

        QWidget* batch_fields = table_of(editor)->cellWidget(1, 2);
        auto* momentum = batch_fields->findChild<QDoubleSpinBox*>("momentum");
        auto* batch_epsilon = batch_fields->findChild<QDoubleSpinBox*>("epsilon");
        QVERIFY(momentum && batch_epsilon);
        QCOMPARE(momentum->value(), 0.99);
        QCOMPARE(momentum->minimum(), 0.0);
        QCOMPARE(momentum->maximum(), 0.999);
        QCOMPARE(momentum->text(), QStringLiteral("0.990"));
        QCOMPARE(batch_epsilon->text(), QStringLiteral("0.001"));
        QVERIFY(momentum->toolTip().contains("0.99"));
        QVERIFY(batch_epsilon->toolTip().contains("variance"));
        QWidget* layer_fields = table_of(editor)->cellWidget(2, 2);
        QVERIFY(!layer_fields->findChild<QDoubleSpinBox*>("momentum")); // no moving statistics
        auto* layer_epsilon = layer_fields->findChild<QDoubleSpinBox*>("epsilon");
        QVERIFY(layer_epsilon);
        QCOMPARE(layer_epsilon->text(), QStringLiteral("0.001"));

        momentum->setValue(0.9);
        // PyTorch's epsilon, typed as PyTorch writes it.
        batch_epsilon->selectAll();
        QTest::keyClicks(batch_epsilon, "1e-5");
        QTest::keyClick(batch_epsilon, Qt::Key_Return);
        QCOMPARE(batch_epsilon->text(), QStringLiteral("1e-5"));
        batch_norm.momentum = 0.9;
        batch_norm.epsilon = 1e-5;
        QVERIFY(editor.model().layers[1] == batch_norm);
        // The arrows step by factors of ten.
        layer_epsilon->stepDown();
        QCOMPARE(layer_epsilon->text(), QStringLiteral("0.0001"));
        layer_epsilon->stepBy(-2);
        QCOMPARE(layer_epsilon->text(), QStringLiteral("1e-6"));
        layer_norm.epsilon = 1e-6;
        QVERIFY(editor.model().layers[2] == layer_norm);
        QVERIFY(editor.model().layers[1] == batch_norm); // the other layer kept its edit
        QVERIFY(spy.count() > 3);

        // A file's values are shown as they are, not rounded or clamped to the usual range.
        LayerSpec inception = batch_norm;
        inception.momentum = 0.9997;
        inception.epsilon = 1e-12;
        mantissa::ui::LayerFieldsWidget file_fields(inception);
        QCOMPARE(file_fields.findChild<QDoubleSpinBox*>("momentum")->value(), 0.9997);
        QCOMPARE(file_fields.findChild<QDoubleSpinBox*>("epsilon")->text(),
                 QStringLiteral("1e-12"));
        QVERIFY(file_fields.spec() == inception);
    }

    // With the Lessons panel open on a 1366-px screen the editor is about 400 px wide, and the
    // row of Remove … Redo was squeezed until "Move down" was cut: below the words' width the
    // buttons show their icons (their tooltips say what each does), inside the editor.
    void button_row_fits_a_narrow_editor() {
        LayerStackEditor editor;
        ModelSpec spec;
        spec.layers = {layer(LayerType::Flatten), layer(LayerType::Dense, 10)};
        editor.set_model(spec);
        const QStringList names{"remove_layer", "move_up", "move_down", "undo", "redo"};
        for (int width : {900, 400}) {
            editor.resize(width, 600);
            editor.show();
            QVERIFY(QTest::qWaitForWindowExposed(&editor));
            QApplication::processEvents();
            QCOMPARE(editor.width(), width);
            for (const QString& name : names) {
                auto* button = editor.findChild<QPushButton*>(name);
                QVERIFY2(button, qPrintable(name));
                QCOMPARE(button->text().isEmpty(), width < 600);
                QVERIFY(!button->toolTip().isEmpty());
                QVERIFY2(button->width() >= button->sizeHint().width(), qPrintable(name));
                const QRect shown(button->mapTo(&editor, QPoint(0, 0)), button->size());
                QVERIFY2(editor.rect().contains(shown),
                         qPrintable(QString("%1 at x %2..%3 in an editor %4 wide")
                                        .arg(name)
                                        .arg(shown.left())
                                        .arg(shown.right())
                                        .arg(editor.width())));
            }
        }
    }

    void buttons_move_and_remove() {
        LayerStackEditor editor;
        ModelSpec spec;
        spec.layers = {layer(LayerType::Dense, 10), layer(LayerType::Flatten)};
        editor.set_model(spec);
        auto* up = editor.findChild<QPushButton*>("move_up");
        auto* remove = editor.findChild<QPushButton*>("remove_layer");
        table_of(editor)->selectRow(1);
        QVERIFY(up->isEnabled());
        QTest::mouseClick(up, Qt::LeftButton);
        QCOMPARE(editor.model().layers[0].type, LayerType::Flatten);
        QVERIFY(!up->isEnabled()); // the moved layer is selected and now first
        QTest::mouseClick(remove, Qt::LeftButton);
        QCOMPARE(editor.model().layers.size(), std::size_t(1));
        QCOMPARE(editor.model().layers[0].type, LayerType::Dense);
    }

    void dtype_combo_sets_layer_dtype() {
        LayerStackEditor editor;
        editor.set_model(
            load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/cnn.json").model);
        auto* combo = qobject_cast<QComboBox*>(table_of(editor)->cellWidget(5, 3));
        QVERIFY(combo);
        QVERIFY(!combo->itemData(combo->findData("mixed_float16"), Qt::ToolTipRole)
                     .toString()
                     .isEmpty());
        combo->setCurrentIndex(combo->findData("float32"));
        QCOMPARE(editor.model().layers[5].dtype, std::optional<std::string>("float32"));
        combo->setCurrentIndex(combo->findData("global"));
        QVERIFY(!editor.model().layers[5].dtype.has_value());
        // The softmax row came from the file with float32.
        auto* last = qobject_cast<QComboBox*>(table_of(editor)->cellWidget(7, 3));
        QCOMPARE(last->currentData().toString(), QStringLiteral("float32"));
    }

    void lint_names_the_layer() {
        LayerStackEditor editor;
        ModelSpec spec;
        spec.layers = {layer(LayerType::Flatten), layer(LayerType::Dense, 100),
                       layer(LayerType::Dense, 10)};
        editor.set_model(spec);
        auto* lint = editor.findChild<QListWidget*>("lint");
        auto lint_text = [lint] {
            QStringList lines;
            for (int i = 0; i < lint->count(); ++i) lines << lint->item(i)->text();
            return lines.join('\n');
        };
        QVERIFY(!lint_text().contains("multiple of 8"));
        editor.set_context("mixed_float16", LossScaleConfig{});
        QVERIFY2(lint_text().contains("dense_1: 100 units is not a multiple of 8"),
                 qPrintable(lint_text()));
        QVERIFY(!lint_text().contains("dense_2: 10 units"));
    }

    void form_round_trips_an_experiment() {
        Experiment e = load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/cnn.json");
        e.optimizer = optimizer_defaults(OptimizerType::SGD);
        e.optimizer.learning_rate = 0.05;
        e.optimizer.momentum = 0.9;
        e.optimizer.nesterov = true;
        e.loss_scale = pytorch_loss_scale();
        e.loss_scale.mode = LossScaleMode::Fixed;
        e.loss_scale.initial = 1024;
        e.batch_size = 256;
        e.epochs = 7;
        e.seed = 123456789012345ULL;
        ExperimentForm form;
        QSignalSpy spy(&form, &ExperimentForm::changed);
        form.set_experiment(e);
        QCOMPARE(spy.count(), 0);
        const Experiment out = form.apply_to(Experiment{});
        QCOMPARE(out.policy, e.policy);
        QVERIFY(out.optimizer == e.optimizer);
        QVERIFY(out.loss_scale == e.loss_scale);
        QCOMPARE(out.batch_size, e.batch_size);
        QCOMPARE(out.epochs, e.epochs);
        QCOMPARE(out.seed, e.seed);

        // Every policy round-trips too, and edits emit changed().
        auto* policy = form.findChild<QComboBox*>("policy");
        policy->setCurrentIndex(policy->findData("mixed_bfloat16"));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(form.apply_to(e).policy, std::string("mixed_bfloat16"));
        QTest::mouseClick(form.findChild<QPushButton*>("keras_defaults"), Qt::LeftButton);
        QVERIFY(form.apply_to(e).loss_scale == keras_loss_scale());
    }

    void switching_optimizer_resets_to_keras_defaults() {
        ExperimentForm form;
        Experiment e;
        e.optimizer = optimizer_defaults(OptimizerType::Adam);
        e.optimizer.learning_rate = 0.005;
        e.optimizer.beta_1 = 0.5;
        form.set_experiment(e);
        auto* type = form.findChild<QComboBox*>("optimizer_type");
        type->setCurrentIndex(type->findData(static_cast<int>(OptimizerType::SGD)));
        OptimizerConfig expected = optimizer_defaults(OptimizerType::SGD);
        expected.learning_rate = 0.005;
        QVERIFY(form.apply_to(e).optimizer == expected);
        QVERIFY(!form.findChild<QDoubleSpinBox*>("beta_1")->isVisibleTo(&form));
        QVERIFY(form.findChild<QDoubleSpinBox*>("momentum")->isVisibleTo(&form));
        type->setCurrentIndex(type->findData(static_cast<int>(OptimizerType::AdamW)));
        expected = optimizer_defaults(OptimizerType::AdamW);
        expected.learning_rate = 0.005;
        QVERIFY(form.apply_to(e).optimizer == expected);
        QVERIFY(form.findChild<QDoubleSpinBox*>("weight_decay")->isVisibleTo(&form));
        // CUDA switches start disabled.
        QVERIFY(!form.findChild<QCheckBox*>("tf32")->isEnabled());
        form.set_cuda_options_enabled(true);
        QVERIFY(form.findChild<QCheckBox*>("tf32")->isEnabled());
    }

    // The convention (issue 27): its one line shows under the combo; switching brings that
    // convention's defaults and keeps the learning rate; a file's convention fills the form.
    void convention_choice_shows_its_formula() {
        ExperimentForm form;
        Experiment e = load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/seed-mlp.json");
        form.set_experiment(e);
        auto* convention = form.findChild<QComboBox*>("convention");
        auto* note = form.findChild<QLabel*>("convention_note");
        QVERIFY(convention && note);
        QCOMPARE(convention->currentText(), QString("tf_keras_2"));
        QVERIFY(note->text().contains("sqrt(v) + epsilon"));
        QVERIFY(form.apply_to(e).optimizer == e.optimizer); // nothing changed
        convention->setCurrentIndex(
            convention->findData(static_cast<int>(OptimizerConvention::PyTorch)));
        OptimizerConfig expected =
            optimizer_defaults(OptimizerType::RMSprop, OptimizerConvention::PyTorch);
        expected.learning_rate = 0.001; // the preset's, kept
        QVERIFY(form.apply_to(e).optimizer == expected);
        QCOMPARE(form.findChild<QDoubleSpinBox*>("rho")->value(), 0.99);
        QVERIFY(note->text().contains("torch.optim"));
    }

    // Schedules (issue 29): a file's schedule fills the combo and the fields; another schedule
    // starts from its defaults; a field that does not parse is named next to it and the run
    // keeps the last schedule that did.
    void schedule_choice_and_fields() {
        ExperimentForm form;
        Experiment e =
            load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/mnist-fast.json");
        form.set_experiment(e);
        auto* schedule = form.findChild<QComboBox*>("schedule");
        auto* fields = form.findChild<QLineEdit*>("schedule_options");
        auto* note = form.findChild<QLabel*>("schedule_note");
        QVERIFY(schedule && fields && note);
        QCOMPARE(schedule->currentText(), QString("OneCycle"));
        QVERIFY(fields->isVisibleTo(&form) && note->isVisibleTo(&form));
        QVERIFY(fields->text().contains("pct_start=0.3"));
        QVERIFY(note->text().startsWith("OneCycle up to 0.01"));
        QVERIFY(form.apply_to(e).optimizer == e.optimizer); // nothing changed

        schedule->setCurrentIndex(schedule->findData(static_cast<int>(ScheduleKind::CosineDecay)));
        QCOMPARE(fields->text(), QString("decay_steps=1000,alpha=0,warmup_steps=0"));
        Experiment cosine = form.apply_to(e);
        QVERIFY(cosine.optimizer.schedule == default_schedule(ScheduleKind::CosineDecay));
        QCOMPARE(cosine.optimizer.learning_rate, 0.01); // the initial rate: the rate box

        fields->setText("decay_steps=-3");
        emit fields->textEdited(fields->text());
        QVERIFY(note->text().contains("decay_steps must be a finite number > 0"));
        // The last schedule the fields described: CosineDecay's defaults.
        QVERIFY(form.apply_to(e).optimizer.schedule == default_schedule(ScheduleKind::CosineDecay));

        schedule->setCurrentIndex(schedule->findData(static_cast<int>(ScheduleKind::Constant)));
        QVERIFY(form.apply_to(e).optimizer.schedule.kind == ScheduleKind::Constant);
        QVERIFY(!fields->isEnabled());
        QVERIFY(note->text().startsWith("constant 0.01"));
    }

    void screenshot() {
        const Experiment e = load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/cnn.json");
        LayerStackEditor editor;
        editor.set_context(QString::fromStdString(e.policy), e.loss_scale);
        editor.set_model(e.model);
        editor.resize(1000, 620);
        editor.show();
        // As the main window holds it: in a scroll area, here as tall as a 768-pixel screen allows.
        auto* form = new ExperimentForm;
        form->set_experiment(e);
        QScrollArea scroll;
        scroll.setWidget(form);
        scroll.setWidgetResizable(true);
        scroll.resize(420, 600);
        scroll.show();
        QVERIFY(editor.validation_error().isEmpty());
        QVERIFY(editor.grab().save(QDir::temp().filePath("mantissa_editor.png")));
        QVERIFY(form->grab().save(QDir::temp().filePath("mantissa_form.png")));
        // Every row at least its own height: the wrapped notes are not squeezed.
        auto* note = form->findChild<QLabel*>("convention_note");
        QVERIFY(note->height() >= note->heightForWidth(note->width()));
        ModelSpec broken = e.model;
        broken.layers[5].units = 100;
        broken.layers.insert(broken.layers.begin() + 5, broken.layers[0]); // Conv2D after Flatten
        editor.set_model(broken);
        QVERIFY(!editor.validation_error().isEmpty());
        QVERIFY(editor.grab().save(QDir::temp().filePath("mantissa_editor_error.png")));
    }
};

QTEST_MAIN(TestGuiEditor)
#include "tst_gui_editor.moc"
