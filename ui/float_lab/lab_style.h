// The Float Lab's shared look: colours for the sign / exponent / mantissa fields and for overflow
// and underflow, number formatting, and one sentence per format for tooltips.
#pragma once

#include <QColor>
#include <QString>
#include <vector>

#include "core/numeric/dtype.h"
#include "core/numeric/float_inspect.h"

class QFont;
class QPalette;

namespace mantissa::ui::lab {

enum class BitField { Sign, Exponent, Mantissa };

// Okabe-Ito hues (readable for colour-blind viewers), lighter on a dark palette.
QColor field_colour(BitField field, const QPalette& palette);
QColor overflow_colour(const QPalette& palette);  // red
QColor underflow_colour(const QPalette& palette); // amber
QColor subnormal_colour(const QPalette& palette); // violet: precision is being lost
// The colour an outcome is shown in; an invalid colour for a plain normal/zero/inf result.
QColor outcome_colour(CastOutcome outcome, const QPalette& palette);

// The formats the lab shows, widest first: float32, float16, bfloat16, float8_e4m3, float8_e5m2.
const std::vector<DType>& lab_dtypes();
// One sentence on what the format is for and what it trades, for tooltips.
QString format_sentence(DType dtype);

// "256", "0.0999756", "6.10352e-5", "inf", "-0", "nan": `digits` significant digits.
QString format_number(double value, int digits = 6);
// The shortest text that reads back as exactly `value` (for the input field).
QString exact_text(double value);
// The shortest text that reads back as the float32 `value` ("2.0000001", not the double's
// "2.00000009"): for values the lab computes in float32, such as a block's decoded values.
QString float32_text(float value);
// "2.4e-5\n(0.024 %)" (absolute, then relative), "0 (exact)", "∞ (overflow)".
QString format_error(const FloatInspection& inspection);

// `base` scaled by `factor` (projector-friendly sizes relative to the app font).
QFont scaled_font(const QFont& base, double factor, bool bold = false);

} // namespace mantissa::ui::lab
