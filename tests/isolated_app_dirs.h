// IsolatedAppDirs: points the app's run history and settings at fresh temporary folders, so a GUI
// test never sees runs or recent files from earlier test runs or from the user's own use.
#pragma once

#include <QTemporaryDir>
#include <QtGlobal>

#include "ui/runs/run_history.h"

struct IsolatedAppDirs {
    QTemporaryDir root;

    IsolatedAppDirs() {
        qputenv(mantissa::ui::RunHistory::kEnvVar, (root.path() + "/runs").toUtf8());
        qputenv("XDG_CONFIG_HOME", (root.path() + "/config").toUtf8()); // QSettings: recent files
    }
};
