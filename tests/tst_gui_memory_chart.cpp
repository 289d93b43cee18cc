// The memory chart teaches the policy's memory effect: by default it stacks only the model's own
// categories (the ~55 MiB of resident MNIST would dwarf them), the dataset is a bar of its own
// behind a checkbox, hovering shows the bytes, and lesson 2's "no master weights" shows.
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QCheckBox>
#include <QHorizontalStackedBarSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QTest>

#include "core/train/lesson.h"
#include "ui/charts/memory_chart.h"
#include "ui/lessons/lesson_library.h"
#include "ui/plan_view/plan_digest.h"
#include "ui/runs/model_memory.h"
#include "ui/runs/run_record.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

constexpr std::size_t kMnistBytes = 54'880'000; // what the CPU engine keeps resident (uint8)

// A run of lesson 2's experiment `label` with the memory its compiled plan really has, plus the
// resident dataset, as the trainer reports it.
RunRecord lesson2_run(int id, const std::string& label) {
    const LessonLibrary library = load_lesson_library();
    for (const Lesson& lesson : library.lessons) {
        if (lesson.id != "02-pure-float16-fails") continue;
        for (const LessonExperiment& e : lesson.experiments) {
            if (e.label != label) continue;
            RunRecord run;
            run.id = id;
            run.name = QString::fromStdString(label);
            run.experiment = e.experiment;
            run.memory = preview_plan(e.experiment).memory;
            run.memory[MemCategory::Data] = kMnistBytes;
            return run;
        }
    }
    qFatal("lesson 2 has no run '%s'", label.c_str());
    return {};
}

} // namespace

