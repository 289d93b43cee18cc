// LessonsPanel: the list of guided lessons and the open lesson's text (what it shows, its runs,
// what to look at) with a "Run this lesson" button. It only emits requests; MainWindow acts.
#pragma once

#include <QVector>
#include <QWidget>

#include "core/train/lesson.h"

class QLabel;
class QListWidget;
class QPushButton;
class QTextBrowser;

namespace mantissa::ui {

class LessonsPanel final : public QWidget {
    Q_OBJECT

public:
    explicit LessonsPanel(QWidget* parent = nullptr);

    // Replaces the list; `errors` (lessons that could not be read) are shown under it.
    void set_lessons(const QVector<Lesson>& lessons, const QStringList& errors = {});
    // Whether this machine has a GPU: a lesson that needs one says what a CPU run still shows.
    void set_gpu_available(bool available);
    // Running state from the trainer: the Run button is disabled while a run is active.
    void set_busy(bool busy);
    // Whether the charts show only the lesson's runs (LessonFocus): shows "Back to my runs".
    void set_focused(bool focused);

    int lesson_count() const { return m_lessons.size(); }
    const QVector<Lesson>& lessons() const { return m_lessons; }
    void open_lesson(int index); // shows it and emits lesson_opened
    const Lesson* current_lesson() const;
    QString shown_text() const; // the lesson text as plain text, for tests
    QPushButton* run_button() const { return m_run; }
    QPushButton* back_button() const { return m_back; }
    QListWidget* list() const { return m_list; }

signals:
    void lesson_opened(const mantissa::Lesson& lesson);
    void run_requested(const mantissa::Lesson& lesson);
    void back_requested(); // the charts' view from before the lesson, please

private:
    void show_current();

    QVector<Lesson> m_lessons;
    int m_current = -1;
    bool m_gpu = false;
    bool m_busy = false;
    QListWidget* m_list = nullptr;
    QTextBrowser* m_text = nullptr;
    QLabel* m_errors = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_back = nullptr;
};

} // namespace mantissa::ui
