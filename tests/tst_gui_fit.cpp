// Issue 28's fit rule, checked as a lecturer meets it: the main window with each of its panels
// opened stays within the screen (a 1366x768 projector under Xvfb, the offscreen platform's
// screen in CI), and a size saved while the window was too big does not come back. Run with
// QT_QPA_PLATFORM=xcb on a 1366x768 display to check the projector case itself.
#include <QDockWidget>
#include <QGuiApplication>
#include <QInputDialog>
#include <QScreen>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

#include "ui/lessons/lessons_panel.h"
#include "ui/weights/weights_files.h"
#include "ui/window/main_window.h"
#include "ui/window/window_geometry.h"

using namespace mantissa;
using namespace mantissa::ui;

class TestGuiFit : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    // The widgets whose minimum width decides the window's, widest first (for the message).
    static QString widest_children(const QWidget* window) {
        QList<QPair<int, QString>> widths;
        for (const QWidget* w : window->findChildren<QWidget*>())
            if (w->isVisible() && !w->objectName().isEmpty())
                widths << qMakePair(w->minimumSizeHint().width(),
                                    w->objectName() + " " + w->metaObject()->className());
        std::sort(widths.begin(), widths.end(), [](auto a, auto b) { return a.first > b.first; });
        QStringList out;
        for (int i = 0; i < std::min<qsizetype>(8, widths.size()); ++i)
            out << QString("%1 %2").arg(widths[i].second).arg(widths[i].first);
        return out.join("; ");
    }

private slots:
    void initTestCase() {
        Q_INIT_RESOURCE(resources);
        QVERIFY(m_dir.isValid());
        qputenv("MANTISSA_RUNS_DIR", m_dir.path().toUtf8());
        qputenv("XDG_CONFIG_HOME", (m_dir.path() + "/config").toUtf8());
        QSettings().remove("window/geometry");
    }

    // Opening the Lessons panel widened the window from 1366 to 1388 px on a 1366x768 screen,
    // and the size was saved for the next launch.
    void lessonsPanelKeepsTheWindowOnTheScreen() {
        constexpr int kProjector = 1366; // the width every window must fit (issue 28)
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const QSize room = screen_room(&window);
        QVERIFY(window.open_lesson("1"));
        QTest::qWait(50);
        // On any screen: the window with its Lessons panel needs no more than a projector's
        // width. On a screen that wide (Xvfb at 1366x768): it is no wider than the screen.
        QVERIFY2(window.minimumSizeHint().width() <= kProjector,
                 qPrintable(QString("minimum %1 px; %2")
                                .arg(window.minimumSizeHint().width())
                                .arg(widest_children(&window))));
        // For the docs: MANTISSA_SCREENSHOT_DIR=docs with QT_QPA_PLATFORM=xcb at 1366x768.
        if (const QByteArray dir = qgetenv("MANTISSA_SCREENSHOT_DIR"); !dir.isEmpty())
            QVERIFY(window.grab().save(QString::fromLocal8Bit(dir) + "/lessons-open.png"));
        if (room.width() >= kProjector)
            QVERIFY2(window.width() <= room.width(),
                     qPrintable(QString("%1 px on a %2 px screen; %3")
                                    .arg(window.width())
                                    .arg(room.width())
                                    .arg(widest_children(&window))));
    }

    // The export's dtype question with each format's note (ONNX's is long): within the
    // projector's width and the screen, its buttons on it.
    void weightsDtypeDialogFits() {
        for (WeightsFormat format :
             {WeightsFormat::Safetensors, WeightsFormat::Onnx, WeightsFormat::Npz}) {
            const std::unique_ptr<QInputDialog> dialog = weights_dtype_dialog(nullptr, format);
            dialog->show();
            QVERIFY(QTest::qWaitForWindowExposed(dialog.get()));
            const QSize room = screen_room(dialog.get());
            QVERIFY2(dialog->width() <= std::min(1366, room.width()) &&
                         dialog->height() <= room.height(),
                     qPrintable(QString("%1x%2").arg(dialog->width()).arg(dialog->height())));
            if (const QByteArray dir = qgetenv("MANTISSA_SCREENSHOT_DIR");
                !dir.isEmpty() && format == WeightsFormat::Onnx)
                QVERIFY(dialog->grab().save(QString::fromLocal8Bit(dir) + "/export-onnx.png"));
        }
    }
};

QTEST_MAIN(TestGuiFit)
#include "tst_gui_fit.moc"