class TestGuiMemoryChart : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); }

    void modelCategoriesByDefaultDatasetOnRequest() {
        const RunRecord pure = lesson2_run(1, "float16 (pure)");
        const RunRecord mixed = lesson2_run(2, "mixed_float16");
        MemoryChart chart;
        chart.resize(700, 260);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.show_runs({&pure, &mixed});

        // Default: one bar per run, no dataset anywhere, the dataset's legend entry hidden.
        QVERIFY(!chart.dataset_shown());
        QVERIFY(!chart.dataset_box()->isChecked());
        QCOMPARE(chart.bar_labels().size(), 2);
        for (double v : chart.values(MemCategory::Data)) QCOMPARE(v, 0.0);
        auto* series = qobject_cast<QHorizontalStackedBarSeries*>(chart.chart()->series().value(0));
        QVERIFY(series);
        const QList<QLegendMarker*> markers = chart.chart()->legend()->markers(series);
        QVERIFY(!markers[static_cast<int>(MemCategory::Data)]->isVisible());
        QVERIFY(markers[static_cast<int>(MemCategory::Master)]->isVisible());

        // Lesson 2's point: the mixed run (top bar) has master weights, pure float16 none, and
        // the master segment is a visible share of its bar, not a sliver beside 55 MiB of data.
        // The bars list the latest run first: mixed is bar 0, pure float16 bar 1.
        QVERIFY(chart.bar_labels()[0].contains("mixed_float16"));
        QCOMPARE(chart.bar_labels()[1], QString("#1 float16")); // the policy: what the bars compare
        const QList<double> master = chart.values(MemCategory::Master);
        QCOMPARE(master[1], 0.0);
        QVERIFY(master[0] > 0);
        double mixed_total = 0;
        for (MemCategory c : model_categories()) mixed_total += chart.values(c)[0];
        QVERIFY2(master[0] / mixed_total > 0.05,
                 qPrintable(QString::number(master[0] / mixed_total)));
        QVERIFY(chart.tooltip(1, MemCategory::Master).contains("no master weights"));
        QVERIFY(!chart.tooltip(0, MemCategory::Master).contains("no master weights"));
        QVERIFY(chart.tooltip(0, MemCategory::Weights).contains("<b>weights</b>"));
        QVERIFY(chart.chart()->title().contains("largest model"));

        // The checkbox adds the dataset as a bar of its own, at the bottom.
        chart.dataset_box()->click();
        QVERIFY(chart.dataset_shown());
        QCOMPARE(chart.bar_labels().size(), 3);
        QCOMPARE(chart.bar_labels()[0], QString("resident dataset"));
        const QList<double> data = chart.values(MemCategory::Data);
        QVERIFY(data[0] > 0);
        QCOMPARE(data[1], 0.0); // the runs' bars still hold only the model
        QCOMPARE(data[2], 0.0);
        QVERIFY(markers[static_cast<int>(MemCategory::Data)]->isVisible());
        QVERIFY(chart.tooltip(0, MemCategory::Data).contains("Resident dataset"));
        chart.set_dataset_shown(false);
        QVERIFY(!chart.dataset_box()->isChecked());
        QCOMPARE(chart.bar_labels().size(), 2);
        QCOMPARE(chart.drawn_points(1), 5); // weights, activations, gradients, optimizer, workspace
    }

    // Issue 28: with six runs the axis elided "#5 mixed_float16" to "…" on two rows and left
    // the rest blank; beyond three bars each is labelled by its number, which the run legend
    // above the charts names, and the tooltip by its run.
    void manyRunsAreLabelledByNumber() {
        std::vector<RunRecord> runs;
        for (int id = 1; id <= 6; ++id) runs.push_back(lesson2_run(id, "mixed_float16"));
        QVector<const RunRecord*> shown;
        for (const RunRecord& r : runs) shown.append(&r);
        MemoryChart chart;
        chart.resize(700, 260);
        chart.show_runs(shown.mid(0, 3));
        QCOMPARE(chart.bar_labels()[0], QString("#3 mixed_float16"));
        chart.show_runs(shown);
        QCOMPARE(chart.bar_labels(),
                 QStringList({"#6", "#5", "#4", "#3", "#2", "#1"})); // the latest run on top
        QVERIFY(chart.tooltip(0, MemCategory::Weights).contains("mixed_float16"));
    }

    // Issue 28: opening a lesson with none of its runs yet left the previous runs' labels on the
    // axis over empty rows (the "no runs" placeholder was a null QString, which the axis drops
    // without redrawing). How many rows the plot holds: its centre is at row (rows - 1) / 2.
    void changedRunsRebuildTheRows() {
        const RunRecord pure = lesson2_run(1, "float16 (pure)");
        const RunRecord mixed = lesson2_run(2, "mixed_float16");
        const RunRecord next_lesson = lesson2_run(3, "mixed_float16");
        MemoryChart chart;
        chart.resize(700, 260);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QAbstractSeries* series = chart.chart()->series().value(0);
        auto* axis = qobject_cast<QBarCategoryAxis*>(chart.chart()->axes(Qt::Vertical).value(0));
        QVERIFY(series && axis);
        const auto centre_row = [&] {
            QTest::qWait(50); // the chart lays itself out again
            return chart.chart()->mapToValue(chart.chart()->plotArea().center(), series).y();
        };

        chart.show_runs({&pure, &mixed});
        QCOMPARE(axis->categories(), QStringList({"#2 mixed_float16", "#1 float16"}));
        double row = centre_row();
        QVERIFY2(qAbs(row - 0.5) < 0.1, qPrintable(QString::number(row))); // two rows

        chart.show_runs({}); // the lesson opened: none of its runs yet
        QVERIFY(chart.bar_labels().isEmpty());
        QCOMPARE(axis->categories(), QStringList({""})); // one blank row
        row = centre_row();
        QVERIFY2(qAbs(row) < 0.1, qPrintable(QString::number(row)));

        chart.show_runs({&next_lesson}); // its first run
        QCOMPARE(axis->categories(), QStringList({"#3 mixed_float16"}));
        row = centre_row();
        QVERIFY2(qAbs(row) < 0.1, qPrintable(QString::number(row)));
    }

    void tooltipListsEveryModelCategory() {
        MemoryByCategory m;
        m[MemCategory::Weights] = 2 * 1024 * 1024;
        m[MemCategory::Data] = kMnistBytes;
        const QString text = memory_tooltip("run", "float16", m, MemCategory::Weights);
        for (MemCategory c : model_categories())
            QVERIFY2(text.contains(mem_category_name(c)), mem_category_name(c));
        QVERIFY(text.contains("2.00 MiB"));
        QVERIFY(text.contains("no master weights"));
        QVERIFY(text.contains("resident dataset beside it"));
        QVERIFY(!memory_tooltip("run", "float32", m, MemCategory::Weights)
                     .contains("no master weights")); // float32 has nothing to keep a copy of
    }
};

QTEST_MAIN(TestGuiMemoryChart)
#include "tst_gui_memory_chart.moc"
