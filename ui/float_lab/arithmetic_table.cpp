// ArithmeticTable filling. The first row is the exact answer (float64) so the damage each format
// does is read against it; flagged cells are tinted, not only coloured, for projectors.
#include "ui/float_lab/arithmetic_table.h"

#include <QEvent>
#include <QHeaderView>
#include <algorithm>

#include "ui/float_lab/lab_style.h"
#include "ui/window/theme.h"

namespace mantissa::ui {

namespace {

constexpr ArithOp kOps[] = {ArithOp::Square, ArithOp::Add, ArithOp::Multiply};

QString dtype_text(DType dtype) {
    const std::string_view name = dtype_name(dtype);
    return QString::fromUtf8(name.data(), static_cast<int>(name.size()));
}

} // namespace

ArithmeticTable::ArithmeticTable(QWidget* parent) : QTableWidget(parent) {
    setFont(lab::scaled_font(font(), 1.15));
    const int rows = 1 + static_cast<int>(lab::lab_dtypes().size());
    setRowCount(rows);
    setColumnCount(3);
    setHorizontalHeaderLabels({QString::fromUtf8(arith_op_symbol(ArithOp::Square)),
                               QString::fromUtf8(arith_op_symbol(ArithOp::Add)),
                               QString::fromUtf8(arith_op_symbol(ArithOp::Multiply))});
    QStringList row_labels = {QStringLiteral("exact")};
    for (DType dtype : lab::lab_dtypes()) row_labels << dtype_text(dtype);
    setVerticalHeaderLabels(row_labels);
    verticalHeaderItem(0)->setToolTip("The operation on x and y as typed, in float64.");
    for (int i = 0; i < static_cast<int>(lab::lab_dtypes().size()); ++i)
        verticalHeaderItem(i + 1)->setToolTip(
            lab::format_sentence(lab::lab_dtypes()[static_cast<std::size_t>(i)]));
    for (int c = 0; c < 3; ++c)
        horizontalHeaderItem(c)->setToolTip(
            "x and y are first rounded to the format, the operation is done exactly and the "
            "result rounded once to the format: the same as the engine's elementwise ops "
            "(computed in float32, rounded to the compute dtype).");
    horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    horizontalHeader()->setFont(lab::scaled_font(font(), 1.0, true));
    verticalHeader()->setFont(lab::scaled_font(font(), 1.0, true));
    verticalHeader()->setSectionResizeMode(QHeaderView::Stretch); // fill the box beside the ladder
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 14);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionMode(QAbstractItemView::NoSelection);
    setFocusPolicy(Qt::NoFocus);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < 3; ++c) {
            auto* item = new QTableWidgetItem;
            item->setTextAlignment(Qt::AlignCenter);
            setItem(r, c, item);
        }
    fill();
}

void ArithmeticTable::set_inputs(double x, double y) {
    m_x = x;
    m_y = y;
    fill();
}

QString ArithmeticTable::cell_text(DType dtype, ArithOp op) const {
    const auto& dtypes = lab::lab_dtypes();
    const auto it = std::find(dtypes.begin(), dtypes.end(), dtype);
    if (it == dtypes.end()) return {};
    const int row = 1 + static_cast<int>(it - dtypes.begin());
    return item(row, static_cast<int>(op))->text();
}

void ArithmeticTable::fill() {
    const QPalette& pal = palette();
    const QColor base = pal.color(QPalette::Base), text = pal.color(QPalette::Text);
    for (int c = 0; c < 3; ++c) {
        const ArithOp op = kOps[c];
        const ArithmeticResult exact = compute_in(op, m_x, m_y, DType::Float64);
        QTableWidgetItem* head = item(0, c);
        head->setText(lab::format_number(exact.exact, 6));
        head->setForeground(blend(base, text, 0.7));
        for (std::size_t i = 0; i < lab::lab_dtypes().size(); ++i) {
            const DType dtype = lab::lab_dtypes()[i];
            const ArithmeticResult r = compute_in(op, m_x, m_y, dtype);
            m_results[{dtype, op}] = r;
            QString shown = lab::format_number(r.result.stored, 6);
            QColor tint;
            QString tip = QStringLiteral("%1 in %2: x → %3, y → %4, result %5 (%6)")
                              .arg(QString::fromUtf8(arith_op_symbol(op)), dtype_text(dtype),
                                   lab::format_number(r.x, 9), lab::format_number(r.y, 9),
                                   lab::format_number(r.result.stored, 9),
                                   QString::fromUtf8(cast_outcome_label(r.result.outcome)));
            if (r.overflow) {
                shown += QStringLiteral("  ⚠ overflow");
                tint = lab::overflow_colour(pal);
            } else if (r.underflow) {
                shown += QStringLiteral("  ⚠ underflow");
                tint = lab::underflow_colour(pal);
            } else if (r.result.outcome == CastOutcome::Subnormal) {
                shown += QStringLiteral("  (subnormal)");
                tint = lab::subnormal_colour(pal);
            }
            QTableWidgetItem* cell = item(static_cast<int>(i) + 1, c);
            cell->setText(shown);
            cell->setToolTip(tip);
            cell->setForeground(tint.isValid() ? tint : text);
            cell->setBackground(tint.isValid() ? blend(base, tint, 0.14) : base);
            QFont f = font();
            f.setBold(tint.isValid());
            cell->setFont(f);
        }
    }
}

void ArithmeticTable::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) fill();
    QTableWidget::changeEvent(event);
}

} // namespace mantissa::ui
