// LessonFocus: a lesson owns the charts while it is open. Opening or running one remembers which
// runs were shown and shows only the lesson's runs (earlier ones of the same lesson, and those it
// starts), so its curves get the whole axis and the titles speak of them alone. leave() brings
// the remembered view back; the lesson's new runs stay in the list, unticked.
#pragma once

#include <QObject>
#include <QSet>

#include "core/train/lesson.h"
#include "ui/runs/run_visibility.h"

namespace mantissa::ui {

class RunStore;

class LessonFocus final : public QObject {
    Q_OBJECT

public:
    explicit LessonFocus(RunStore* store, QObject* parent = nullptr);

    // Shows only `lesson`'s runs; the first call remembers the view to come back to (a second
    // lesson opened meanwhile does not overwrite it). Runs started while focused stay shown;
    // runs the history reopens meanwhile (a launch with --lesson) are hidden unless the lesson's.
    // The app quitting leaves the lesson first, so the run history keeps the user's view.
    void enter(const Lesson& lesson);
    void leave(); // the remembered view again; nothing when not focused
    bool active() const { return m_active; }

signals:
    void changed(bool active);

private:
    RunStore* m_store = nullptr;
    bool m_active = false;
    Visibility m_saved; // the view before the first lesson
    Lesson m_lesson;    // the lesson shown now
};

} // namespace mantissa::ui
