// Light and dark appearance: the app follows the system palette, or a choice made with
// `--theme light|dark` / MANTISSA_THEME; charts read their colours from the active palette.
#pragma once

#include <QColor>
#include <QString>

class QApplication;
class QPalette;

namespace mantissa::ui {

enum class ThemeChoice { System, Light, Dark };

// "system", "light" or "dark" (case-insensitive); anything else is nullopt-like System + false.
bool parse_theme(const QString& text, ThemeChoice& choice);

// Applies the choice to the application palette (Fusion style for an explicit light or dark).
void apply_theme(QApplication& app, ThemeChoice choice);

// True when the palette shows light text on a dark background.
bool is_dark(const QPalette& palette);

// `a` moved towards `b` by `t` in [0, 1]: grid and axis colours between background and text.
QColor blend(const QColor& a, const QColor& b, double t);

// The colour of the `index`-th run (from 0): the 8 Okabe-Ito colours first (colour-blind safe),
// then hues 137.5° (the golden angle) apart, so no two of a session's runs share a colour.
QColor run_color(int index, bool dark);

} // namespace mantissa::ui
