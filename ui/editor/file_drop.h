// Drag-and-drop of experiment files: which dropped file, if any, the window should open.
// Kept apart from MainWindow so the rule (a local .json file) is tested on its own.
#pragma once

#include <QString>

class QMimeData;

namespace mantissa::ui {

// The first local file in `mime` whose name ends in .json (any case); empty when there is none.
QString dropped_experiment_file(const QMimeData* mime);

} // namespace mantissa::ui
