// The experiment form's Recipe group: which fields each policy shows and their defaults (as
// make_recipe gives them), every value it offers accepted by make_recipe, edits reaching the
// experiment, the document and the plan's quantise steps, save → load round trips with only the
// changed fields in the JSON, no recipe for float32, and a file's bad recipe shown with the CLI's
// own error.
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFormLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "core/numeric/policy.h"
#include "core/train/experiment.h"
#include "tests/isolated_app_dirs.h"
#include "tests/tiny_experiment.h"
#include "ui/editor/experiment_document.h"
#include "ui/editor/experiment_form.h"
#include "ui/editor/recipe_editor.h"
#include "ui/plan_view/plan_view.h"
#include "ui/runs/compare_queue.h"
#include "ui/runs/run_store.h"
#include "ui/window/error_banner.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

const char* const kFields[] = {"recipe_kind",       "recipe_fp8_format",   "recipe_history_len",
                               "recipe_margin",     "recipe_amax_compute", "recipe_gemm",
                               "recipe_scale_rule", "recipe_weight_2d",    "recipe_stochastic",
                               "recipe_hadamard",   "recipe_seed"};

RecipeEditor* editor_of(QWidget& parent) {
    return parent.findChild<RecipeEditor*>("recipe");
}

template <class T>
T* field(QWidget& parent, const char* name) {
    T* w = editor_of(parent)->findChild<T*>(name);
    if (!w) qFatal("no recipe field %s", name);
    return w;
}

// The names of the fields whose rows are shown now.
QStringList shown_fields(QWidget& parent) {
    RecipeEditor* editor = editor_of(parent);
    auto* form = qobject_cast<QFormLayout*>(editor->layout());
    QStringList out;
    if (editor->isHidden()) return out;
    for (const char* name : kFields)
        if (form->isRowVisible(editor->findChild<QWidget*>(name))) out << name;
    return out;
}

void pick(QComboBox* combo, const char* value) {
    const int index = combo->findData(QString::fromLatin1(value));
    QVERIFY2(index >= 0, value);
    combo->setCurrentIndex(index);
}

QComboBox* policy_combo(QWidget& parent) {
    return parent.findChild<QComboBox*>("policy");
}

RecipeOptions options_with(std::optional<std::string> kind, std::optional<int> history_len) {
    RecipeOptions o;
    o.kind = std::move(kind);
    o.history_len = history_len;
    return o;
}

// The plan's quantise step for `role` ("activation", "weight", "gradient") of the first layer
// that has one.
QString quantize_step(MainWindow& window, const QString& role) {
    for (const PlanStepRow& row : window.plan_view()->digest().steps) {
        const QString op = QString::fromStdString(row.op);
        if (op.startsWith("quantize " + role + ":")) return op;
    }
    return {};
}

// For failure messages: the plan's quantise steps, or why there is no plan.
QByteArray quantize_steps(MainWindow& window) {
    if (!window.plan_view()->has_plan()) return window.plan_view()->error_text().toUtf8();
    QStringList ops;
    for (const PlanStepRow& row : window.plan_view()->digest().steps)
        if (row.op.rfind("quantize", 0) == 0) ops << QString::fromStdString(row.op);
    return ops.join(" | ").toUtf8();
}

QJsonObject saved_json(MainWindow& window, const QString& path) {
    if (!window.save_as(path)) return {};
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

} // namespace

