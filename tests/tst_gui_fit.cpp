// Issue 28's fit rule, checked as a lecturer meets it: the main window with each of its panels
// opened stays within the screen (a 1366x768 projector under Xvfb, the offscreen platform's
// screen in CI), a size saved while the window was too big does not come back, and every dialog
// an action of the main window opens (found by triggering each one, so a new dialog is covered)
// fits the screen with a window manager's frame; ctest runs it on 1366x768 and 1280x720 offscreen
// screens besides the platform's default. Run with QT_QPA_PLATFORM=xcb on a 1366x768 display to
// check the projector case itself.
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDockWidget>
#include <QGuiApplication>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QScreen>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolBar>

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

    // What a dialog needs beyond its screen's room (the available area less a window manager's
    // frame and panel, 40 px), or empty. ctest runs this suite on a 1366x768 and a 1280x720
    // offscreen screen (gui_fit_1366x768, gui_fit_1280x720), so dialogs that size themselves by
    // their screen are checked on each projector.
    static QString too_big_for_the_screen(const QWidget* dialog) {
        const QSize needs = dialog->minimumSizeHint().expandedTo(dialog->minimumSize());
        const QSize room = screen_room(dialog);
        const QRect screen = dialog->screen()->availableGeometry();
        QString problem;
        if (needs.width() > room.width() || needs.height() > room.height())
            problem = QString("needs at least %1x%2, the %3x%4 screen leaves %5x%6")
                          .arg(needs.width())
                          .arg(needs.height())
                          .arg(screen.width())
                          .arg(screen.height())
                          .arg(room.width())
                          .arg(room.height());
        else if (!screen.contains(dialog->geometry())) // the frame is in the 40 px above
            problem = QString("%1x%2+%3+%4 leaves the %5x%6 screen")
                          .arg(dialog->geometry().width())
                          .arg(dialog->geometry().height())
                          .arg(dialog->geometry().x())
                          .arg(dialog->geometry().y())
                          .arg(screen.width())
                          .arg(screen.height());
        if (!problem.isEmpty()) return problem;
        // A one-line label narrower than its text is cut where it could have wrapped.
        for (const QLabel* label : dialog->findChildren<QLabel*>()) {
            if (!label->isVisible() || label->wordWrap() || label->text().isEmpty()) continue;
            if (label->sizeHint().width() > label->width() + 1)
                return QString("the label '%1' is cut at %2 px (it needs %3): let it wrap")
                    .arg(label->text().left(60))
                    .arg(label->width())
                    .arg(label->sizeHint().width());
        }
        return {};
    }

    static QSet<QWidget*> visible_top_levels() {
        QSet<QWidget*> out;
        for (QWidget* w : QApplication::topLevelWidgets())
            if (w->isVisible()) out.insert(w);
        return out;
    }

    static void collect_actions(const QList<QAction*>& from, QList<QAction*>& out) {
        for (QAction* a : from) {
            if (a->menu()) {
                // A lesson replaces the experiment and trains; Recent files open documents.
                const QString title = a->menu()->title();
                if (!title.contains("Lessons") && !title.contains("Recent"))
                    collect_actions(a->menu()->actions(), out);
            } else if (!a->isSeparator() && !out.contains(a)) {
                out << a;
            }
        }
    }

