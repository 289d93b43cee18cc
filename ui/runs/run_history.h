// RunHistory: keeps every run the app trains in a folder of its own under the runs folder, and
// reopens them at the next launch, so curves and comparisons survive restarts.
//
// A run folder holds:
//   experiment.json   the run's config (the experiment writer's format)
//   metrics.jsonl     the metrics JSONL the CLI writes (written by the training worker)
//   run.json          {name, color, status, message, created, visible}: what the runs list shows
//   weights.safetensors  the weights when the run ended (the training worker writes it)
// A metrics.jsonl without a `summary` record is a run cut short: it reopens as "incomplete".
#pragma once

#include <QHash>
#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <memory>

#include "ui/runs/run_record.h"

class QThread;

namespace mantissa::ui {

class RunStore;

// What reading one run folder gave: a record to add, or why it was skipped.
struct StoredRun {
    bool is_run = false; // the folder has a run.json or a metrics.jsonl
    bool loaded = false; // `record` is usable
    RunRecord record;
    QString problem; // why the folder was skipped, or a note on a run that still loads
};

class RunHistory final : public QObject {
    Q_OBJECT

public:
    static constexpr const char* kEnvVar = "MANTISSA_RUNS_DIR";
    static constexpr const char* kSettingsKey = "history/runs_dir";
    static constexpr const char* kExperimentFile = "experiment.json";
    static constexpr const char* kMetricsFile = "metrics.jsonl";
    static constexpr const char* kRunFile = "run.json";
    static constexpr const char* kWeightsFile = "weights.safetensors";

    explicit RunHistory(RunStore* store, QObject* parent = nullptr);
    ~RunHistory() override; // stops a background load and waits for it

    // The runs folder to use: $MANTISSA_RUNS_DIR, else the "Runs folder" setting, else
    // <AppDataLocation>/runs (~/.local/share/Mantissa/Mantissa/runs on Linux).
    static QString configured_dir();
    QString dir() const { return m_dir; }
    // Remembers `dir` in the settings, forgets the runs of the old folder that are not training,
    // and loads the runs of the new one.
    void set_dir(const QString& dir);

    // Adds every run folder under dir() to the store, oldest first; returns how many. Folders
    // that cannot be read are skipped and listed in problems().
    int load();
    // As load(), but the files are parsed on a background thread (a 100k-step run takes seconds)
    // and each run is added as it is read; finished_loading(count) follows the last one.
    void load_async();
    bool is_loading() const { return m_loader != nullptr; }
    QStringList problems() const { return m_problems; }

    // Makes the folder of run `id` (experiment.json and run.json) and returns the path its
    // metrics.jsonl goes to; empty, with a problem logged, when the folder cannot be written.
    QString prepare(int id);
    // The final weights' path inside a run's folder (kWeightsFile); empty for a run not stored.
    QString weights_path(int id) const;

    // Renames the run in the list and in its run.json. Returns an error message, or empty.
    QString rename(int id, const QString& name);
    // Deletes the run's folder and removes it from the list; refused while it trains.
    QString remove(int id);
    // Writes the run's metrics as CSV or JSON (chosen by the extension of `path`, .csv or .json).
    // A quantised run's CSV gets its quant records beside it, in quant_csv_path(path).
    QString export_metrics(int id, const QString& path) const;
    // "steps.csv" -> "steps-quant.csv": the long-format quant CSV (quant_to_csv) of an export.
    static QString quant_csv_path(const QString& csv_path);

    // Reads one run folder; touches no store or widget, so any thread may call it.
    static StoredRun read_folder(const QString& folder);

signals:
    void problem(const QString& message); // for the log: a folder unreadable, a write failed
    void finished_loading(int runs);

private:
    void on_run_changed(int id);
    void on_visibility_changed();
    void rewrite_if_changed(const RunRecord& run);
    QString write_run_json(const RunRecord& run) const;
    void report(const QString& message);
    QStringList run_folders() const; // oldest first
    bool add(StoredRun stored);      // false: skipped (a problem) or already listed
    void stop_loading();

    RunStore* m_store = nullptr;
    QString m_dir;
    QStringList m_problems;
    QThread* m_loader = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel; // tells the loader to stop early
    struct Written {
        RunState state = RunState::Queued;
        bool visible = true;
    };
    QHash<int, Written> m_written; // what each run.json says, to rewrite only on a change
};

} // namespace mantissa::ui