class TestGuiRecipeEditor : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); } // the app's start-up experiment

    void fieldsFollowThePolicy() {
        ExperimentForm form;
        RecipeEditor* editor = editor_of(form);
        QVERIFY(editor);
        QVERIFY(editor->isHidden()); // float32: no recipe at all
        QComboBox* policy = policy_combo(form);

        pick(policy, "mixed_float8");
        QVERIFY(!editor->isHidden());
        QCOMPARE(shown_fields(form),
                 QStringList({"recipe_kind", "recipe_fp8_format", "recipe_history_len",
                              "recipe_margin", "recipe_amax_compute", "recipe_gemm"}));
        // The defaults shown are make_recipe's.
        const QuantRecipe fp8 = make_recipe("mixed_float8");
        QCOMPARE(field<QComboBox>(form, "recipe_kind")->currentData().toString(),
                 QString::fromStdString(fp8.name));
        QCOMPARE(field<QSpinBox>(form, "recipe_history_len")->value(), fp8.activation.history_len);
        QCOMPARE(field<QSpinBox>(form, "recipe_margin")->value(), fp8.activation.margin);
        QCOMPARE(field<QComboBox>(form, "recipe_fp8_format")->currentData().toString(),
                 QString("hybrid"));
        QCOMPARE(field<QComboBox>(form, "recipe_amax_compute")->currentData().toString(),
                 QString("max"));
        QCOMPARE(field<QComboBox>(form, "recipe_gemm")->currentData().toString(),
                 QString::fromStdString(fp8.gemm));
        QVERIFY(!form.apply_to(Experiment{}).recipe); // defaults: nothing to write
        pick(field<QComboBox>(form, "recipe_gemm"), "fp8");
        QCOMPARE(form.apply_to(Experiment{}).recipe->gemm, std::optional<std::string>("fp8"));
        pick(field<QComboBox>(form, "recipe_gemm"), "auto");
        QVERIFY(!form.apply_to(Experiment{}).recipe);

        pick(field<QComboBox>(form, "recipe_kind"), "current"); // no history without "delayed"
        QCOMPARE(shown_fields(form),
                 QStringList({"recipe_kind", "recipe_fp8_format", "recipe_gemm"}));
        pick(field<QComboBox>(form, "recipe_kind"), "block"); // blocks may round stochastically
        QCOMPARE(shown_fields(form),
                 QStringList({"recipe_kind", "recipe_fp8_format", "recipe_stochastic"}));
        QVERIFY(!field<QCheckBox>(form, "recipe_stochastic")->isChecked());

        for (const char* mx : {"mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4"}) {
            pick(policy, mx);
            QCOMPARE(shown_fields(form), QStringList({"recipe_scale_rule", "recipe_stochastic"}));
            QCOMPARE(field<QComboBox>(form, "recipe_scale_rule")->currentData().toString(),
                     QString("floor"));
            QVERIFY(!field<QCheckBox>(form, "recipe_stochastic")->isChecked());
            QVERIFY(!form.apply_to(Experiment{}).recipe); // the FP8 kind did not come along
        }

        pick(policy, "nvfp4");
        QCOMPARE(shown_fields(form), QStringList({"recipe_weight_2d", "recipe_stochastic",
                                                  "recipe_hadamard", "recipe_seed"}));
        const QuantRecipe nv = make_recipe("nvfp4");
        QCOMPARE(field<QCheckBox>(form, "recipe_weight_2d")->isChecked(), nv.weight.block_rows > 1);
        QCOMPARE(field<QCheckBox>(form, "recipe_stochastic")->isChecked(),
                 nv.gradient.block.stochastic);
        QVERIFY(field<QCheckBox>(form, "recipe_stochastic")->isChecked());
        QCOMPARE(field<QLineEdit>(form, "recipe_seed")->text(), QString("0"));
        QVERIFY(!field<QCheckBox>(form, "recipe_hadamard")->isChecked()); // off by default
        field<QCheckBox>(form, "recipe_stochastic")->setChecked(false);   // the seed goes with it
        QCOMPARE(shown_fields(form),
                 QStringList({"recipe_weight_2d", "recipe_stochastic", "recipe_hadamard"}));
        // The transform's signs come from the seed too: it comes back with the transform.
        field<QCheckBox>(form, "recipe_hadamard")->setChecked(true);
        QCOMPARE(shown_fields(form), QStringList({"recipe_weight_2d", "recipe_stochastic",
                                                  "recipe_hadamard", "recipe_seed"}));
        QCOMPARE(form.apply_to(Experiment{}).recipe->hadamard, std::optional<bool>(true));
        field<QCheckBox>(form, "recipe_hadamard")->setChecked(false);

        for (const char* plain : {"float32", "mixed_float16", "bfloat16"}) {
            pick(policy, plain);
            QVERIFY(editor->isHidden());
            QVERIFY(!form.apply_to(Experiment{}).recipe);
        }
    }

    // Every value the editor offers, for every quantised policy, is one make_recipe accepts: no
    // invalid combination can be picked.
    void everyOfferedValueIsAccepted() {
        ExperimentForm form;
        int tried = 0;
        for (const Policy& p : all_policies()) {
            if (!is_quantized_policy(p.name)) continue;
            pick(policy_combo(form), p.name.c_str());
            for (const char* kind : {"delayed", "current", "block"}) {
                if (p.name == "mixed_float8") pick(field<QComboBox>(form, "recipe_kind"), kind);
                for (const QString& name : shown_fields(form)) {
                    const QByteArray n = name.toLatin1();
                    if (auto* combo = editor_of(form)->findChild<QComboBox*>(name)) {
                        for (int i = 0; i < combo->count(); ++i) {
                            combo->setCurrentIndex(i);
                            const Experiment e = form.apply_to(Experiment{});
                            QVERIFY2(editor_of(form)->error_text().isEmpty(), n.constData());
                            policy_with_recipe(e.policy, e.recipe); // throws if rejected
                            ++tried;
                        }
                    } else if (auto* box = editor_of(form)->findChild<QCheckBox*>(name)) {
                        for (bool on : {true, false, true}) {
                            box->setChecked(on);
                            const Experiment e = form.apply_to(Experiment{});
                            QVERIFY2(editor_of(form)->error_text().isEmpty(), n.constData());
                            policy_with_recipe(e.policy, e.recipe);
                            ++tried;
                        }
                    } else if (auto* spin = editor_of(form)->findChild<QSpinBox*>(name)) {
                        for (int v : {spin->minimum(), spin->maximum(), 7}) {
                            spin->setValue(v);
                            const Experiment e = form.apply_to(Experiment{});
                            policy_with_recipe(e.policy, e.recipe);
                            ++tried;
                        }
                    }
                }
                if (p.name != "mixed_float8") break;
            }
        }
        QVERIFY(tried > 40);
    }

    void editsReachTheExperimentAndThePlan() {
        IsolatedAppDirs dirs;
        MainWindow window;
        ExperimentForm* form = window.findChild<ExperimentForm*>();
        QSignalSpy changed(form, &ExperimentForm::changed);
        pick(policy_combo(window), "mixed_float8");
        QVERIFY2(quantize_step(window, "activation").contains("delayed"),
                 quantize_steps(window).constData());
        QVERIFY(!window.document()->is_modified() || changed.count() > 0);

        // Current scaling: the experiment, the dirty flag and the plan's quantise step.
        const int before = changed.count();
        pick(field<QComboBox>(window, "recipe_kind"), "current");
        QCOMPARE(changed.count(), before + 1);
        std::optional<RecipeOptions> r = window.current_experiment().recipe;
        QVERIFY(r);
        QVERIFY(r->kind == std::optional<std::string>("current"));
        QVERIFY(window.document()->is_modified());
        QVERIFY2(quantize_step(window, "activation").contains("current scale"),
                 quantize_steps(window).constData());
        QVERIFY2(!quantize_step(window, "activation").contains("delayed"),
                 quantize_steps(window).constData());
        // Back to the default: nothing left to write.
        pick(field<QComboBox>(window, "recipe_kind"), "delayed");
        QVERIFY(!window.current_experiment().recipe);

        // The MX ceil rule.
        pick(policy_combo(window), "mxfp4");
        QVERIFY2(quantize_step(window, "weight").contains("(floor)"),
                 quantize_steps(window).constData());
        pick(field<QComboBox>(window, "recipe_scale_rule"), "ceil");
        r = window.current_experiment().recipe;
        QVERIFY(r);
        QVERIFY(r->scale_rule == std::optional<std::string>("ceil"));
        QVERIFY2(quantize_step(window, "weight").contains("(ceil)"),
                 quantize_steps(window).constData());

        // NVFP4's stochastic rounding off; ceil does not apply to nvfp4 and is dropped.
        pick(policy_combo(window), "nvfp4");
        QVERIFY(!window.current_experiment().recipe);
        QVERIFY2(quantize_step(window, "gradient").contains("stochastic"),
                 quantize_steps(window).constData());
        field<QCheckBox>(window, "recipe_stochastic")->setChecked(false);
        r = window.current_experiment().recipe;
        QVERIFY(r);
        RecipeOptions only_stochastic_off;
        only_stochastic_off.stochastic_gradients = false;
        QVERIFY(*r == only_stochastic_off); // nothing else written
        QVERIFY2(!quantize_step(window, "gradient").contains("stochastic"),
                 quantize_steps(window).constData());
        QVERIFY(window.plan_view()->has_plan());
    }

    void saveAndLoadRoundTrip() {
        IsolatedAppDirs dirs;
        QTemporaryDir tmp;
        const QString fp8_path = tmp.filePath("fp8.json"), nv_path = tmp.filePath("nv.json");
        RecipeOptions fp8, nv;
        {
            MainWindow window;
            pick(policy_combo(window), "mixed_float8");
            pick(field<QComboBox>(window, "recipe_fp8_format"), "e4m3");
            field<QSpinBox>(window, "recipe_history_len")->setValue(16);
            field<QSpinBox>(window, "recipe_margin")->setValue(2);
            pick(field<QComboBox>(window, "recipe_amax_compute"), "most_recent");
            fp8 = *window.current_experiment().recipe;
            QJsonObject json = saved_json(window, fp8_path);
            QCOMPARE(json.value("policy").toString(), QString("mixed_float8"));
            // Only what differs from the defaults: the kind stays "delayed", unwritten.
            QCOMPARE(json.value("recipe").toObject(),
                     QJsonObject({{"fp8_format", "e4m3"},
                                  {"history_len", 16},
                                  {"margin", 2},
                                  {"amax_compute", "most_recent"}}));
            QVERIFY(!window.document()->is_modified());

            pick(policy_combo(window), "nvfp4");
            field<QCheckBox>(window, "recipe_weight_2d")->setChecked(false);
            QLineEdit* seed = field<QLineEdit>(window, "recipe_seed");
            seed->clear();
            QTest::keyClicks(seed, "77");
            nv = *window.current_experiment().recipe;
            json = saved_json(window, nv_path);
            QCOMPARE(json.value("recipe").toObject(),
                     QJsonObject({{"weight_2d", false}, {"seed", 77}}));
        }
        MainWindow window;
        QVERIFY(window.load_experiment_file(fp8_path));
        QVERIFY(window.current_experiment().recipe == std::optional<RecipeOptions>(fp8));
        QCOMPARE(field<QComboBox>(window, "recipe_kind")->currentData().toString(),
                 QString("delayed"));
        QCOMPARE(field<QComboBox>(window, "recipe_fp8_format")->currentData().toString(),
                 QString("e4m3"));
        QCOMPARE(field<QSpinBox>(window, "recipe_history_len")->value(), 16);
        QCOMPARE(field<QSpinBox>(window, "recipe_margin")->value(), 2);
        QCOMPARE(field<QComboBox>(window, "recipe_amax_compute")->currentData().toString(),
                 QString("most_recent"));
        QVERIFY(!window.document()->is_modified());
        QVERIFY2(quantize_step(window, "activation").contains("most recent over 16 steps"),
                 quantize_steps(window).constData());

        QVERIFY(window.load_experiment_file(nv_path));
        QVERIFY(window.current_experiment().recipe == std::optional<RecipeOptions>(nv));
        QVERIFY(!field<QCheckBox>(window, "recipe_weight_2d")->isChecked());
        QVERIFY(field<QCheckBox>(window, "recipe_stochastic")->isChecked());
        QCOMPARE(field<QLineEdit>(window, "recipe_seed")->text(), QString("77"));
        QVERIFY(!window.document()->is_modified());
        QVERIFY2(quantize_step(window, "weight").contains("16×1 blocks"),
                 quantize_steps(window).constData());
    }

    void float32HasNoRecipe() {
        IsolatedAppDirs dirs;
        QTemporaryDir tmp;
        MainWindow window;
        pick(policy_combo(window), "mixed_float8");
        pick(field<QComboBox>(window, "recipe_kind"), "current");
        QVERIFY(window.current_experiment().recipe);
        pick(policy_combo(window), "float32");
        QVERIFY(editor_of(window)->isHidden());
        QVERIFY(!window.current_experiment().recipe);
        const QJsonObject json = saved_json(window, tmp.filePath("f32.json"));
        QCOMPARE(json.value("policy").toString(), QString("float32"));
        QVERIFY(!json.contains("recipe"));
        QVERIFY(json.contains("loss_scale")); // the file was written
    }

    // A recipe make_recipe rejects: a file with one does not load (the banner gives the CLI's
    // message); handed to the window directly (a lesson, a script), it is kept as it is, not
    // silently fixed, with the same message in the Recipe group until the user resets it.
    void aBadRecipeShowsTheCliError() {
        IsolatedAppDirs dirs;
        QTemporaryDir tmp;
        Experiment bad =
            load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");
        bad.policy = "mixed_float8";
        bad.recipe = options_with("current", 16);
        const QString path = tmp.filePath("bad.json");
        save_experiment(bad, path.toStdString()); // writes without validating

        QProcess cli;
        cli.start(MANTISSA_CLI_PATH, {"train", "--config", path, "--max-steps", "1", "--data",
                                      tmp.filePath("no-data")});
        QVERIFY(cli.waitForFinished(30000));
        QCOMPARE(cli.exitCode(), 2);
        const QString cli_error = QString::fromUtf8(cli.readAllStandardError());
        const QString expected("recipe.history_len: only for kind 'delayed' (this is 'current')");
        QVERIFY2(cli_error.contains(expected), qPrintable(cli_error));

        MainWindow window;
        QVERIFY(!window.load_experiment_file(path));
        QVERIFY2(window.error_banner()->text().contains(expected),
                 qPrintable(window.error_banner()->text()));

        window.set_experiment(bad);
        RecipeEditor* editor = editor_of(window);
        QVERIFY(!editor->isHidden());
        QCOMPARE(editor->error_text(), expected);
        auto* label = editor->findChild<QLabel*>("recipe_error");
        QCOMPARE(label->text(), expected);
        QVERIFY(qobject_cast<QFormLayout*>(editor->layout())->isRowVisible(label));
        QVERIFY(window.current_experiment().recipe == bad.recipe); // not silently changed
        QVERIFY(!window.plan_view()->has_plan());
        QVERIFY(window.plan_view()->error_text().contains(expected));

        auto* defaults = editor->findChild<QPushButton*>("recipe_defaults");
        QVERIFY(defaults->isEnabled());
        defaults->click();
        QVERIFY(editor->error_text().isEmpty());
        QVERIFY(!label->isVisibleTo(editor));
        QVERIFY(!window.current_experiment().recipe);
        QVERIFY(window.plan_view()->has_plan());
        QVERIFY(!defaults->isEnabled());

        // The same for a float32 experiment that carries a recipe: the group shows only the
        // error, and switching to float32 from the editor never produces one.
        bad.policy = "float32";
        bad.recipe = RecipeOptions{};
        window.set_experiment(bad);
        QVERIFY(!editor->isHidden());
        QVERIFY2(editor->error_text().startsWith("recipe: policy 'float32' quantises nothing"),
                 qPrintable(editor->error_text()));
        QVERIFY(shown_fields(window).isEmpty());
        defaults->click();
        QVERIFY(editor->isHidden());
        QVERIFY(!window.current_experiment().recipe);
    }

    // Compare policies from an experiment with a recipe: float32 takes none and must still run;
    // the experiment's own policy keeps its recipe.
    void compareDropsTheRecipeForOtherPolicies() {
        IsolatedAppDirs dirs;
        MainWindow window;
        Experiment e = tiny_experiment("recipe", 3);
        e.policy = "mixed_float8";
        e.recipe = options_with("current", std::nullopt);
        window.set_experiment(e);
        window.compare_policies({"float32", "mixed_float8"});
        QTRY_VERIFY_WITH_TIMEOUT(!window.compare_queue()->active(), 60000);
        const QVector<RunRecord>& runs = window.run_store()->runs();
        QCOMPARE(runs.size(), 2);
        QCOMPARE(QString::fromStdString(runs[0].experiment.policy), QString("float32"));
        QCOMPARE(runs[0].state, RunState::Completed);
        QVERIFY(!runs[0].experiment.recipe);
        QCOMPARE(runs[1].state, RunState::Completed);
        QVERIFY(runs[1].experiment.recipe == e.recipe);
    }
};

QTEST_MAIN(TestGuiRecipeEditor)
#include "tst_gui_recipe_editor.moc"
