// LessonFocus (see lesson_focus.h): runs the store gains while focused are new and shown by
// default, so only the entering and the leaving change visibility.
#include "ui/lessons/lesson_focus.h"

#include <QCoreApplication>

#include "ui/runs/run_store.h"

namespace mantissa::ui {

LessonFocus::LessonFocus(RunStore* store, QObject* parent) : QObject(parent), m_store(store) {
    connect(m_store, &RunStore::run_added, this, [this](int id) {
        const RunRecord* run = m_store->run(id);
        if (!m_active || !run || !run->reopened) return;
        m_saved.insert(id, run->visible); // what leave() gives back
        const bool ours = runs_of_lesson({*run}, m_lesson).contains(id);
        if (run->visible != ours) m_store->set_visibility({{id, ours}});
    });
    // Visibility is stored with each run: quitting inside a lesson must not hide the user's runs
    // at the next launch.
    connect(qApp, &QCoreApplication::aboutToQuit, this, &LessonFocus::leave);
}

void LessonFocus::enter(const Lesson& lesson) {
    if (!m_active) m_saved = visibility_of(m_store->runs());
    m_lesson = lesson;
    m_store->set_visibility(only(m_store->runs(), runs_of_lesson(m_store->runs(), lesson)));
    if (!m_active) {
        m_active = true;
        emit changed(true);
    }
}

void LessonFocus::leave() {
    if (!m_active) return;
    m_active = false;
    m_store->set_visibility(restored(m_store->runs(), m_saved, false));
    m_saved.clear();
    emit changed(false);
}

} // namespace mantissa::ui
