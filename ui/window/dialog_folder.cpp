// Dialog folder: one QSettings key; the Documents folder (or home) when none is remembered or the
// remembered one is gone.
#include "ui/window/dialog_folder.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace mantissa::ui {

namespace {
const char* const kKey = "dialogs/last_folder";
} // namespace

QString dialog_folder() {
    const QString last = QSettings().value(QLatin1String(kKey)).toString();
    if (!last.isEmpty() && QFileInfo(last).isDir()) return last;
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (!documents.isEmpty() && QFileInfo(documents).isDir()) return documents;
    return QDir::homePath();
}

QString dialog_path(const QString& name) {
    return QDir(dialog_folder()).filePath(name);
}

void remember_dialog_folder(const QString& path) {
    if (path.isEmpty() || path.startsWith(QLatin1Char(':'))) return;
    const QFileInfo info(path);
    const QString folder = info.isDir() ? info.absoluteFilePath() : info.absolutePath();
    QSettings().setValue(QLatin1String(kKey), QDir::cleanPath(folder));
}

} // namespace mantissa::ui
