// The Float Lab's shared look (see lab_style.h). Colours come in a light and a dark variant so
// the lab follows ui/window/theme's palette; numbers use C-locale 'g' formatting like the CLI.
#include "ui/float_lab/lab_style.h"

#include <QFont>
#include <QLocale>
#include <QPalette>
#include <QRegularExpression>
#include <charconv>
#include <cmath>

#include "ui/window/theme.h"

namespace mantissa::ui::lab {

QColor field_colour(BitField field, const QPalette& palette) {
    const bool dark = is_dark(palette);
    switch (field) {
    case BitField::Sign:
        return dark ? QColor(0xff, 0x8a, 0x50) : QColor(0xD5, 0x5E, 0x00); // vermillion
    case BitField::Exponent:
        return dark ? QColor(0x56, 0xB4, 0xE9) : QColor(0x00, 0x72, 0xB2); // blue
    case BitField::Mantissa:
        return dark ? QColor(0x3d, 0xd6, 0xa3) : QColor(0x00, 0x9E, 0x73); // bluish green
    }
    return palette.color(QPalette::Text);
}

QColor overflow_colour(const QPalette& palette) {
    return is_dark(palette) ? QColor(0xff, 0x6b, 0x6b) : QColor(0xc6, 0x28, 0x28);
}

QColor underflow_colour(const QPalette& palette) {
    return is_dark(palette) ? QColor(0xff, 0xc1, 0x4d) : QColor(0xb2, 0x6a, 0x00);
}

QColor subnormal_colour(const QPalette& palette) {
    return is_dark(palette) ? QColor(0xd0, 0x9c, 0xf0) : QColor(0x8e, 0x44, 0xad);
}

QColor outcome_colour(CastOutcome outcome, const QPalette& palette) {
    switch (outcome) {
    case CastOutcome::OverflowToInf:
    case CastOutcome::OverflowToNaN:
    case CastOutcome::NaN:
        return overflow_colour(palette);
    case CastOutcome::UnderflowToZero:
        return underflow_colour(palette);
    case CastOutcome::Subnormal:
        return subnormal_colour(palette);
    default:
        return {};
    }
}

const std::vector<DType>& lab_dtypes() {
    static const std::vector<DType> dtypes = {DType::Float32, DType::Float16, DType::BFloat16,
                                              DType::Float8E4M3, DType::Float8E5M2};
    return dtypes;
}

QString format_sentence(DType dtype) {
    switch (dtype) {
    case DType::Float32:
        return QStringLiteral("float32: 8 exponent and 23 mantissa bits; the reference precision "
                              "that master weights and softmax keep in mixed precision.");
    case DType::Float16:
        return QStringLiteral("float16: 5 exponent and 10 mantissa bits; precise but narrow "
                              "(max 65504, smallest 6e-8), so gradients need loss scaling.");
    case DType::BFloat16:
        return QStringLiteral("bfloat16: float32's 8 exponent bits with only 7 mantissa bits; "
                              "trades precision for range and rarely needs loss scaling.");
    case DType::Float8E4M3:
        return QStringLiteral("float8_e4m3 (OCP): 4 exponent and 3 mantissa bits, max 448 and no "
                              "infinity; used for weights and activations on recent GPUs.");
    case DType::Float8E5M2:
        return QStringLiteral("float8_e5m2 (OCP): 5 exponent and 2 mantissa bits, float16's range "
                              "with 2 bits of precision; used for gradients.");
    default:
        return QString::fromUtf8(dtype_name(dtype).data(),
                                 static_cast<int>(dtype_name(dtype).size()));
    }
}

namespace {

// "6.1e-05" -> "6.1e-5", "6.55e+04" -> "6.55e4": shorter, and still what the CLI reads back.
QString compact_exponent(QString text) {
    static const QRegularExpression exponent(QStringLiteral("e\\+?(-?)0*(\\d)"));
    return text.replace(exponent, QStringLiteral("e\\1\\2"));
}

} // namespace

QString format_number(double value, int digits) {
    if (std::isnan(value)) return QStringLiteral("nan");
    if (std::isinf(value)) return value < 0 ? QStringLiteral("-inf") : QStringLiteral("inf");
    if (value == 0) return std::signbit(value) ? QStringLiteral("-0") : QStringLiteral("0");
    return compact_exponent(QString::number(value, 'g', digits));
}

QString exact_text(double value) {
    if (!std::isfinite(value) || value == 0) return format_number(value);
    return compact_exponent(QString::number(value, 'g', QLocale::FloatingPointShortest));
}

QString float32_text(float value) {
    if (!std::isfinite(value) || value == 0) return format_number(value);
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return compact_exponent(QString::fromLatin1(buffer, result.ptr - buffer));
}

QString format_error(const FloatInspection& r) {
    if (std::isnan(r.abs_error)) return QStringLiteral("—");
    if (std::isinf(r.abs_error)) return QStringLiteral("∞ (overflow)");
    if (r.abs_error == 0) return QStringLiteral("0 (exact)");
    return QStringLiteral("%1\n(%2 %)")
        .arg(format_number(r.abs_error, 3), format_number(100.0 * r.rel_error, 3));
}

QFont scaled_font(const QFont& base, double factor, bool bold) {
    QFont font = base;
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * factor);
    else
        font.setPixelSize(static_cast<int>(font.pixelSize() * factor + 0.5));
    font.setBold(bold);
    return font;
}

} // namespace mantissa::ui::lab
