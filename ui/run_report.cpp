// The run report (see run_report.h): one JSON object per run, with the summary the comparison
// table shows. QSaveFile writes a temporary file and renames it, so a report is whole or absent.
#include "ui/run_report.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <cmath>
#include <cstdio>

#include "ui/run_record.h"
#include "ui/run_store.h"

namespace mantissa::ui {

namespace {

QJsonValue finite_or_null(double value) {
    return std::isfinite(value) ? QJsonValue(value) : QJsonValue(QJsonValue::Null);
}

} // namespace

bool write_run_report(const RunStore& store, const QString& path, const QJsonObject& extra) {
    QJsonArray runs;
    for (const RunRecord& run : store.runs()) {
        if (run.reopened) continue; // runs of earlier sessions (the history) are not this report's
        QJsonObject o;
        o["id"] = run.id;
        o["name"] = run.name;
        o["policy"] = QString::fromStdString(run.experiment.policy);
        o["device"] = run.device;
        o["state"] = run_state_name(run.state);
        o["steps_recorded"] = static_cast<qint64>(run.steps.size());
        if (run.summary) {
            const RunSummary& s = *run.summary;
            o["steps"] = static_cast<qint64>(s.steps);
            o["epochs"] = s.epochs;
            o["seconds"] = finite_or_null(s.seconds);
            o["median_step_ms"] = finite_or_null(s.median_step_ms);
            o["samples_per_s"] = finite_or_null(s.samples_per_s);
            o["val_accuracy"] = finite_or_null(s.val_accuracy);
            o["val_loss"] = finite_or_null(s.val_loss);
            o["skipped_steps"] = static_cast<qint64>(s.skipped_steps);
            o["peak_memory"] = static_cast<qint64>(s.peak_memory);
        }
        runs.append(o);
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        std::fprintf(stderr, "mantissa: cannot write the report '%s': %s\n", qPrintable(path),
                     qPrintable(file.errorString()));
        return false;
    }
    QJsonObject root = extra;
    root["runs"] = runs;
    file.write(QJsonDocument(root).toJson());
    if (!file.commit()) {
        std::fprintf(stderr, "mantissa: cannot write the report '%s': %s\n", qPrintable(path),
                     qPrintable(file.errorString()));
        return false;
    }
    return true;
}

} // namespace mantissa::ui
