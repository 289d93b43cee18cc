// FormatTable layout and filling. Columns line up across formats (a grid, not one widget per row)
// so a class can compare the same quantity down a column.
#include "ui/float_lab/format_table.h"

#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <cmath>

#include "core/numeric/float_format.h"
#include "ui/float_lab/bits_widget.h"
#include "ui/float_lab/lab_style.h"
#include "ui/window/theme.h"

namespace mantissa::ui {

namespace {

QString dtype_text(DType dtype) {
    const std::string_view name = dtype_name(dtype);
    return QString::fromUtf8(name.data(), static_cast<int>(name.size()));
}

QString hex_text(std::uint64_t bits, DType dtype) {
    return QStringLiteral("0x%1")
        .arg(bits, bit_width(dtype) / 4, 16, QLatin1Char('0'))
        .toUpper()
        .replace(QLatin1String("0X"), QLatin1String("0x"));
}

} // namespace

FormatTable::FormatTable(QWidget* parent) : QWidget(parent) {
    m_grid = new QGridLayout(this);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setHorizontalSpacing(14);
    m_grid->setVerticalSpacing(14);
    const QFont big = lab::scaled_font(font(), 1.35);
    const QFont header_font = lab::scaled_font(font(), 1.0, true);

    // Two-line cells (hex under the name, relative under absolute error, the neighbours above
    // each other) keep the row narrow enough for float32's 32 bits on a 1600-pixel screen.
    const QStringList headers = {"format",       "sign · exponent · mantissa (click a bit)",
                                 "stored value", "rounding error",
                                 "ULP",          "neighbours",
                                 "class"};
    const QStringList header_tips = {
        "The format, and its bit pattern in hexadecimal.",
        "The stored bit pattern. Click any bit to flip it: the value updates in every format.",
        "The value of the pattern: the nearest value the format can hold (ties to even).",
        "|stored − x| and, below it, relative to |x|.",
        "Unit in the last place: the gap to the next value of larger magnitude at this value.",
        "The representable values just above (IEEE nextUp) and just below (nextDown).",
        "What rounding did: normal, subnormal (precision lost), underflow→0, overflow→inf/nan."};
    for (int c = 0; c < headers.size(); ++c) {
        auto* h = new QLabel(headers[c]);
        h->setFont(header_font);
        h->setToolTip(header_tips[c]);
        m_grid->addWidget(h, 0, c);
    }

    const QFont small = lab::scaled_font(font(), 0.95, false);
    auto stacked = [](QWidget* top, QWidget* bottom) {
        auto* cell = new QWidget;
        auto* v = new QVBoxLayout(cell);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(0);
        v->addWidget(top);
        v->addWidget(bottom);
        return cell;
    };
    int row = 1;
    for (DType dtype : lab::lab_dtypes()) {
        Row r;
        auto* name = new QLabel(dtype_text(dtype));
        name->setFont(lab::scaled_font(font(), 1.25, true));
        name->setToolTip(lab::format_sentence(dtype));
        r.bits = new BitsWidget(dtype);
        r.bits->setToolTip(lab::format_sentence(dtype));
        connect(r.bits, &BitsWidget::bit_clicked, this, [this, dtype](int index) {
            const Row& current = m_rows.at(dtype);
            emit pattern_chosen(dtype, toggle_bit(current.inspection.bits, index, dtype));
        });
        auto label = [&](const QFont& f) {
            auto* l = new QLabel;
            l->setFont(f);
            l->setTextInteractionFlags(Qt::TextSelectableByMouse);
            return l;
        };
        r.hex = label(small);
        r.hex->setToolTip("The bit pattern in hexadecimal.");
        r.stored = label(big);
        const QFont regular = lab::scaled_font(font(), 1.1, false); // not the box's bold title
        r.error = label(regular);
        r.ulp = label(regular);
        r.above = label(regular);
        r.below = label(regular);
        r.outcome = label(lab::scaled_font(font(), 1.1, true));
        m_grid->addWidget(stacked(name, r.hex), row, 0);
        m_grid->addWidget(r.bits, row, 1, Qt::AlignLeft | Qt::AlignVCenter);
        m_grid->addWidget(r.stored, row, 2);
        m_grid->addWidget(r.error, row, 3);
        m_grid->addWidget(r.ulp, row, 4);
        m_grid->addWidget(stacked(r.above, r.below), row, 5);
        m_grid->addWidget(r.outcome, row, 6);
        m_rows.emplace(dtype, r);
        ++row;
    }
    m_grid->setColumnStretch(7, 1);
    set_value(1.0);
}

void FormatTable::set_value(double value) {
    for (DType dtype : lab::lab_dtypes()) show_row(dtype, inspect_value(value, dtype));
}

void FormatTable::set_pattern(DType dtype, std::uint64_t bits) {
    const FloatInspection exact = inspect_bits(bits, dtype);
    for (DType other : lab::lab_dtypes())
        show_row(other, other == dtype ? exact : inspect_value(exact.stored, other));
}

void FormatTable::show_row(DType dtype, const FloatInspection& r) {
    Row& row = m_rows.at(dtype);
    row.inspection = r;
    row.bits->set_bits(r.bits);
    row.hex->setText(hex_text(r.bits, dtype));
    const int digits = dtype == DType::Float32 ? 9 : 6; // float32's neighbours differ in digit 8
    row.stored->setText(lab::format_number(r.stored, digits));
    row.error->setText(lab::format_error(r));
    row.ulp->setText(std::isnan(r.ulp) ? QStringLiteral("—") : lab::format_number(r.ulp, 4));
    row.above->setText(QStringLiteral("↑ ") +
                       (r.above ? lab::format_number(*r.above, digits) : QStringLiteral("none")));
    row.below->setText(QStringLiteral("↓ ") +
                       (r.below ? lab::format_number(*r.below, digits) : QStringLiteral("none")));
    row.outcome->setText(QString::fromUtf8(cast_outcome_label(r.outcome)));
    const QColor colour = lab::outcome_colour(r.outcome, palette());
    const QString style =
        colour.isValid() ? QStringLiteral("color: %1;").arg(colour.name()) : QString();
    row.outcome->setStyleSheet(style);
    row.stored->setStyleSheet(
        is_overflow(r.outcome) || r.outcome == CastOutcome::UnderflowToZero ? style : QString());
}

QString FormatTable::text(DType dtype, const QString& column) const {
    const Row& r = m_rows.at(dtype);
    if (column == QLatin1String("stored")) return r.stored->text();
    if (column == QLatin1String("error")) return r.error->text();
    if (column == QLatin1String("ulp")) return r.ulp->text();
    if (column == QLatin1String("below")) return r.below->text();
    if (column == QLatin1String("above")) return r.above->text();
    if (column == QLatin1String("class")) return r.outcome->text();
    if (column == QLatin1String("hex")) return r.hex->text();
    return {};
}

void FormatTable::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) restyle();
    QWidget::changeEvent(event);
}

void FormatTable::restyle() {
    for (auto& [dtype, row] : m_rows) show_row(dtype, row.inspection);
}

} // namespace mantissa::ui
