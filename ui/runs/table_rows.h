// Table rows: the height a table needs to show a number of rows without scrolling, so the runs
// list can promise "at least 8 runs visible" on any font size.
#pragma once

class QTableView;

namespace mantissa::ui {

// Compact rows (the font's height plus a little), then the header, the frame and a horizontal
// scroll bar's height: what `rows` rows take in `view`.
int fit_rows(QTableView* view, int rows);

} // namespace mantissa::ui
