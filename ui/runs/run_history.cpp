// RunHistory: run folders on disk <-> RunRecords in the RunStore. Metrics files are parsed by
// core's reader; run.json is rewritten atomically whenever a run's status or name changes.
#include "ui/runs/run_history.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSettings>
#include <QStandardPaths>
#include <QThread>
#include <algorithm>

#include "core/error.h"
#include "core/records/metrics_export.h"
#include "ui/runs/run_store.h"

namespace mantissa::ui {

namespace {

bool is_active(RunState state) {
    return state == RunState::Queued || state == RunState::Running || state == RunState::Paused;
}

// "mlp-small · mixed_float16" -> "mlp-small-mixed_float16": safe in any file system.
QString slug(const QString& name) {
    QString s = name;
    s.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("-"));
    s = s.left(48);
    while (s.startsWith('-') || s.startsWith('.')) s.remove(0, 1);
    while (s.endsWith('-')) s.chop(1);
    return s.isEmpty() ? QStringLiteral("run") : s;
}

QString write_atomic(const QString& path, const QByteArray& bytes) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    return {};
}

} // namespace

RunHistory::RunHistory(RunStore* store, QObject* parent)
    : QObject(parent), m_store(store), m_dir(configured_dir()) {
    connect(m_store, &RunStore::run_changed, this, &RunHistory::on_run_changed);
    connect(m_store, &RunStore::visibility_changed, this, &RunHistory::on_visibility_changed);
}

QString RunHistory::configured_dir() {
    const QString env = qEnvironmentVariable(kEnvVar);
    if (!env.isEmpty()) return env;
    const QString setting = QSettings().value(QLatin1String(kSettingsKey)).toString();
    if (!setting.isEmpty()) return setting;
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/runs");
}

void RunHistory::set_dir(const QString& dir) {
    QSettings().setValue(QLatin1String(kSettingsKey), dir);
    if (QDir(dir) == QDir(m_dir)) return;
    QVector<int> forget;
    for (const RunRecord& run : m_store->runs())
        if (!run.folder.isEmpty() && !is_active(run.state)) forget.push_back(run.id);
    for (int id : forget) {
        m_written.remove(id);
        m_store->remove_run(id);
    }
    m_dir = dir;
    load_async();
}

RunHistory::~RunHistory() {
    stop_loading();
}

