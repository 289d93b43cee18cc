// Where the main window opens: where the user left it last time (a lecturer who moved it to the
// projector and maximised it finds it there again), else centred on the primary screen at a
// preferred size that the screen's free area bounds. Remembered in QSettings.
#pragma once

#include <QSize>

class QWidget;

namespace mantissa::ui {

// Restores the geometry remember_window_geometry() saved (its size, position, screen and
// maximised state; Qt moves it onto a screen when the one it was on is gone). With nothing saved,
// or a saved value that does not restore: `preferred`, bounded by the primary screen's available
// area less 40 pixels in height, centred there. Call before the window is shown.
void place_window(QWidget* window, QSize preferred);

// Saves the window's geometry for the next place_window(): the normal geometry and whether it was
// maximised. Call when the window closes, after leaving full screen (a presentation is not
// where the next launch should open).
void remember_window_geometry(const QWidget* window);

// The largest size a top-level window or dialog may take on `widget`'s screen (the primary one
// before it is shown): the available area less room for a window manager's frame and a panel it
// does not report (40 px).
QSize screen_room(const QWidget* widget);

// Bounds a dialog by screen_room() (its maximum size) and resizes it to its size hint within
// that, so its buttons are on the screen however much it holds; a scroll area inside takes up
// the difference. Call after the layout is complete.
void fit_to_screen(QWidget* dialog);

} // namespace mantissa::ui
