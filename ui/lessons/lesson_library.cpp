// LessonLibrary: reads lesson files through QFile so the same code serves Qt resources and
// folders; the parsing and every check are the core's (core/train/lesson.h).
#include "ui/lessons/lesson_library.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "core/error.h"

namespace mantissa::ui {

namespace {

std::string read_all(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw Error(ErrorKind::Io, "cannot read '" + path.toStdString() +
                                       "': " + file.errorString().toStdString());
    return file.readAll().toStdString();
}

} // namespace

LessonLibrary load_lesson_library(const QString& lessons_dir, const QString& experiments_dir) {
    LessonLibrary library;
    const QDir dir(lessons_dir);
    const QStringList files = dir.entryList({"*.json"}, QDir::Files, QDir::Name);
    if (files.isEmpty())
        library.errors << QStringLiteral("no lessons found in %1").arg(lessons_dir);
    for (const QString& name : files) {
        try {
            library.lessons.append(lesson_from_json(
                read_all(dir.filePath(name)), name.toStdString(),
                QFileInfo(name).completeBaseName().toStdString(), [&](const std::string& file) {
                    return read_all(QDir(experiments_dir).filePath(QString::fromStdString(file)));
                }));
        } catch (const Error& e) {
            library.errors << QString::fromStdString(e.what());
        }
    }
    return library;
}

} // namespace mantissa::ui
