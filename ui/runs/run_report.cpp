// The run report (see run_report.h): one JSON object per run, with the summary and the figures
// the comparison table shows. QSaveFile writes a temporary file and renames it, so a report is
// whole or absent.
#include "ui/runs/run_report.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <cmath>
#include <cstdio>

#include "ui/runs/run_configuration.h"
#include "ui/runs/run_record.h"
#include "ui/runs/run_store.h"

namespace mantissa::ui {

namespace {

QJsonValue finite_or_null(double value) {
    return std::isfinite(value) ? QJsonValue(value) : QJsonValue(QJsonValue::Null);
}

} // namespace

bool write_run_report(const RunStore& store, const QString& path, const QJsonObject& extra) {
    QJsonArray runs;
    QVector<RunFacts> facts;
    for (const RunRecord& run : store.runs()) facts.append(facts_of(run));
    for (qsizetype i = 0; i < store.runs().size(); ++i) {
        const RunRecord& run = store.runs()[i];
        if (run.reopened) continue; // runs of earlier sessions (the history) are not this report's
        QJsonObject o;
        o["id"] = run.id;
        o["name"] = run.name;
        o["policy"] = QString::fromStdString(run.experiment.policy);
        o["device"] = run.device;
        o["state"] = run_state_name(run.state);
        o["steps_recorded"] = static_cast<qint64>(run.steps.size());
        // What the comparison table shows: the configuration, the step time after warm-up with
        // its spread, the model's own memory and the dataset apart, and the float32 reference.
        const RunFacts& f = facts[i];
        o["configuration"] = configuration_label(run.experiment);
        o["configuration_id"] = configuration_id(run.experiment);
        QJsonObject timing;
        timing["warmup_steps"] = f.timing.warmup;
        timing["timed_steps"] = f.timing.timed;
        if (f.timing.valid()) {
            timing["median_ms"] = f.timing.median_ms;
            timing["p25_ms"] = f.timing.p25_ms;
            timing["p75_ms"] = f.timing.p75_ms;
            timing["samples_per_s"] = f.timing.samples_per_s;
        }
        o["timing_after_warmup"] = timing;
        o["model_bytes"] = f.model_bytes;
        o["dataset_bytes"] = f.dataset_bytes;
        const Baseline baseline = float32_baseline(facts, i);
        QJsonArray references;
        for (int r : baseline.runs) references.append(store.runs()[r].id);
        o["float32_reference_runs"] = references;
        if (baseline.found() && f.comparable)
            o["speedup_vs_float32"] = baseline.timing.median_ms / f.timing.median_ms;
        if (baseline.found() && baseline.model_bytes > 0 && f.model_bytes > 0)
            o["model_memory_vs_float32"] = f.model_bytes / baseline.model_bytes;
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
