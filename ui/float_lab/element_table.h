// ElementTable: x in the block-quantisation element formats that are not dtypes (float6_e3m2,
// float6_e2m3, float4_e2m1, e8m0): bits, hex, stored value, error and what rounding did. These
// formats saturate instead of overflowing, and e8m0 holds only powers of two (no zero, no sign).
#pragma once

#include <QWidget>
#include <map>

#include "core/numeric/element_inspect.h"

class QGridLayout;
class QLabel;

namespace mantissa::ui {

class ElementTable final : public QWidget {
    Q_OBJECT

public:
    explicit ElementTable(QWidget* parent = nullptr);

    // Shows `value` rounded to each element format (nearest even, saturating).
    void set_value(double value);

    const ElementInspection& inspection(ElementFormat format) const {
        return m_rows.at(format).inspection;
    }
    // The text shown in a column ("bits", "hex", "stored", "error", "class").
    QString text(ElementFormat format, const QString& column) const;
    // The formats shown, in order.
    static const std::vector<ElementFormat>& formats();

private:
    struct Row {
        ElementInspection inspection;
        QLabel* bits = nullptr;
        QLabel* hex = nullptr;
        QLabel* stored = nullptr;
        QLabel* error = nullptr;
        QLabel* outcome = nullptr;
    };
    std::map<ElementFormat, Row> m_rows;
    QGridLayout* m_grid = nullptr;
};

} // namespace mantissa::ui
