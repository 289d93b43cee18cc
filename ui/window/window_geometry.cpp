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
    if (!saved.isEmpty() && window->restoreGeometry(saved)) return;
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

} // namespace mantissa::ui
