// The GUI entry point: `mantissa`. It creates the application and the main window; everything
// else lives in ui/ (widgets) and core/ (the engine).
#include <QApplication>

#include "ui/main_window.h"

int main(int argc, char** argv) {
    // The experiment presets are compiled into the static ui library; register them.
    Q_INIT_RESOURCE(resources);
    QApplication app(argc, argv);
    QApplication::setApplicationName("Mantissa");
    QApplication::setOrganizationName("Mantissa");
    QApplication::setApplicationVersion(MANTISSA_VERSION);
    mantissa::ui::MainWindow window;
    window.show();
    if (argc > 1) window.load_experiment_file(QString::fromLocal8Bit(argv[1]));
    return QApplication::exec();
}
