// Run visibility: which runs the charts overlay, as plain functions over the runs list, so
// "show only these", "show all", a lesson's own view and the way back from it are one rule each.
#pragma once

#include <QHash>
#include <QSet>
#include <QVector>

#include "core/train/lesson.h"
#include "ui/runs/run_record.h"

namespace mantissa::ui {

using Visibility = QHash<int, bool>; // run id -> shown on the charts

// The runs the charts draw, in list order.
QVector<const RunRecord*> visible_runs(const QVector<RunRecord>& runs);
Visibility visibility_of(const QVector<RunRecord>& runs);
// Exactly the runs in `ids` shown (ids of runs not in the list are ignored).
Visibility only(const QVector<RunRecord>& runs, const QSet<int>& ids);
Visibility all_shown(const QVector<RunRecord>& runs);
// A saved view brought back: runs in `saved` as they were; runs added since it was saved get
// `added` (false: a lesson's runs go away with the lesson).
Visibility restored(const QVector<RunRecord>& runs, const Visibility& saved, bool added);
// The runs that trained one of the lesson's experiments (on any device), this session's or
// reopened from the history.
QSet<int> runs_of_lesson(const QVector<RunRecord>& runs, const Lesson& lesson);

} // namespace mantissa::ui
