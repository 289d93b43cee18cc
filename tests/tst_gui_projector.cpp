// Projector-ready layout, offscreen: the main window, the Float Lab and the Plan view laid out at
// 1366×768 and 1280×720 cut no chart title, axis title, tick label, table header or plan label
// (measured with QFontMetrics against the space each gets, see clip_check.h); the probes catch a
// deliberately cramped chart, table and diagram; Presentation mode enlarges the charts and
// restores the layout; the charts follow a dark palette.
#include <QAction>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QIcon>
#include <QLineSeries>
#include <QProcess>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QValueAxis>
#include <cmath>

#include "clip_check.h"
#include "isolated_app_dirs.h"
#include "ui/charts/axis_window.h"
#include "ui/charts/chart_style.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/metric_chart.h"
#include "ui/float_lab/float_lab_tab.h"
#include "ui/plan_view/plan_diagram.h"
#include "ui/plan_view/plan_view.h"
#include "ui/runs/run_store.h"
#include "ui/window/main_window.h"
#include "ui/window/presentation_mode.h"
#include "ui/window/theme.h"

using namespace mantissa;
using namespace mantissa::ui;
using clip_check::Clip;

namespace {

// A finished run of `steps` steps with validation after each of 3 epochs, as a run reads back.
void add_run(RunStore& store, const std::string& name, const std::string& policy,
             std::int64_t steps, double ms) {
    Experiment e;
    e.name = name;
    e.policy = policy;
    const int id = store.add_run(e);
    const std::int64_t per_epoch = steps / 3;
    MemoryByCategory memory;
    memory[MemCategory::Weights] = 470'000;
    memory[MemCategory::Activations] = 660'000;
    memory[MemCategory::Gradients] = 600'000;
    memory[MemCategory::Data] = 54'880'000;
    store.set_started(id, QStringLiteral("CPU"), memory, per_epoch);
    QVector<StepRecord> records;
    for (std::int64_t i = 1; i <= steps; ++i) {
        StepRecord s;
        s.step = i;
        s.epoch = static_cast<int>((i - 1) / per_epoch) + 1;
        s.loss = 2.3 * std::exp(-static_cast<double>(i) / 150.0) + 0.1;
        s.accuracy = std::min(1.0, 1.02 - s.loss / 2.5);
        s.step_ms = ms + 0.3 * std::sin(i * 0.1);
        s.samples_per_s = 128 * 1000.0 / s.step_ms;
        s.loss_scale = 32768;
        s.memory = memory;
        records.append(s);
    }
    store.append_steps(id, records);
    for (int epoch = 1; epoch <= 3; ++epoch) {
        EpochRecord r;
        r.epoch = epoch;
        r.val_loss = 0.3 / epoch;
        r.val_accuracy = 0.9 + 0.02 * epoch;
        store.append_epoch(id, r);
    }
}

QTabWidget* tabs_holding(QWidget* root, QWidget* page) {
    for (QTabWidget* tabs : root->findChildren<QTabWidget*>())
        if (tabs->indexOf(page) >= 0) return tabs;
    return nullptr;
}

// Shows `page` in every tab widget on the way up from it.
void show_page(QWidget* root, QWidget* page) {
    for (QWidget* w = page; w && w != root; w = w->parentWidget())
        if (QTabWidget* tabs = tabs_holding(root, w)) tabs->setCurrentWidget(w);
}

// Lets the layouts, the charts' 30 ms rescale timers and the panel's 40 ms redraw settle.
void settle() {
    for (int i = 0; i < 4; ++i) {
        QApplication::processEvents();
        QTest::qWait(60);
    }
}

QVector<Clip> main_window_clips(MainWindow& window) {
    QVector<Clip> clips;
    ChartsPanel* charts = window.charts();
    for (const char* name : {"loss", "accuracy", "step_time", "loss_scale", "memory"})
        clips += clip_check::chart_clips(charts->qchart(QString::fromLatin1(name)),
                                         QString::fromLatin1(name) + QStringLiteral(" chart"));
    for (QTableView* table : window.findChildren<QTableView*>()) {
        if (!table->isVisible()) continue;
        const bool layers = table->objectName() == QLatin1String("layer_table");
        // The layer table shows every column but the (wide, last) settings editors.
        clips += clip_check::header_clips(table->horizontalHeader(),
                                          layers ? QStringLiteral("layer table")
                                                 : QStringLiteral("table ") + table->objectName(),
                                          layers, {2});
    }
    clips += clip_check::outside_clips(window.statusBar(), QStringLiteral("status bar"));
    clips += clip_check::button_clips(&window, QStringLiteral("main window"));
    return clips;
}

} // namespace

