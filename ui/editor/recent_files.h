// RecentFiles: the last experiment files the user opened or saved (at most 8, newest first),
// kept in QSettings and shown as File > Open Recent.
#pragma once

#include <QObject>
#include <QStringList>

class QMenu;

namespace mantissa::ui {

class RecentFiles final : public QObject {
    Q_OBJECT

public:
    static constexpr int kMax = 8;
    static constexpr const char* kSettingsKey = "recent_files";

    explicit RecentFiles(QObject* parent = nullptr);

    QStringList files() const;        // absolute paths, newest first
    void add(const QString& path);    // moves it to the front; drops the oldest past kMax
    void remove(const QString& path); // a file that could not be opened any more
    void clear();
    // Replaces the menu's actions: "&1 name.json" (path in the tooltip) per file, then "Clear".
    void fill_menu(QMenu* menu);

signals:
    void open_requested(const QString& path);
    void changed();

private:
    void store(const QStringList& files);
};

} // namespace mantissa::ui
