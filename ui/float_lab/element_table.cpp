// ElementTable layout and filling, from core/numeric/element_inspect (the same code as
// `mantissa-cli cast`).
#include "ui/float_lab/element_table.h"

#include <QGridLayout>
#include <QLabel>
#include <cmath>

#include "ui/float_lab/lab_style.h"

namespace mantissa::ui {

namespace {

QString qstr(const std::string& s) {
    return QString::fromStdString(s);
}

QString error_text(const ElementInspection& r) {
    if (std::isnan(r.abs_error)) return QStringLiteral("—");
    if (r.abs_error == 0) return QStringLiteral("0 (exact)");
    return QStringLiteral("%1 (%2 %)")
        .arg(lab::format_number(r.abs_error, 3), lab::format_number(r.rel_error * 100, 3));
}

} // namespace

const std::vector<ElementFormat>& ElementTable::formats() {
    static const std::vector<ElementFormat> shown = {
        ElementFormat::Float6E3M2, ElementFormat::Float6E2M3, ElementFormat::Float4E2M1,
        ElementFormat::E8M0};
    return shown;
}

ElementTable::ElementTable(QWidget* parent) : QWidget(parent) {
    m_grid = new QGridLayout(this);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setHorizontalSpacing(22);
    const QFont header_font = lab::scaled_font(font(), 1.0, true);
    const QFont big = lab::scaled_font(font(), 1.2);
    QFont mono = big;
    mono.setFamily(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::Monospace);
    const QStringList headers = {"format",       "sign|exponent|mantissa", "hex",
                                 "stored value", "rounding error",         "class"};
    for (int c = 0; c < headers.size(); ++c) {
        auto* h = new QLabel(headers[c]);
        h->setFont(header_font);
        m_grid->addWidget(h, 0, c);
    }
    int row = 1;
    for (ElementFormat f : formats()) {
        auto* name = new QLabel(qstr(std::string(element_format_name(f))));
        name->setFont(big);
        const ElementSpec& s = element_spec(f);
        name->setToolTip(
            f == ElementFormat::E8M0
                ? QStringLiteral("The MX block scale: 2^(e-127) for e = 0..254, 0xFF NaN; no zero, "
                                 "no sign.")
                : QStringLiteral("%1 bits, max %2, no inf or NaN: out-of-range values saturate.")
                      .arg(s.width)
                      .arg(lab::format_number(s.max_finite)));
        Row r;
        auto label = [&](const QFont& font) {
            auto* l = new QLabel;
            l->setFont(font);
            l->setTextInteractionFlags(Qt::TextSelectableByMouse);
            return l;
        };
        r.bits = label(mono);
        r.hex = label(mono);
        r.stored = label(big);
        r.error = label(font());
        r.outcome = label(font());
        m_grid->addWidget(name, row, 0);
        m_grid->addWidget(r.bits, row, 1);
        m_grid->addWidget(r.hex, row, 2);
        m_grid->addWidget(r.stored, row, 3);
        m_grid->addWidget(r.error, row, 4);
        m_grid->addWidget(r.outcome, row, 5);
        m_rows.emplace(f, r);
        ++row;
    }
    m_grid->setColumnStretch(headers.size(), 1);
    set_value(1.0);
}

void ElementTable::set_value(double value) {
    for (auto& [f, r] : m_rows) {
        r.inspection = inspect_element(value, f);
        r.bits->setText(qstr(element_bit_string(r.inspection.code, f)));
        r.hex->setText(qstr(element_hex_string(r.inspection.code, f)));
        r.stored->setText(lab::format_number(r.inspection.stored));
        r.error->setText(error_text(r.inspection));
        r.outcome->setText(QString::fromUtf8(element_outcome_label(r.inspection.outcome)));
        const bool lossy = r.inspection.outcome == ElementOutcome::Saturated ||
                           r.inspection.outcome == ElementOutcome::UnderflowToZero ||
                           r.inspection.outcome == ElementOutcome::NaNToZero ||
                           r.inspection.outcome == ElementOutcome::ClampedToMin ||
                           r.inspection.outcome == ElementOutcome::NegativeToNaN;
        r.outcome->setStyleSheet(
            lossy ? QStringLiteral("color: %1;").arg(lab::overflow_colour(palette()).name())
                  : QString());
    }
}

QString ElementTable::text(ElementFormat format, const QString& column) const {
    const Row& r = m_rows.at(format);
    if (column == "bits") return r.bits->text();
    if (column == "hex") return r.hex->text();
    if (column == "stored") return r.stored->text();
    if (column == "error") return r.error->text();
    if (column == "class") return r.outcome->text();
    return {};
}

} // namespace mantissa::ui
