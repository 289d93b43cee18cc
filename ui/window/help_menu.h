// The Help menu: About Mantissa, the lessons (each opens in the Lessons panel), a list of the
// keyboard shortcuts read from the window's own actions, and what has run on a GPU so far.
#pragma once

#include <QString>
#include <QStringList>
#include <functional>

class QMainWindow;
class QMenu;

namespace mantissa::ui {

// Adds "&Help" to `window`'s menu bar. `lesson_titles` in order; choosing one calls
// `open_lesson` with its number (from 1).
QMenu* add_help_menu(QMainWindow* window, const QStringList& lesson_titles,
                     const std::function<void(int)>& open_lesson);

// "Ctrl+O<TAB>Open…" lines for every action of `window` that has a shortcut, then the layer
// editor's keys; no links. Built from the actions, so it cannot fall out of date.
QStringList keyboard_shortcuts(const QMainWindow* window);

// Plain words on which engines have run where (the About box and Help › What has run on a GPU).
QString gpu_history_text();

} // namespace mantissa::ui
