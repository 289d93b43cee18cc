// Window geometry: one QSettings key holding QWidget::saveGeometry()'s bytes.
#include "ui/window/window_geometry.h"

#include <QGuiApplication>
#include <QRect>
#include <QScreen>
#include <QSettings>
#include <QWidget>

namespace mantissa::ui {

namespace {
const char* const kKey = "window/geometry";
// Room below the window for a panel or dock the available area does not report (some X11 set-ups).
constexpr int kBottomMargin = 40;
} // namespace

void place_window(QWidget* window, QSize preferred) {
    const QByteArray saved = QSettings().value(QLatin1String(kKey)).toByteArray();
    if (!saved.isEmpty() && window->restoreGeometry(saved)) {
        // A size saved on a bigger screen (or by an older version that let the window grow
        // past the screen) comes back bounded by this one.
        const QSize room = screen_room(window);
        if (!window->isMaximized() &&
            (window->width() > room.width() || window->height() > room.height()))
            window->resize(window->size().boundedTo(room));
        return;
    }
    const QScreen* screen = QGuiApplication::primaryScreen();
    if (!screen) {
        window->resize(preferred);
        return;
    }
    const QRect area = screen->availableGeometry();
    const QSize size = preferred.boundedTo(area.size() - QSize(0, kBottomMargin));
    window->resize(size);
    QRect frame(QPoint(0, 0), size);
    frame.moveCenter(area.center());
    window->move(frame.topLeft());
}

void remember_window_geometry(const QWidget* window) {
    QSettings().setValue(QLatin1String(kKey), window->saveGeometry());
}

QSize screen_room(const QWidget* widget) {
    const QScreen* screen =
        widget && widget->screen() ? widget->screen() : QGuiApplication::primaryScreen();
    if (!screen) return QSize(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX);
    return screen->availableGeometry().size() - QSize(0, kBottomMargin);
}

void fit_to_screen(QWidget* dialog) {
    const QSize room = screen_room(dialog);
    dialog->setMaximumSize(room);
    dialog->resize(dialog->sizeHint().boundedTo(room));
}

} // namespace mantissa::ui