class TestGuiProjector : public QObject {
    Q_OBJECT

    IsolatedAppDirs m_dirs;

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); }

    void titleCandidatesDropDetailsFromTheEnd() {
        QCOMPARE(title_candidates("Step time · run #3: 70.2 ms, 1,795 samples/s"),
                 QStringList({"Step time · run #3: 70.2 ms, 1,795 samples/s",
                              "Step time · run #3: 70.2 ms", "Step time"}));
        QCOMPARE(title_candidates("Loss"), QStringList({"Loss"}));
        QCOMPARE(axis_title_candidates("accuracy (%)"), QStringList({"accuracy (%)", "%"}));
        QCOMPARE(axis_title_candidates("ms per step"), QStringList({"ms per step", "ms"}));
        QFont font;
        const QStringList c = title_candidates("Loss · validation dashed, train solid");
        QCOMPARE(fitted_title(c, font, 1e6), c.front());
        QCOMPARE(fitted_title(c, font, 1), QString("Loss"));
    }

    void shortAxesGetFewerTicks() {
        // Five ticks where there is room; a two-label axis still spans the data.
        const AxisWindow roomy = linear_window(0.1, 2.4, -INFINITY, INFINITY);
        QVERIFY((roomy.hi - roomy.lo) / roomy.step + 1 > 3);
        const AxisWindow cramped = linear_window(0.1, 2.4, -INFINITY, INFINITY, 2);
        QVERIFY2((cramped.hi - cramped.lo) / cramped.step + 1 <= 2.01,
                 qPrintable(
                     QString("%1..%2 step %3").arg(cramped.lo).arg(cramped.hi).arg(cramped.step)));
        QVERIFY(cramped.lo <= 0.1 && cramped.hi >= 2.4);
        const double step = fitted_interval(0, 1500, 3, 1.0);
        QVERIFY(std::ceil(1500 / step) + 1 <= 3);
        QCOMPARE(tick_capacity(10, 33), 2);
        QCOMPARE(tick_capacity(200, 33), 6);
    }

    // The probes must see clipping where there is some, or their silence below means nothing.
    void probesDetectClipping() {
        // A plain QChart: MetricChart would fit its titles, which is what is under test later.
        auto* chart = new QChart;
        style_chart(chart, QStringLiteral("An unusually long chart title for a very small chart"));
        auto* series = new QLineSeries;
        series->append({QPointF(0, 0), QPointF(1500, 2.5)});
        chart->addSeries(series);
        auto* x = new QValueAxis;
        auto* y = new QValueAxis;
        style_axis(x, QStringLiteral("step"));
        style_axis(y, QStringLiteral("a long vertical axis title that cannot fit"));
        y->setTickCount(9);
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        series->attachAxis(x);
        series->attachAxis(y);
        QChartView chart_view(chart);
        chart_view.resize(260, 140);
        chart_view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart_view));
        settle();
        const QVector<Clip> chart_clips = clip_check::chart_clips(chart, "small chart");
        QVERIFY2(!chart_clips.isEmpty(), "a 260×140 chart with a long title reported no clipping");
        bool title = false, axis = false, ticks = false;
        for (const Clip& c : chart_clips) {
            title = title || c.where.endsWith(QStringLiteral(": title"));
            axis = axis || c.where.endsWith(QStringLiteral(": y title"));
            ticks = ticks || (c.where.endsWith(QStringLiteral("elided")) && c.text.startsWith('.'));
        }
        QVERIFY2(title && axis && ticks, qPrintable(clip_check::describe(chart_clips)));

        QTableWidget table(2, 3);
        table.setHorizontalHeaderLabels({"Output shape", "Parameters", "dtype"});
        table.horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
        for (int c = 0; c < 3; ++c) table.horizontalHeader()->resizeSection(c, 30);
        table.resize(60, 100);
        table.show();
        QVERIFY(QTest::qWaitForWindowExposed(&table));
        const QVector<Clip> header = clip_check::header_clips(table.horizontalHeader(), "t", true);
        QVERIFY2(header.size() >= 3, qPrintable(clip_check::describe(header)));

        QWidget holder; // a parent without a layout: the row gets less than its minimum
        holder.resize(200, 60);
        auto* row = new QWidget(&holder);
        auto* buttons = new QHBoxLayout(row);
        for (const char* caption : {"+ Dense", "+ Conv2D", "+ MaxPool2D", "+ Activation"}) {
            auto* b = new QToolButton;
            b->setText(QString::fromLatin1(caption));
            buttons->addWidget(b);
        }
        row->setGeometry(0, 0, 120, 40);
        holder.show();
        QVERIFY(QTest::qWaitForWindowExposed(&holder));
        QVERIFY2(!clip_check::button_clips(&holder, "row").isEmpty(),
                 "four tool buttons in 120 pixels reported no squeezed caption");

        PlanView view;
        Experiment e;
        e.policy = "mixed_float16";
        e.model = ModelSpec{};
        LayerSpec flatten, dense, out;
        flatten.type = LayerType::Flatten;
        dense.type = LayerType::Dense;
        dense.units = 64;
        out.type = LayerType::Dense;
        out.units = 10;
        e.model.layers = {flatten, dense, out};
        view.set_experiment(e);
        QVERIFY(view.has_plan());
        QVERIFY2(!clip_check::plan_clips(view.diagram(), 120).isEmpty(),
                 "a 120-pixel plan diagram reported no clipped label");
    }

    void windowWorksDownTo1280x720() {
        MainWindow window;
        const QSize min = window.minimumSizeHint().expandedTo(window.minimumSize());
        QVERIFY2(min.width() <= 1280 && min.height() <= 720,
                 qPrintable(QString("minimum %1×%2").arg(min.width()).arg(min.height())));
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        settle();
        QCOMPARE(window.size(), QSize(1280, 720));
    }

    void mainWindowReadable_data() {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1366x768") << QSize(1366, 768);
        QTest::newRow("1280x720") << QSize(1280, 720);
    }
    void mainWindowReadable() {
        QFETCH(QSize, size);
        MainWindow window;
        add_run(*window.run_store(), "mlp-small", "float32", 1500, 1.6);
        add_run(*window.run_store(), "mlp-small", "mixed_float16", 1500, 2.0);
        add_run(*window.run_store(), "cnn", "mixed_float16", 150, 70.2);
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        show_page(&window, window.charts());
        window.charts()->redraw();
        settle();
        QCOMPARE(window.size(), size);
        const QVector<Clip> clips = main_window_clips(window);
        QVERIFY2(clips.isEmpty(), qPrintable(clip_check::describe(clips)));
    }

    void floatLabFits_data() { mainWindowReadable_data(); }
    void floatLabFits() {
        QFETCH(QSize, size);
        MainWindow window;
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        show_page(&window, window.float_lab());
        settle();
        QVector<Clip> clips =
            clip_check::scroll_clips(window.float_lab()->findChild<QScrollArea*>(), "Float Lab");
        for (QTableView* table : window.float_lab()->findChildren<QTableView*>())
            clips += clip_check::header_clips(table->horizontalHeader(), "Float Lab table", false);
        QVERIFY2(clips.isEmpty(), qPrintable(clip_check::describe(clips)));
    }

    void planLabelsFit_data() { mainWindowReadable_data(); }
    void planLabelsFit() {
        QFETCH(QSize, size);
        MainWindow window;
        // A CNN under mixed_float16: long names, activation casts and weight casts.
        Experiment e = window.current_experiment();
        e.policy = "mixed_float16";
        LayerSpec conv, pool, flatten, dense, out, softmax;
        conv.type = LayerType::Conv2D;
        conv.filters = 32;
        conv.kernel[0] = conv.kernel[1] = 3;
        conv.activation = Activation::Relu;
        pool.type = LayerType::MaxPool2D;
        pool.pool[0] = pool.pool[1] = 2;
        flatten.type = LayerType::Flatten;
        dense.type = LayerType::Dense;
        dense.units = 128;
        dense.activation = Activation::Gelu;
        out.type = LayerType::Dense;
        out.units = 10;
        softmax.type = LayerType::Activation;
        softmax.activation = Activation::Softmax;
        softmax.dtype = "float32";
        e.model.layers = {conv, pool, flatten, dense, out, softmax};
        window.set_experiment(e);
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        show_page(&window, window.plan_view());
        settle();
        PlanDiagram* diagram = window.plan_view()->diagram();
        QVERIFY(window.plan_view()->has_plan());
        QVERIFY(diagram->cast_markers() > 0);
        bool tagged = false;
        for (const PlanLabel& l : diagram->labels())
            tagged = tagged || l.kind == PlanLabel::Kind::WeightsTag;
        QVERIFY2(tagged, "no layer shows its weight casts");
        QVector<Clip> clips = clip_check::plan_clips(diagram, diagram->width());
        auto* scroll = qobject_cast<QScrollArea*>(diagram->parentWidget()->parentWidget());
        QVERIFY(scroll);
        if (diagram->width() > scroll->viewport()->width())
            clips.append({"plan diagram wider than its view",
                          {},
                          double(diagram->width()),
                          double(scroll->viewport()->width())});
        for (QTableView* table : window.plan_view()->findChildren<QTableView*>())
            clips += clip_check::header_clips(table->horizontalHeader(), "plan steps", false);
        QVERIFY2(clips.isEmpty(), qPrintable(clip_check::describe(clips)));
    }

    // The titles say "validation dashed": the validation series is a dashed line with small
    // dots on its epochs (large dots hid the dashes), the training line is solid.
    void validationIsDashed() {
        RunStore store;
        add_run(store, "mlp-small", "float32", 600, 1.6);
        ChartsPanel panel(&store);
        panel.redraw();
        for (const char* name : {"loss", "accuracy"}) {
            QVERIFY(panel.chart(name)->full_title().contains("validation dashed"));
            int dashed = 0, solid = 0;
            for (QAbstractSeries* s : panel.qchart(name)->series()) {
                auto* line = qobject_cast<QLineSeries*>(s);
                if (!line) continue;
                if (line->pen().style() == Qt::DashLine) {
                    ++dashed;
                    QVERIFY(line->pointsVisible());
                    QVERIFY2(line->markerSize() <= 6,
                             qPrintable(QString::number(line->markerSize())));
                } else {
                    ++solid;
                }
            }
            QCOMPARE(dashed, 1);
            QVERIFY(solid >= 1);
        }
    }

    void presentationModeEnlargesAndRestores() {
        MainWindow window;
        add_run(*window.run_store(), "mlp-small", "float32", 600, 1.6);
        window.resize(1366, 768);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        show_page(&window, window.float_lab());
        settle();
        QAction* action = window.findChild<QAction*>("presentation_mode");
        QVERIFY(action);
        QVERIFY(action->isCheckable());
        QCOMPARE(action->shortcut(), QKeySequence(Qt::Key_F11));
        QChart* loss = window.charts()->qchart("loss");
        const double title_pt = loss->titleFont().pointSizeF();
        auto* left = window.findChild<QTabWidget*>();
        QWidget* editor_tabs = nullptr; // the Model / Settings tabs beside the charts
        for (QTabWidget* t : window.findChildren<QTabWidget*>())
            if (t->tabText(0) == QLatin1String("Model")) editor_tabs = t;
        QVERIFY(left && editor_tabs);
        QVERIFY(editor_tabs->isHidden() == false);

        action->trigger();
        settle();
        QVERIFY(window.presentation()->active());
        QVERIFY(window.charts()->isVisible()); // the Float Lab page gave way to the charts
        QVERIFY(editor_tabs->isHidden());
        QVERIFY(loss->titleFont().pointSizeF() > title_pt * 1.2);
        bool thick = false;
        for (QAbstractSeries* s : loss->series())
            if (auto* line = qobject_cast<QLineSeries*>(s))
                thick = thick || line->pen().widthF() >= 3.5;
        QVERIFY(thick);

        action->trigger();
        settle();
        QVERIFY(!window.presentation()->active());
        QVERIFY(!editor_tabs->isHidden());
        QCOMPARE(loss->titleFont().pointSizeF(), title_pt);
        QVERIFY(window.float_lab()->isVisible()); // back on the page it was on
        QVERIFY(!(window.windowState() & Qt::WindowFullScreen));
    }

    // mantissa.sh's install_desktop_entry, run on its own against a temporary HOME: it writes
    // the entry (Exec = the GUI, quoted) and the icon, rewrites nothing the second time, and
    // returns 0 even where it cannot write.
    void desktopEntryInstalls() {
        QTemporaryDir home;
        QVERIFY(home.isValid());
        const QString script = QStringLiteral(
            "set -eu; ROOT=\"$1\"; "
            "eval \"$(sed -n '/^install_desktop_entry()/,/^}/p' \"$ROOT/mantissa.sh\")\"; "
            "install_desktop_entry build/dev/ui/mantissa");
        auto run = [&](const QString& data_home) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("HOME", home.path());
            env.insert("XDG_DATA_HOME", data_home);
            p.setProcessEnvironment(env);
            p.start("bash", {"-c", script, "bash", MANTISSA_SOURCE_DIR});
            return p.waitForFinished(10000) && p.exitStatus() == QProcess::NormalExit ? p.exitCode()
                                                                                      : -1;
        };
        const QString data = home.path() + "/share";
        QCOMPARE(run(data), 0);
        QFile entry(data + "/applications/mantissa.desktop");
        QVERIFY(entry.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(entry.readAll());
        entry.close();
        QVERIFY2(text.contains(
                     QStringLiteral("Exec=\"%1/build/dev/ui/mantissa\"").arg(MANTISSA_SOURCE_DIR)),
                 qPrintable(text));
        QVERIFY(text.contains("Icon=mantissa"));
        const QString icon = data + "/icons/hicolor/scalable/apps/mantissa.svg";
        QVERIFY(QFile::exists(icon));
        const QDateTime written = QFileInfo(entry).lastModified();
        QTest::qWait(20);
        QCOMPARE(run(data), 0);
        QCOMPARE(QFileInfo(entry).lastModified(), written); // idempotent
        // A data folder that is a file: nothing can be written, and the launch goes on.
        QFile blocker(home.path() + "/blocked");
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        QCOMPARE(run(home.path() + "/blocked"), 0);
        // The icon the window and the entry use is a valid SVG in the resources.
        QVERIFY(!QIcon(":/icons/mantissa.svg").pixmap(64, 64).isNull());
    }

    void chartsFollowADarkPalette() {
        const QPalette saved = QApplication::palette();
        QPalette dark = saved;
        dark.setColor(QPalette::Window, QColor(0x2b, 0x2d, 0x30));
        dark.setColor(QPalette::Base, QColor(0x1e, 0x1f, 0x22));
        dark.setColor(QPalette::WindowText, QColor(0xe8, 0xe8, 0xe8));
        QApplication::setPalette(dark);
        {
            MetricChart chart("Loss", "loss");
            QVERIFY(chart.chart()->backgroundBrush().color().lightnessF() < 0.3);
            QVERIFY(chart.chart()->titleBrush().color().lightnessF() > 0.7);
            QCOMPARE(chart.chart()->theme(), QChart::ChartThemeDark);
            for (QAbstractAxis* axis : chart.chart()->axes())
                QVERIFY(axis->labelsColor().lightnessF() > 0.7);
        }
        QApplication::setPalette(saved);
        MetricChart light("Loss", "loss");
        QCOMPARE(light.chart()->theme(),
                 is_dark(saved) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    }
};

QTEST_MAIN(TestGuiProjector)
#include "tst_gui_projector.moc"
