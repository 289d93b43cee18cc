// Run visibility (see run_visibility.h).
#include "ui/runs/run_visibility.h"

namespace mantissa::ui {

QVector<const RunRecord*> visible_runs(const QVector<RunRecord>& runs) {
    QVector<const RunRecord*> out;
    for (const RunRecord& run : runs)
        if (run.visible) out.append(&run);
    return out;
}

Visibility visibility_of(const QVector<RunRecord>& runs) {
    Visibility out;
    for (const RunRecord& run : runs) out.insert(run.id, run.visible);
    return out;
}

Visibility only(const QVector<RunRecord>& runs, const QSet<int>& ids) {
    Visibility out;
    for (const RunRecord& run : runs) out.insert(run.id, ids.contains(run.id));
    return out;
}

Visibility all_shown(const QVector<RunRecord>& runs) {
    Visibility out;
    for (const RunRecord& run : runs) out.insert(run.id, true);
    return out;
}

Visibility restored(const QVector<RunRecord>& runs, const Visibility& saved, bool added) {
    Visibility out;
    for (const RunRecord& run : runs) out.insert(run.id, saved.value(run.id, added));
    return out;
}

QSet<int> runs_of_lesson(const QVector<RunRecord>& runs, const Lesson& lesson) {
    // The lesson's runs train on the toolbar's device: compare everything but the device.
    auto same = [](Experiment a, Experiment b) {
        a.device.clear();
        b.device.clear();
        return a == b;
    };
    QSet<int> out;
    for (const RunRecord& run : runs)
        for (const LessonExperiment& e : lesson.experiments)
            if (same(run.experiment, e.experiment)) {
                out.insert(run.id);
                break;
            }
    return out;
}

} // namespace mantissa::ui
