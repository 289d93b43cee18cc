// The Plan view, offscreen: casts listed for mixed_float16 and none for float32, the diagram's
// cast markers, a quantised policy's quantise steps, memory per category, the error for a stack
// that does not fit, live updates from the main window's settings and layer stack, and the
// Measured and Roof columns of "Time each step".
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QHeaderView>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include "core/backend/cpu/cpu_backend.h"
#include "core/nn/model.h"
#include "core/plan/compile.h"
#include "core/train/experiment.h"
#include "isolated_app_dirs.h"
#include "ui/editor/experiment_form.h"
#include "ui/plan_view/plan_diagram.h"
#include "ui/plan_view/plan_steps_model.h"
#include "ui/plan_view/plan_view.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

Experiment mlp_small(const std::string& policy) {
    QFile file(":/experiments/mlp-small.json");
    if (!file.open(QIODevice::ReadOnly)) qFatal("mlp-small.json is missing from the resources");
    Experiment e = experiment_from_json(file.readAll().toStdString(), "mlp-small.json");
    e.policy = policy;
    return e;
}

// mlp-small on the CPU engine: what "Time each step" times in these tests.
Experiment mlp_small_on_cpu(const std::string& policy) {
    Experiment e = mlp_small(policy);
    e.device = "cpu";
    return e;
}

int cast_rows(const PlanStepsModel* model) {
    int n = 0;
    for (int r = 0; r < model->rowCount(); ++r) {
        const bool cast = model->index(r, 0).data(Qt::UserRole).toBool();
        const QString op = model->index(r, PlanStepsModel::Op).data().toString();
        // An optimizer step writing a weight copy ("adam+cast→float16") is not a cast row.
        const bool named_cast = op.contains("cast") && !op.contains("+cast→");
        if (cast != named_cast) qFatal("row %d: cast flag and op disagree", r);
        n += cast ? 1 : 0;
    }
    return n;
}

} // namespace

class TestGuiPlanView : public QObject {
    Q_OBJECT

