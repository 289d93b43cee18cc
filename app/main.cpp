// The GUI entry point: `mantissa`. It creates the application and the main window; everything
// else lives in ui/ (widgets) and core/ (the engine).
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QTimer>
#include <cstdio>

#include "ui/runs/compare_queue.h"
#include "ui/runs/run_report.h"
#include "ui/training/event_loop_probe.h"
#include "ui/training/training_controller.h"
#include "ui/window/main_window.h"
#include "ui/window/theme.h"

int main(int argc, char** argv) {
    // The experiment presets are compiled into the static ui library; register them.
    Q_INIT_RESOURCE(resources);
    QApplication app(argc, argv);
    QApplication::setApplicationName("Mantissa");
    QApplication::setOrganizationName("Mantissa");
    QApplication::setApplicationVersion(MANTISSA_VERSION);
    // The icon the desktop shows (mantissa.sh installs the same SVG and mantissa.desktop).
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/mantissa.svg")));
    QGuiApplication::setDesktopFileName(QStringLiteral("mantissa"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Mantissa: a desktop studio for learning and comparing mixed-precision training.");
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption theme_option(
        "theme",
        "Appearance: system (default; follows the desktop), light or dark. "
        "The MANTISSA_THEME environment variable sets the same.",
        "theme", qEnvironmentVariable("MANTISSA_THEME", "system"));
    parser.addOption(theme_option);
    QCommandLineOption train_option("train", "Start training the experiment as soon as it opens.");
    parser.addOption(train_option);
    QCommandLineOption compare_option(
        "compare", "Run \"Compare policies\" at launch with these policies (comma-separated).",
        "policies");
    parser.addOption(compare_option);
    QCommandLineOption report_option(
        "report",
        "When the runs started by --train or --compare end, write their summaries as "
        "JSON to FILE and quit (for benchmarks and scripted demos).",
        "file");
    parser.addOption(report_option);
    QCommandLineOption lesson_option(
        "lesson",
        "Open the Lessons panel at this lesson (its number, or its file name without "
        ".json); with --train, run it.",
        "lesson");
    parser.addOption(lesson_option);
    parser.addPositionalArgument("experiment", "An experiment file (.json) to open.",
                                 "[experiment.json]");
    parser.process(app);
    mantissa::ui::ThemeChoice theme = mantissa::ui::ThemeChoice::System;
    if (!mantissa::ui::parse_theme(parser.value(theme_option), theme)) {
        std::fprintf(stderr, "mantissa: --theme '%s' is not one of system, light, dark\n",
                     qPrintable(parser.value(theme_option)));
        return 2;
    }
    mantissa::ui::apply_theme(app, theme);

    mantissa::ui::MainWindow window;
    window.show();
    if (!parser.positionalArguments().isEmpty())
        window.load_experiment_file(parser.positionalArguments().front());

    if (parser.isSet(report_option)) {
        const QString report = parser.value(report_option);
        // How late the event loop answers while training: the report's "ui" object.
        auto* probe = new mantissa::ui::EventLoopProbe(&window);
        QObject::connect(window.controller(), &mantissa::ui::TrainingController::state_changed,
                         probe, [&window, probe] {
                             if (window.controller()->is_running() && !probe->running())
                                 probe->start();
                         });
        // Queued: the queue's `finished` may arrive before the window has stored the last run's
        // summary (both listen to the controller), so write once every slot has run.
        auto write_and_quit = [&window, report, probe] {
            probe->stop();
            QTimer::singleShot(0, &window, [&window, report, probe] {
                const bool ok = mantissa::ui::write_run_report(*window.run_store(), report,
                                                               {{"ui", probe->summary()}});
                QCoreApplication::exit(ok ? 0 : 1);
            });
        };
        QObject::connect(window.compare_queue(), &mantissa::ui::CompareQueue::finished, &window,
                         write_and_quit);
        if (!parser.isSet(compare_option))
            QObject::connect(window.controller(), &mantissa::ui::TrainingController::state_changed,
                             &window, [&window, write_and_quit, seen = false]() mutable {
                                 if (window.controller()->is_running())
                                     seen = true;
                                 else if (seen)
                                     write_and_quit();
                             });
    }
    if (parser.isSet(lesson_option)) {
        if (!window.open_lesson(parser.value(lesson_option), parser.isSet(train_option))) {
            std::fprintf(stderr, "mantissa: --lesson '%s': no such lesson\n",
                         qPrintable(parser.value(lesson_option)));
            return 2;
        }
    } else if (parser.isSet(compare_option)) {
        const QStringList policies =
            parser.value(compare_option).split(QLatin1Char(','), Qt::SkipEmptyParts);
        QTimer::singleShot(0, &window, [&window, policies] { window.compare_policies(policies); });
    } else if (parser.isSet(train_option)) {
        QTimer::singleShot(0, &window, &mantissa::ui::MainWindow::train);
    }
    return QApplication::exec();
}
