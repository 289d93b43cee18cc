// RecentFiles: a QSettings-backed most-recently-used list. Paths are stored absolute and
// cleaned, so the same file reached two ways appears once.
#include "ui/editor/recent_files.h"

#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace mantissa::ui {

namespace {

QString normalised(const QString& path) {
    return QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

} // namespace

RecentFiles::RecentFiles(QObject* parent) : QObject(parent) {}

QStringList RecentFiles::files() const {
    QStringList files = QSettings().value(QLatin1String(kSettingsKey)).toStringList();
    files.removeAll(QString());
    files.removeDuplicates();
    return files.mid(0, kMax);
}

void RecentFiles::add(const QString& path) {
    if (path.isEmpty() || path.startsWith(':')) return; // built-in presets are not "files"
    QStringList list = files();
    const QString p = normalised(path);
    list.removeAll(p);
    list.prepend(p);
    store(list.mid(0, kMax));
}

void RecentFiles::remove(const QString& path) {
    QStringList list = files();
    if (list.removeAll(normalised(path)) > 0) store(list);
}

void RecentFiles::clear() {
    store({});
}

void RecentFiles::store(const QStringList& files) {
    QSettings().setValue(QLatin1String(kSettingsKey), files);
    emit changed();
}

void RecentFiles::fill_menu(QMenu* menu) {
    menu->clear();
    const QStringList list = files();
    for (int i = 0; i < list.size(); ++i) {
        const QString path = list[i];
        // "&1" gives keyboard access; a literal '&' in a file name must be doubled.
        QString label = QFileInfo(path).fileName();
        label.replace('&', QLatin1String("&&"));
        QAction* action = menu->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(label));
        action->setToolTip(path);
        action->setStatusTip(path);
        connect(action, &QAction::triggered, this, [this, path] { emit open_requested(path); });
    }
    if (list.isEmpty()) menu->addAction(tr("No recent experiments"))->setEnabled(false);
    menu->addSeparator();
    QAction* clear_action = menu->addAction(tr("Clear Recent"));
    clear_action->setEnabled(!list.isEmpty());
    connect(clear_action, &QAction::triggered, this, &RecentFiles::clear);
}

} // namespace mantissa::ui