    IsolatedAppDirs m_dirs; // no runs or recent files from elsewhere

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); }

    void float32HasNoCasts() {
        PlanView view;
        view.set_experiment(mlp_small("float32"));
        QVERIFY(view.has_plan());
        QVERIFY(view.error_text().isEmpty());
        QCOMPARE(view.cast_steps(), 0);
        QVERIFY(view.steps_model()->rowCount() > 10);
        QCOMPARE(cast_rows(view.steps_model()), 0);
        QCOMPARE(view.diagram()->cast_markers(), 0);
        QVERIFY(!view.memory_text().contains("master"));
        QVERIFY(view.memory_text().contains("workspace scratch, sized by the engine")); // at bind
        QVERIFY(view.summary_text().contains("0 casts"));
    }

    void mixedFloat16ListsItsCasts() {
        PlanView view;
        view.set_experiment(mlp_small("mixed_float16"));
        QVERIFY(view.has_plan());
        const PlanDigest& d = view.digest();
        // Three Dense layers, each with a kernel and a bias: the optimizer's one step writes
        // their float32 master variables' float16 copies as it updates them and reads their
        // float16 gradients as they are (no weight or gradient cast steps; issue 26).
        int weight_casts = 0, copy_writers = 0, forward_input_casts = 0;
        for (const PlanStepRow& row : d.steps) {
            weight_casts += row.weight_cast ? 1 : 0;
            copy_writers += row.weight_cast && !row.is_cast && row.phase == StepPhase::Update;
            forward_input_casts +=
                row.is_cast && !row.weight_cast && row.phase == StepPhase::Forward;
            QVERIFY(!(row.weight_cast && row.is_cast && row.phase == StepPhase::Forward));
        }
        QCOMPARE(weight_casts, 1);
        QCOMPARE(copy_writers, 1);
        for (const PlanStepRow& row : d.steps)
            if (row.phase == StepPhase::Update && row.weight_cast)
                QCOMPARE(QString::fromStdString(row.op),
                         QString("unscale+rmsprop ×6+cast→float16"));
        // The optimizer step's tooltip lists a dozen tensors each way, then says how many more
        // (all 6 variables, their gradients, slots and copies would not fit a screen).
        for (const PlanStepRow& row : d.steps)
            if (row.phase == StepPhase::Update && row.weight_cast) {
                const QString detail = QString::fromStdString(row.detail);
                QVERIFY2(detail.contains("… and 6 more"), qPrintable(detail));
                QVERIFY(detail.count('\n') <= 2 * 13 + 1);
            }
        // The float32 batch into the first float16 layer, and the float16 logits into the
        // float32 softmax (the Keras guide's rule).
        QCOMPARE(forward_input_casts, 2);
        QCOMPARE(view.cast_steps(), cast_rows(view.steps_model()));
        QVERIFY(view.cast_steps() >= weight_casts - copy_writers + forward_input_casts);
        QCOMPARE(view.diagram()->cast_markers(), 2);
        QCOMPARE(d.layers.back().input_casts, std::vector<std::string>{"float16→float32"});
        QCOMPARE(d.layers[1].weight_casts, 2);
        QCOMPARE(d.layers[1].compute, DType::Float16);
        QCOMPARE(d.layers[1].output, DType::Float16);
        QCOMPARE(d.layers[0].output, DType::Float32); // Flatten is a view: nothing cast yet
        QCOMPARE(d.layers.back().output, DType::Float32);
        QCOMPARE(d.loss_dtype, DType::Float32);
        QVERIFY(view.memory_text().contains("master"));
        // A cast row is highlighted.
        for (int r = 0; r < view.steps_model()->rowCount(); ++r)
            if (view.steps_model()->index(r, 0).data(Qt::UserRole).toBool())
                QVERIFY(view.steps_model()->index(r, 0).data(Qt::BackgroundRole).isValid());
    }

    // The preview (no backend) describes exactly the plan the CPU engine binds for training.
    void previewMatchesTheRealPlan() {
        const Experiment e = mlp_small("mixed_float16");
        const PlanDigest preview = preview_plan(e);
        CpuBackend cpu;
        const Model model(e.model, policy_from_name(e.policy));
        CompileOptions options;
        options.policy = policy_from_name(e.policy);
        options.batch_size = e.batch_size;
        options.optimizer = e.optimizer;
        options.loss_scale = e.loss_scale;
        const auto plan = compile(model, options, cpu);
        const PlanDigest real = digest_plan(*plan->spec);
        QCOMPARE(preview.steps.size(), plan->steps.size());
        // Every category is exact before binding except the workspace's scratch, the engine's.
        for (std::size_t c = 0; c < kMemCategoryCount; ++c)
            if (static_cast<MemCategory>(c) != MemCategory::Workspace)
                QCOMPARE(preview.memory.bytes[c], plan->memory.bytes[c]);
        QVERIFY(preview.memory[MemCategory::Workspace] <= plan->memory[MemCategory::Workspace]);
        QCOMPARE(preview.flops, plan->train_flops_per_step());
        QCOMPARE(preview.casts, real.casts);
        // The first Dense's forward GEMM: 2 · batch · 784 · 128 FLOPs, float16 in and out.
        auto gemm = std::find_if(preview.steps.begin(), preview.steps.end(), [](const auto& s) {
            return s.layer == "dense_1" && s.phase == StepPhase::Forward && !s.is_cast;
        });
        QVERIFY(gemm != preview.steps.end());
        QCOMPARE(gemm->flops, 2.0 * 128 * 784 * 128);
        QCOMPARE(QString::fromStdString(gemm->inputs), QString("float16"));
    }

    // A quantised policy is described without an engine (no preview backend): the view lists
    // each Dense layer's quantise steps, the gradient's in the backward pass.
    void quantisedPolicyShowsItsQuantiseSteps() {
        PlanView view;
        view.set_experiment(mlp_small("nvfp4"));
        QVERIFY(view.has_plan());
        QVERIFY2(view.error_text().isEmpty(), qPrintable(view.error_text()));
        int forward = 0, backward = 0;
        for (const PlanStepRow& row : view.digest().steps) {
            if (row.op.rfind("quantize", 0) != 0) continue;
            QVERIFY(row.is_cast);
            // code · block scale in bfloat16 for the bfloat16 GEMM, and the float32 tensor scale
            // that GEMM multiplies its sum by
            QCOMPARE(row.outputs, std::string("bfloat16, float32"));
            forward += row.phase == StepPhase::Forward;
            backward += row.phase == StepPhase::Backward;
        }
        // Each Dense's input (with its column-wise copy for dW, 16×1 blocks down the batch, made
        // by the same step) and kernel (nvfp4's 16×16 tiles serve dX as they are).
        QCOMPARE(forward, 3 * 2);
        // Each Dense's dZ, row-wise (for dX) and column-wise (for dW) in one step; the first Dense
        // computes no dX, so its dZ has only the column-wise copy.
        QCOMPARE(backward, 3);
    }

    // Delayed FP8's quantise step reads "float32→bfloat16, quantize: float8_e4m3 per tensor,
    // delayed scale (amax max over 1024 steps)": its pill is elided rather than widen the window
    // past a 1366-pixel screen; the tooltip keeps the whole text.
    void longQuantisePillsAreElidedNotWidened() {
        PlanView view;
        view.set_experiment(mlp_small("mixed_float8"));
        QVERIFY(view.has_plan());
        PlanDiagram* diagram = view.diagram();
        const int needed = diagram->minimumSizeHint().width();
        int elided = 0;
        for (const PlanLabel& label : diagram->labels(needed))
            if (label.kind == PlanLabel::Kind::Cast && label.text.contains("delayed"))
                elided +=
                    QFontMetricsF(label.font).horizontalAdvance(label.text) > label.rect.width();
        QCOMPARE(elided, 3); // each Dense's input quantise step
        QVERIFY2(needed <= 60 * diagram->fontMetrics().averageCharWidth(),
                 qPrintable(QString::number(needed)));
    }

    // Issue 28: elided at the diagram's narrowest, nvfp4's pill read "⇄ float32→bfloat16,
    // quantize activation: n…". On the activation's arrow the word "activation" is left out, so
    // the format shows; a wider diagram shows more of the text (the tooltip has it whole).
    void quantisePillsShowTheirFormat() {
        PlanView view;
        view.set_experiment(mlp_small("nvfp4"));
        QVERIFY(view.has_plan());
        const PlanDiagram* diagram = view.diagram();
        // The quantise pills as the painter draws them at `width`.
        const auto pills_at = [&](int width) {
            QStringList shown;
            for (const PlanLabel& label : diagram->labels(width))
                if (label.kind == PlanLabel::Kind::Cast && label.text.contains("quantize"))
                    shown << QFontMetricsF(label.font)
                                 .elidedText(label.text, Qt::ElideRight, label.rect.width() + 0.5);
            return shown;
        };
        const int narrowest = diagram->minimumSizeHint().width();
        const QStringList narrow = pills_at(narrowest);
        QCOMPARE(narrow.size(), 3); // each Dense's input
        for (const QString& pill : narrow)
            QVERIFY2(pill.contains("quantize: nvfp4"), qPrintable(pill));
        const QStringList wide = pills_at(narrowest + 300);
        QCOMPARE(wide.size(), narrow.size());
        for (int i = 0; i < wide.size(); ++i)
            QVERIFY2(wide[i].size() > narrow[i].size(), qPrintable(wide[i]));
    }

    void aStackThatDoesNotFitShowsTheError() {
        PlanView view;
        Experiment e = mlp_small("float32");
        e.model.layers.erase(e.model.layers.begin()); // Dense straight on the image
        view.set_experiment(e);
        QVERIFY(!view.has_plan());
        QVERIFY2(view.error_text().contains("dense_1"), qPrintable(view.error_text()));
        QCOMPARE(view.steps_model()->rowCount(), 0);
        view.set_experiment(mlp_small("float32"));
        QVERIFY(view.has_plan());
        QVERIFY(view.error_text().isEmpty());
    }

    void followsThePolicyAndTheStackInTheMainWindow() {
        MainWindow window;
        PlanView* view = window.plan_view();
        QVERIFY(view);
        QVERIFY(view->has_plan());
        QCOMPARE(QString::fromStdString(view->digest().policy), QString("float32"));
        QCOMPARE(view->cast_steps(), 0);
        auto* policy = window.findChild<ExperimentForm*>()->findChild<QComboBox*>("policy");
        QVERIFY(policy);
        policy->setCurrentIndex(policy->findData("mixed_float16"));
        QCOMPARE(QString::fromStdString(view->digest().policy), QString("mixed_float16"));
        QVERIFY(view->cast_steps() > 0);
        policy->setCurrentIndex(policy->findData("float32"));
        QCOMPARE(view->cast_steps(), 0);
        // Editing the stack: a stack that does not fit shows the error, a fixed one the plan.
        Experiment e = window.current_experiment();
        e.model.layers.erase(e.model.layers.begin());
        window.set_experiment(e);
        QVERIFY(!view->has_plan());
        e.model.layers.insert(e.model.layers.begin(), LayerSpec{});
        e.model.layers.front().type = LayerType::Flatten;
        window.set_experiment(e);
        QVERIFY(view->has_plan());
        QVERIFY(window.float_lab());
    }

    // Issue 26: "Time each step" fills the Measured and Roof columns from one profiled training
    // step on the experiment's engine (the CPU here), keeps them while only the name changes,
    // clears them when the plan changes, and waits while a run trains.
    void timeEachStepFillsMeasuredAndRoof() {
        PlanView view;
        Experiment e = mlp_small_on_cpu("mixed_bfloat16");
        view.set_experiment(e);
        PlanStepsModel* model = view.steps_model();
        QCOMPARE(model->columnCount(), int(PlanStepsModel::ColumnCount));
        QVERIFY(model->index(0, PlanStepsModel::Measured).data().toString().isEmpty());
        QVERIFY(!view.timing_columns_shown()); // empty columns take no width
        QVERIFY(view.time_button()->isEnabled());
        QSignalSpy done(&view, &PlanView::timing_finished);
        view.time_button()->click();
        QVERIFY(view.timing());
        QCOMPARE(view.time_button()->text(), QString("Cancel timing"));
        QVERIFY(done.wait(180000));
        QVERIFY2(view.timing_text().startsWith("Measured on"), qPrintable(view.timing_text()));
        // The roof's GEMM and the step counts where the text says (a "%7³" once shifted them).
        QVERIFY2(view.timing_text().contains(QRegularExpression(
                     "\\(bfloat16 GEMM 768×768×768\\), [0-9.]+ GB/s \\(a copy\\)\\. Median of 5 "
                     "steps after 2 warm-up")),
                 qPrintable(view.timing_text()));
        QVERIFY(!view.timing_text().contains("could not be placed"));
        // The step's time by work, as mantissa-cli profile sums it.
        QVERIFY2(view.timing_text().contains(QRegularExpression(
                     "Where the step goes: matrix math \\(GEMMs, convolutions\\) <b>[0-9.e+]+ "
                     "(µs|ms|s)</b> \\([0-9]+%, [0-9.]+× its roof\\) · casts and quantisation "
                     "<b>[^<]+</b> \\([0-9]+%.*\\) · everything else <b>[^<]+</b>")),
                 qPrintable(view.timing_text()));
        QVERIFY(view.timing_columns_shown());
        int gemms = 0;
        for (int r = 0; r < model->rowCount(); ++r) {
            const QString measured = model->index(r, PlanStepsModel::Measured).data().toString();
            const QString roof = model->index(r, PlanStepsModel::Roof).data().toString();
            QVERIFY2(measured.contains(QRegularExpression("^[0-9.e+]+ (µs|ms|s)$")),
                     qPrintable(QString("row %1: '%2'").arg(r).arg(measured)));
            QVERIFY2(roof.endsWith(" compute") || roof.endsWith(" memory"),
                     qPrintable(QString("row %1: '%2'").arg(r).arg(roof)));
            // A cast reads and writes bytes and does no arithmetic worth a roof of its own.
            if (model->index(r, 0).data(Qt::UserRole).toBool()) QVERIFY(roof.endsWith(" memory"));
            if (model->index(r, PlanStepsModel::Op).data().toString().startsWith("gemm")) ++gemms;
        }
        QVERIFY(gemms >= 3);
        QVERIFY(model->index(0, PlanStepsModel::Roof)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains("× the roof"));

        e.name = "renamed";
        view.set_experiment(e); // same plan: the timing stays
        QVERIFY(!model->index(0, PlanStepsModel::Measured).data().toString().isEmpty());
        e.policy = "float32";
        view.set_experiment(e); // another plan: the columns clear, the text says why
        QVERIFY(model->index(0, PlanStepsModel::Measured).data().toString().isEmpty());
        QVERIFY(!view.timing_columns_shown());
        QVERIFY(view.timing_text().contains("plan changed"));

        view.set_training(true);
        QVERIFY(!view.time_button()->isEnabled());
        QVERIFY(view.time_button()->toolTip().contains("training"));
        view.set_training(false);
        QVERIFY(view.time_button()->isEnabled());
    }

    // "against": the same step under a second policy, compared work by work in the timing line
    // (mantissa-cli profile --against says the same). Against the experiment's own policy there
    // is nothing to compare.
    void timeAgainstAnotherPolicy() {
        PlanView view;
        view.set_experiment(mlp_small_on_cpu("mixed_float8"));
        QComboBox* against = view.against_box();
        QVERIFY(against);
        QCOMPARE(against->currentData().toString(), QString()); // none by default
        against->setCurrentIndex(against->findData("mixed_bfloat16"));
        QVERIFY(against->currentIndex() > 0);
        QSignalSpy done(&view, &PlanView::timing_finished);
        view.time_button()->click();
        QVERIFY(done.wait(180000));
        QVERIFY2(view.timing_text().contains(QRegularExpression(
                     "Against <b>mixed_bfloat16</b> \\([0-9.]+ (µs|ms) a step\\): matrix math "
                     "<b>[0-9.]+×</b>, step <b>[0-9.]+×</b>\\. Its matrix math (saves [0-9.]+ "
                     "(µs|ms)|is no faster here)[;,].* its casts and quantisation (add|take) ")),
                 qPrintable(view.timing_text()));
        QVERIFY(view.timing_columns_shown()); // the columns are mixed_float8's own
        against->setCurrentIndex(against->findData("mixed_float8"));
        view.time_button()->click();
        QVERIFY(done.wait(180000));
        QVERIFY2(!view.timing_text().contains("Against"), qPrintable(view.timing_text()));
    }

    // At 1366×768 with the Settings form beside it, a quantised policy's diagram leaves the step
    // table about 270 px: the Measured and Roof columns, last before, lay past its edge. They now
    // follow the step number, so a lecturer sees the timings without scrolling.
    void timingsVisibleAt1366BesideTheSettings() {
        MainWindow window;
        window.resize(1366, 768);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.set_experiment(mlp_small_on_cpu("mixed_float8"));
        PlanView* view = window.plan_view();
        // The Settings tab on the left (the wider of its two pages), the Plan tab on the right.
        for (QTabWidget* tabs : window.findChildren<QTabWidget*>()) {
            for (int i = 0; i < tabs->count(); ++i)
                if (tabs->tabText(i) == "Settings") tabs->setCurrentIndex(i);
            for (QWidget* w = view; w; w = w->parentWidget())
                if (tabs->indexOf(w) >= 0) tabs->setCurrentWidget(w);
        }
        QSignalSpy done(view, &PlanView::timing_finished);
        view->time_button()->click();
        QVERIFY(done.wait(180000));
        QVERIFY(view->timing_columns_shown());
        QApplication::processEvents();
        auto* table = view->findChild<QTableView*>();
        QVERIFY(table && table->isVisible());
        const QHeaderView* header = table->horizontalHeader();
        const int room = table->viewport()->width();
        qInfo("step table: %d px wide", room);
        QVERIFY2(room < 600, "the layout this test is for: a narrow table beside the diagram");
        for (int column : {int(PlanStepsModel::Measured), int(PlanStepsModel::Roof)}) {
            const int right = header->sectionViewportPosition(column) + header->sectionSize(column);
            QVERIFY2(
                right <= room,
                qPrintable(
                    QString("column %1 ends at %2 of %3 px").arg(column).arg(right).arg(room)));
        }
        // Then the layer and the op; the phase, which the order shows, after them.
        QVERIFY(header->sectionViewportPosition(PlanStepsModel::Layer) < room);
        QVERIFY(header->visualIndex(PlanStepsModel::Phase) >
                header->visualIndex(PlanStepsModel::Op));
        // The op may lie past the edge: the timing's tooltip names the step.
        const PlanStepsModel* model = view->steps_model();
        for (int r = 0; r < model->rowCount(); ++r) {
            const QString op = model->index(r, PlanStepsModel::Op).data().toString();
            if (!op.startsWith("gemm")) continue;
            const QString tip =
                model->index(r, PlanStepsModel::Measured).data(Qt::ToolTipRole).toString();
            QVERIFY2(tip.startsWith(model->index(r, PlanStepsModel::Layer).data().toString() +
                                    " · " + op + ": measured "),
                     qPrintable(tip));
        }
    }
};

QTEST_MAIN(TestGuiPlanView)
#include "tst_gui_plan_view.moc"
