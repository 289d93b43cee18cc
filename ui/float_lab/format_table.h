// FormatTable: the value x in each format, one row per dtype: clickable bits, hex, the stored
// value, the rounding error, the ULP, the neighbouring values and what rounding did (class).
#pragma once

#include <QWidget>
#include <map>

#include "core/numeric/float_inspect.h"

class QGridLayout;
class QLabel;

namespace mantissa::ui {

class BitsWidget;

class FormatTable final : public QWidget {
    Q_OBJECT

public:
    explicit FormatTable(QWidget* parent = nullptr);

    // Shows `value` rounded to every format.
    void set_value(double value);
    // Shows `bits` exactly in `dtype` and its value (exact in float64) rounded to the others.
    void set_pattern(DType dtype, std::uint64_t bits);

    const FloatInspection& inspection(DType dtype) const { return m_rows.at(dtype).inspection; }
    BitsWidget* bits_widget(DType dtype) const { return m_rows.at(dtype).bits; }
    // The text shown in a column ("stored", "error", "ulp", "below", "above", "class").
    QString text(DType dtype, const QString& column) const;

signals:
    // A bit was clicked: the pattern with that bit flipped.
    void pattern_chosen(mantissa::DType dtype, quint64 bits);

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Row {
        FloatInspection inspection;
        BitsWidget* bits = nullptr;
        QLabel* hex = nullptr;
        QLabel* stored = nullptr;
        QLabel* error = nullptr;
        QLabel* ulp = nullptr;
        QLabel* below = nullptr;
        QLabel* above = nullptr;
        QLabel* outcome = nullptr;
    };
    void show_row(DType dtype, const FloatInspection& inspection);
    void restyle();

    std::map<DType, Row> m_rows;
    QGridLayout* m_grid = nullptr;
};

} // namespace mantissa::ui
