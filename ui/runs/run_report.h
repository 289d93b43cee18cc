// The run report: every run's outcome (policy, device, speed, memory, accuracy) as one JSON
// file, written when `mantissa --report` finishes, so scripts compare the app with the CLI.
#pragma once

#include <QJsonObject>
#include <QString>

namespace mantissa::ui {

class RunStore;

// Writes the runs of `store` to `path` atomically, with `extra`'s keys beside "runs" (e.g. the
// event-loop probe's "ui" summary); false (and a message on stderr) on failure.
bool write_run_report(const RunStore& store, const QString& path, const QJsonObject& extra = {});

} // namespace mantissa::ui
