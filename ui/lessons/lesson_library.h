// LessonLibrary: the lessons that ship inside the app (Qt resources :/lessons, presets from
// :/experiments) or sit in a folder, read with the core's strict lesson reader.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>

#include "core/train/lesson.h"

namespace mantissa::ui {

struct LessonLibrary {
    QVector<Lesson> lessons; // ordered by file name ("01-...", "02-...")
    QStringList errors;      // one readable line per lesson that could not be read
};

// Every *.json in `lessons_dir` (a Qt path: ":/lessons" or a folder); presets named by a lesson
// come from `experiments_dir`. A bad lesson is reported in `errors` and the others still load.
LessonLibrary load_lesson_library(const QString& lessons_dir = QStringLiteral(":/lessons"),
                                  const QString& experiments_dir = QStringLiteral(":/experiments"));

} // namespace mantissa::ui