QStringList RunHistory::run_folders() const {
    QDir root(m_dir);
    if (!root.exists()) return {};
    // Folder names start with the creation time, so name order is age order.
    QStringList folders;
    for (const QString& name : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        folders.append(root.filePath(name));
    return folders;
}

int RunHistory::load() {
    stop_loading();
    m_problems.clear();
    int loaded = 0;
    for (const QString& folder : run_folders())
        if (add(read_folder(folder))) ++loaded;
    return loaded;
}

void RunHistory::load_async() {
    stop_loading();
    m_problems.clear();
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_cancel = cancel;
    const QStringList folders = run_folders();
    auto count = std::make_shared<int>(0); // only touched on this (the GUI) thread
    m_loader = QThread::create([this, folders, cancel, count] {
        for (const QString& folder : folders) {
            if (cancel->load()) return;
            StoredRun stored = read_folder(folder);
            if (!stored.is_run) continue;
            QMetaObject::invokeMethod(
                this,
                [this, stored = std::move(stored), count, cancel]() mutable {
                    if (!cancel->load() && add(std::move(stored))) ++*count;
                },
                Qt::QueuedConnection);
        }
    });
    // Queued after every run the thread posted, so the count is complete when it arrives.
    connect(m_loader, &QThread::finished, this, [this, count, cancel] {
        if (cancel->load()) return; // stop_loading() has deleted it already
        m_loader->deleteLater();
        m_loader = nullptr;
        emit finished_loading(*count);
    });
    m_loader->start();
}

void RunHistory::stop_loading() {
    if (!m_loader) return;
    m_cancel->store(true);
    m_loader->wait();
    delete m_loader;
    m_loader = nullptr;
}

StoredRun RunHistory::read_folder(const QString& folder) {
    StoredRun out;
    const QDir dir(folder);
    const QString metrics_path = dir.filePath(QLatin1String(kMetricsFile));
    const QString experiment_path = dir.filePath(QLatin1String(kExperimentFile));
    const QString run_path = dir.filePath(QLatin1String(kRunFile));
    if (!QFileInfo::exists(run_path) && !QFileInfo::exists(metrics_path))
        return out; // not a run folder (something else the user keeps there)
    out.is_run = true;

    RunRecord& record = out.record;
    record.folder = folder;
    record.reopened = true;
    QJsonObject meta;
    QString note;
    if (QFile file(run_path); file.open(QIODevice::ReadOnly)) {
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
        if (!doc.isObject())
            note = QStringLiteral("Run history: %1: %2 at offset %3; the run is shown without "
                                  "its name")
                       .arg(run_path, error.errorString())
                       .arg(error.offset);
        else
            meta = doc.object();
    }
    try {
        RunMetrics metrics;
        if (QFileInfo::exists(metrics_path))
            metrics = read_metrics_jsonl(metrics_path.toStdString());
        if (QFileInfo::exists(experiment_path))
            record.experiment = load_experiment(experiment_path.toStdString());
        else if (metrics.config)
            record.experiment = *metrics.config;
        else
            throw Error(ErrorKind::Data, experiment_path.toStdString() + ": missing");
        record.device = QString::fromStdString(metrics.device_name);
        record.memory = metrics.memory;
        record.data_parallel = metrics.data_parallel;
        record.steps = QVector<StepRecord>(metrics.steps.begin(), metrics.steps.end());
        record.epochs = QVector<EpochRecord>(metrics.epochs.begin(), metrics.epochs.end());
        record.histograms =
            QVector<GradientHistogram>(metrics.histograms.begin(), metrics.histograms.end());
        record.quant = QVector<QuantRecord>(metrics.quant.begin(), metrics.quant.end());
        if (!record.epochs.isEmpty() && record.epochs.front().steps > 0)
            record.steps_per_epoch = record.epochs.front().steps;
        record.summary = metrics.summary;
        const QString status = meta.value(QStringLiteral("status")).toString();
        record.message = meta.value(QStringLiteral("message")).toString();
        if (metrics.summary) {
            record.state = run_state_of(metrics.summary->status);
            record.message = QString::fromStdString(metrics.summary->message);
        } else if (status == QLatin1String("failed") || status == QLatin1String("stopped")) {
            // Ended before its first step (bad stack, missing data): there are no metrics.
            record.state = status == QLatin1String("failed") ? RunState::Failed : RunState::Stopped;
        } else {
            record.state = RunState::Incomplete;
        }
    } catch (const Error& e) {
        out.problem = QStringLiteral("Run history: skipped %1: %2")
                          .arg(folder, QString::fromStdString(e.what()));
        return out;
    }
    record.name = meta.value(QStringLiteral("name")).toString();
    if (record.name.isEmpty())
        record.name = QString::fromStdString(record.experiment.name) + QStringLiteral(" · ") +
                      QString::fromStdString(record.experiment.policy);
    record.color = QColor(meta.value(QStringLiteral("color")).toString()); // invalid: palette's
    record.created =
        QDateTime::fromString(meta.value(QStringLiteral("created")).toString(), Qt::ISODate);
    if (!record.created.isValid()) record.created = QFileInfo(folder).birthTime();
    record.visible = meta.value(QStringLiteral("visible")).toBool(true);
    out.loaded = true;
    out.problem = note; // a damaged run.json: the run still loads, the note is logged
    return out;
}

bool RunHistory::add(StoredRun stored) {
    if (!stored.is_run) return false;
    if (!stored.problem.isEmpty()) report(stored.problem);
    if (!stored.loaded) return false;
    // A second load of the same folder (set_dir back and forth) adds nothing.
    const QString folder = stored.record.folder;
    if (std::any_of(m_store->runs().begin(), m_store->runs().end(),
                    [&](const RunRecord& r) { return r.folder == folder; }))
        return false;
    const Written written{stored.record.state, stored.record.visible};
    const int id = m_store->add_stored_run(std::move(stored.record));
    m_written.insert(id, written);
    return true;
}

QString RunHistory::prepare(int id) {
    RunRecord* run = m_store->run(id);
    if (!run) return {};
    if (!QDir().mkpath(m_dir)) {
        report(QStringLiteral("Run history: cannot create the runs folder %1; this run is kept in "
                              "memory only")
                   .arg(m_dir));
        return {};
    }
    run->created = QDateTime::currentDateTimeUtc();
    const QString base =
        run->created.toString(QStringLiteral("yyyyMMdd-HHmmss-")) + slug(run->name);
    QDir root(m_dir);
    QString name = base;
    for (int n = 2; root.exists(name); ++n) name = base + QStringLiteral("-%1").arg(n);
    if (!root.mkdir(name)) {
        report(QStringLiteral("Run history: cannot create %1; this run is kept in memory only")
                   .arg(root.filePath(name)));
        return {};
    }
    run->folder = root.filePath(name);
    const QDir dir(run->folder);
    try {
        save_experiment(run->experiment,
                        dir.filePath(QLatin1String(kExperimentFile)).toStdString());
    } catch (const Error& e) {
        report(QStringLiteral("Run history: %1").arg(QString::fromStdString(e.what())));
    }
    RunRecord copy = *run;
    copy.state = RunState::Running; // what a reader should assume until the run ends
    if (const QString error = write_run_json(copy); !error.isEmpty())
        report(QStringLiteral("Run history: %1").arg(error));
    m_written.insert(id, Written{RunState::Running, run->visible});
    return dir.filePath(QLatin1String(kMetricsFile));
}

QString RunHistory::weights_path(int id) const {
    const RunRecord* run = m_store->run(id);
    if (!run || run->folder.isEmpty()) return {};
    return QDir(run->folder).filePath(QLatin1String(kWeightsFile));
}

void RunHistory::on_run_changed(int id) {
    if (const RunRecord* run = m_store->run(id)) rewrite_if_changed(*run);
}

void RunHistory::on_visibility_changed() {
    for (const RunRecord& run : m_store->runs()) rewrite_if_changed(run);
}

void RunHistory::rewrite_if_changed(const RunRecord& run) {
    if (run.folder.isEmpty()) return;
    // Steps arrive many times a second; run.json changes only with the status or the checkbox.
    const auto it = m_written.constFind(run.id);
    if (it != m_written.constEnd() && it->state == run.state && it->visible == run.visible) return;
    m_written.insert(run.id, Written{run.state, run.visible});
    if (const QString error = write_run_json(run); !error.isEmpty())
        report(QStringLiteral("Run history: %1").arg(error));
}

QString RunHistory::write_run_json(const RunRecord& run) const {
    QJsonObject o;
    o.insert(QStringLiteral("format_version"), 1);
    o.insert(QStringLiteral("name"), run.name);
    o.insert(QStringLiteral("color"), run.color.name());
    o.insert(QStringLiteral("status"), run_state_name(run.state));
    if (!run.message.isEmpty()) o.insert(QStringLiteral("message"), run.message);
    o.insert(QStringLiteral("created"), run.created.toUTC().toString(Qt::ISODate));
    o.insert(QStringLiteral("visible"), run.visible);
    return write_atomic(QDir(run.folder).filePath(QLatin1String(kRunFile)),
                        QJsonDocument(o).toJson(QJsonDocument::Indented));
}

QString RunHistory::rename(int id, const QString& name) {
    const QString trimmed = name.trimmed();
    if (trimmed.isEmpty()) return tr("A run needs a name.");
    if (!m_store->run(id)) return tr("There is no run %1.").arg(id);
    m_store->rename_run(id, trimmed);
    const RunRecord* run = m_store->run(id);
    if (run->folder.isEmpty()) return {}; // not stored yet: prepare() writes the new name
    return write_run_json(*run);
}

QString RunHistory::remove(int id) {
    const RunRecord* run = m_store->run(id);
    if (!run) return tr("There is no run %1.").arg(id);
    if (is_active(run->state)) return tr("%1 is training; stop it first.").arg(run->name);
    if (!run->folder.isEmpty()) {
        QDir folder(run->folder);
        if (folder.exists() && !folder.removeRecursively())
            return tr("Could not delete every file in %1.").arg(run->folder);
    }
    m_written.remove(id);
    m_store->remove_run(id);
    return {};
}

QString RunHistory::export_metrics(int id, const QString& path) const {
    const RunRecord* run = m_store->run(id);
    if (!run) return tr("There is no run %1.").arg(id);
    const QString suffix = QFileInfo(path).suffix().toLower();
    try {
        if (suffix == QLatin1String("csv")) {
            const RunMetrics metrics = to_run_metrics(*run);
            export_metrics_csv(metrics, path.toStdString());
            if (!metrics.quant.empty())
                export_quant_csv(metrics, quant_csv_path(path).toStdString());
        } else if (suffix == QLatin1String("json"))
            export_metrics_json(to_run_metrics(*run), run->name.toStdString(),
                                run_state_name(run->state).toStdString(), path.toStdString());
        else
            return tr("%1: choose a .csv or .json file name.").arg(path);
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

QString RunHistory::quant_csv_path(const QString& csv_path) {
    const QFileInfo info(csv_path);
    return info.dir().filePath(info.completeBaseName() + QStringLiteral("-quant.") + info.suffix());
}

void RunHistory::report(const QString& message) {
    m_problems.append(message);
    emit problem(message);
}

} // namespace mantissa::ui