private slots:
    void initTestCase() {
        Q_INIT_RESOURCE(resources);
        QVERIFY(m_dir.isValid());
        qputenv("MANTISSA_RUNS_DIR", m_dir.path().toUtf8());
        qputenv("XDG_CONFIG_HOME", (m_dir.path() + "/config").toUtf8());
        QSettings().remove("window/geometry");
    }

    // Issue 28: on a first launch the layer table's settings column was cut to "Se" and the
    // activations lay behind horizontal scrolling. On a 1366-px projector (gui_fit_1366x768) the
    // editor opens wide enough for the default experiment's settings editors, whole and in view.
    void firstLaunchShowsTheLayerSettings() {
        QSettings().remove("window/geometry"); // a first launch
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::qWait(50);
        if (screen_room(&window).width() < 1366)
            QSKIP("a first launch on a 1366-px screen: run as gui_fit_1366x768");
        auto* table = window.findChild<QTableWidget*>("layer_table");
        QVERIFY(table && table->isVisible());
        QVERIFY(!table->horizontalScrollBar()->isVisible());
        int activations = 0;
        for (int row = 0; row < table->rowCount(); ++row) {
            QWidget* fields = table->cellWidget(row, 2); // the settings column
            QVERIFY(fields);
            QVERIFY2(fields->width() >= fields->sizeHint().width(),
                     qPrintable(QString("row %1: %2 px of %3")
                                    .arg(row)
                                    .arg(fields->width())
                                    .arg(fields->sizeHint().width())));
            for (QComboBox* combo : fields->findChildren<QComboBox*>("activation")) {
                const QRect shown(combo->mapTo(table->viewport(), QPoint(0, 0)), combo->size());
                QVERIFY2(table->viewport()->rect().contains(shown),
                         qPrintable(QString("row %1: the activation at x %2..%3, the view %4 wide")
                                        .arg(row)
                                        .arg(shown.left())
                                        .arg(shown.right())
                                        .arg(table->viewport()->width())));
                ++activations;
            }
        }
        QVERIFY(activations > 0);
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
        // On each projector (gui_fit_1366x768, gui_fit_1280x720): the window with its Lessons
        // panel can be as small as the screen's room, in both directions.
        const QSize needs = window.minimumSizeHint();
        if (room.width() >= 1280) // a projector's screen, not the platform's 800x800 default
            QVERIFY2(needs.width() <= room.width() && needs.height() <= room.height(),
                     qPrintable(QString("needs %1x%2 on a %3x%4 room; %5")
                                    .arg(needs.width())
                                    .arg(needs.height())
                                    .arg(room.width())
                                    .arg(room.height())
                                    .arg(widest_children(&window))));
        if (room.width() >= kProjector)
            QVERIFY2(window.width() <= room.width(),
                     qPrintable(QString("%1 px on a %2 px screen; %3")
                                    .arg(window.width())
                                    .arg(room.width())
                                    .arg(widest_children(&window))));
    }

    // Every action of the menus and the toolbar that opens a dialog (modal or not): the dialog's
    // minimum size fits the screen less a frame, and it opens on the screen, so its buttons are
    // reachable (on each projector: see too_big_for_the_screen).
    // Actions that train, quit, go full screen or hand a folder to the desktop are left out.
    void everyDialogFitsBothProjectors() {
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QList<QAction*> actions;
        collect_actions(window.menuBar()->actions(), actions);
        for (QToolBar* bar : window.findChildren<QToolBar*>())
            collect_actions(bar->actions(), actions);
        const QStringList skipped = {"Quit",         "Train",       "Pause", "Stop",
                                     "Presentation", "Full Screen", "Folder"};
        QStringList problems, opened;
        for (QAction* action : actions) {
            const QString name = action->text().remove('&');
            if (!action->isEnabled() ||
                std::any_of(skipped.begin(), skipped.end(),
                            [&](const QString& s) { return name.contains(s); }))
                continue;
            const QSet<QWidget*> before = visible_top_levels();
            auto inspect = [&](QWidget* dialog) {
                opened << name;
                const QString problem = too_big_for_the_screen(dialog);
                if (!problem.isEmpty())
                    problems << QString("%1 (%2): %3")
                                    .arg(name, dialog->metaObject()->className(), problem);
                dialog->close();
                if (auto* d = qobject_cast<QDialog*>(dialog)) d->reject();
            };
            // A modal dialog runs its own event loop inside trigger(): the timer finds it there.
            QTimer poll;
            poll.setInterval(25);
            connect(&poll, &QTimer::timeout, this, [&] {
                if (QWidget* modal = QApplication::activeModalWidget()) inspect(modal);
            });
            poll.start();
            action->trigger();
            QTest::qWait(50);
            poll.stop();
            for (QWidget* w : visible_top_levels()) // non-modal ones it left open
                if (!before.contains(w) && w != &window) inspect(w);
        }
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        // The dialogs a lecturer meets first are among those checked.
        for (const char* expected : {"Compare policies", "Export Chart", "About Mantissa"})
            QVERIFY2(opened.filter(expected).size() > 0,
                     qPrintable(QString("%1 did not open a dialog; opened: %2")
                                    .arg(expected, opened.join(", "))));
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
