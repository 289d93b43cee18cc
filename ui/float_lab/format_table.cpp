// FormatTable layout and filling. Columns line up across formats (a grid, not one widget per row)
// so a class can compare the same quantity down a column.
#include "ui/float_lab/format_table.h"

#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <cmath>

#include "core/numeric/float_format.h"
#include "ui/float_lab/bits_widget.h"
#include "ui/float_lab/lab_style.h"
#include "ui/theme.h"

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
    m_grid->setHorizontalSpacing(22);
    m_grid->setVerticalSpacing(10);
    const QFont big = lab::scaled_font(font(), 1.25);
    const QFont header_font = lab::scaled_font(font(), 1.0, true);

    const QStringList headers = {"format",
                                 "sign · exponent · mantissa (click a bit)",
                                 "hex",
                                 "stored value",
                                 "rounding error",
                                 "ULP",
                                 "below",
                                 "above",
                                 "class"};
    const QStringList header_tips = {
        "",
        "The stored bit pattern. Click any bit to flip it: the value updates in every format.",
        "The same pattern in hexadecimal.",
        "The value of the pattern: the nearest value the format can hold (ties to even).",
        "|stored − x| and, in brackets, relative to |x|.",
        "Unit in the last place: the gap to the next value of larger magnitude at this value.",
        "The representable value just below (IEEE nextDown).",
        "The representable value just above (IEEE nextUp).",
        "What rounding did: normal, subnormal (precision lost), underflow→0, overflow→inf/nan."};
    for (int c = 0; c < headers.size(); ++c) {
        auto* h = new QLabel(headers[c]);
        h->setFont(header_font);
        h->setToolTip(header_tips[c]);
        m_grid->addWidget(h, 0, c);
    }

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
        r.hex = label(font());
        r.stored = label(big);
        r.error = label(font());
        r.ulp = label(font());
        r.below = label(font());
        r.above = label(font());
        r.outcome = label(lab::scaled_font(font(), 1.1, true));
        m_grid->addWidget(name, row, 0);
        m_grid->addWidget(r.bits, row, 1, Qt::AlignLeft | Qt::AlignVCenter);
        m_grid->addWidget(r.hex, row, 2);
        m_grid->addWidget(r.stored, row, 3);
        m_grid->addWidget(r.error, row, 4);
        m_grid->addWidget(r.ulp, row, 5);
        m_grid->addWidget(r.below, row, 6);
        m_grid->addWidget(r.above, row, 7);
        m_grid->addWidget(r.outcome, row, 8);
        m_rows.emplace(dtype, r);
        ++row;
    }
    m_grid->setColumnStretch(9, 1);
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
    row.stored->setText(lab::format_number(r.stored, dtype == DType::Float32 ? 9 : 6));
    row.error->setText(lab::format_error(r));
    row.ulp->setText(std::isnan(r.ulp) ? QStringLiteral("—") : lab::format_number(r.ulp, 4));
    row.below->setText(r.below ? lab::format_number(*r.below, 6) : QStringLiteral("—"));
    row.above->setText(r.above ? lab::format_number(*r.above, 6) : QStringLiteral("—"));
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
