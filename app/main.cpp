// The GUI entry point: `mantissa`. It creates the application and the main window; everything
// else lives in ui/ (widgets) and core/ (the engine).
#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

#include "ui/main_window.h"
#include "ui/theme.h"

int main(int argc, char** argv) {
    // The experiment presets are compiled into the static ui library; register them.
    Q_INIT_RESOURCE(resources);
    QApplication app(argc, argv);
    QApplication::setApplicationName("Mantissa");
    QApplication::setOrganizationName("Mantissa");
    QApplication::setApplicationVersion(MANTISSA_VERSION);

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
    return QApplication::exec();
}
