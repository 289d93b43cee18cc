// Table rows (see table_rows.h): sets the row height and returns the height; the caller decides
// whether it is a minimum or a fixed size.
#include "ui/runs/table_rows.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QStyle>
#include <QTableView>

namespace mantissa::ui {

int fit_rows(QTableView* view, int rows) {
    const int row = view->fontMetrics().height() + 6;
    view->verticalHeader()->setMinimumSectionSize(row);
    view->verticalHeader()->setDefaultSectionSize(row);
    const int header =
        view->horizontalHeader()->isHidden() ? 0 : view->horizontalHeader()->sizeHint().height();
    const int scroll = view->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, view);
    return rows * row + header + scroll + 2 * view->frameWidth();
}

} // namespace mantissa::ui
