// Light and dark palettes (see theme.h). The dark palette keeps contrast high enough for a
// projector; the run colours (Okabe-Ito) stay readable on both backgrounds.
#include "ui/window/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>
#include <algorithm>
#include <array>
#include <cmath>

namespace mantissa::ui {

namespace {

QPalette dark_palette() {
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x30), base(0x1e, 0x1f, 0x22), text(0xe8, 0xe8, 0xe8);
    const QColor disabled(0x80, 0x80, 0x80), highlight(0x3d, 0x8e, 0xd8);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3c, 0x40));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x36, 0x38, 0x3c));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xf0));
    p.setColor(QPalette::Highlight, highlight);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Mid, QColor(0x5a, 0x5c, 0x60));
    p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
    p.setColor(QPalette::Light, QColor(0x45, 0x47, 0x4b));
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

// Okabe-Ito: distinguishable under the common colour-vision deficiencies.
constexpr std::array<const char*, 8> kRunPalette = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                    "#CC79A7", "#56B4E9", "#F0E442", "#000000"};
// The same colours for a dark background: the sky blue first, white instead of black.
constexpr std::array<const char*, 8> kDarkRunPalette = {"#56B4E9", "#E69F00", "#009E73", "#D55E00",
                                                        "#CC79A7", "#F0E442", "#0072B2", "#F5F5F5"};

} // namespace

bool parse_theme(const QString& text, ThemeChoice& choice) {
    const QString t = text.trimmed().toLower();
    if (t == QLatin1String("system") || t.isEmpty())
        choice = ThemeChoice::System;
    else if (t == QLatin1String("light"))
        choice = ThemeChoice::Light;
    else if (t == QLatin1String("dark"))
        choice = ThemeChoice::Dark;
    else
        return false;
    return true;
}

void apply_theme(QApplication& app, ThemeChoice choice) {
    if (choice == ThemeChoice::System) return; // the platform theme's palette, light or dark
    app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    app.setPalette(choice == ThemeChoice::Dark ? dark_palette() : app.style()->standardPalette());
}

bool is_dark(const QPalette& palette) {
    return palette.color(QPalette::Window).lightnessF() < 0.5;
}

QColor run_color(int index, bool dark) {
    const auto& palette = dark ? kDarkRunPalette : kRunPalette;
    const int n = static_cast<int>(palette.size());
    if (index >= 0 && index < n)
        return QColor(QString::fromLatin1(palette[static_cast<std::size_t>(index)]));
    // Past the palette: golden-angle hue steps never land on the same hue twice. The lightness
    // alternates a little too, and stays readable on the background.
    const int k = std::max(0, index - n);
    const double hue = std::fmod(20.0 + 137.50776405 * k, 360.0);
    const double lightness = (dark ? 0.66 : 0.40) + (k % 2 ? 0.06 : 0.0);
    return QColor::fromHslF(static_cast<float>(hue / 360.0), 0.75f, static_cast<float>(lightness));
}

QColor blend(const QColor& a, const QColor& b, double t) {
    auto mix = [t](int x, int y) { return static_cast<int>(x + (y - x) * t + 0.5); };
    return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

} // namespace mantissa::ui
