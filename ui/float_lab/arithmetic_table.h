// ArithmeticTable: x², x + y and x · y computed in each format (inputs rounded to it, result
// rounded once), with overflow and underflow flagged, beside the exact float64 answer.
#pragma once

#include <QTableWidget>
#include <map>
#include <utility>

#include "core/numeric/float_inspect.h"

namespace mantissa::ui {

class ArithmeticTable final : public QTableWidget {
    Q_OBJECT

public:
    explicit ArithmeticTable(QWidget* parent = nullptr);

    void set_inputs(double x, double y);
    const ArithmeticResult& result(DType dtype, ArithOp op) const {
        return m_results.at({dtype, op});
    }
    QString cell_text(DType dtype, ArithOp op) const; // what the cell shows

protected:
    void changeEvent(QEvent* event) override;

private:
    void fill();

    double m_x = 1, m_y = 1;
    std::map<std::pair<DType, ArithOp>, ArithmeticResult> m_results;
};

} // namespace mantissa::ui
