// RunStore: the session's runs as a table model; it owns every RunRecord, gives each run a
// colour (run_color: colour-blind safe, never repeated) and announces changes so the charts can
// redraw.
#include "ui/runs/run_store.h"

#include <QApplication>
#include <QBrush>
#include <QFont>
#include <QLocale>
#include <QPalette>

#include "ui/window/theme.h"

namespace mantissa::ui {

RunStore::RunStore(QObject* parent) : QAbstractTableModel(parent) {}

int RunStore::add_run(const Experiment& experiment) {
    RunRecord record;
    record.name = QString::fromStdString(experiment.name) + QStringLiteral(" · ") +
                  QString::fromStdString(experiment.policy);
    record.experiment = experiment;
    record.device = QString::fromStdString(experiment.device);
    record.state = RunState::Queued;
    return insert(std::move(record));
}

int RunStore::add_stored_run(RunRecord record) {
    return insert(std::move(record));
}

int RunStore::insert(RunRecord record) {
    const int id = m_next_id++;
    record.id = id;
    if (!record.color.isValid()) record.color = palette_color(id);
    const int row = static_cast<int>(m_runs.size());
    beginInsertRows({}, row, row);
    m_runs.push_back(std::move(record));
    endInsertRows();
    emit run_added(id);
    return id;
}

QColor RunStore::palette_color(int id) const {
    return run_color(id - 1, is_dark(QApplication::palette()));
}

void RunStore::rename_run(int id, const QString& name) {
    const int row = row_of(id);
    if (row < 0 || m_runs[row].name == name) return;
    m_runs[row].name = name;
    emit dataChanged(index(row, ColName), index(row, ColName));
    emit run_changed(id);
}

void RunStore::set_visibility(const QHash<int, bool>& visible) {
    bool changed = false;
    for (int row = 0; row < m_runs.size(); ++row) {
        const auto it = visible.constFind(m_runs[row].id);
        if (it == visible.constEnd() || m_runs[row].visible == *it) continue;
        m_runs[row].visible = *it;
        changed = true;
        emit dataChanged(index(row, ColName), index(row, ColName), {Qt::CheckStateRole});
    }
    if (changed) emit visibility_changed();
}

RunRecord* RunStore::run(int id) {
    const int row = row_of(id);
    return row < 0 ? nullptr : &m_runs[row];
}

const RunRecord* RunStore::run(int id) const {
    const int row = row_of(id);
    return row < 0 ? nullptr : &m_runs[row];
}

void RunStore::remove_run(int id) {
    const int row = row_of(id);
    if (row < 0) return;
    const bool was_visible = m_runs[row].visible;
    beginRemoveRows({}, row, row);
    m_runs.removeAt(row);
    endRemoveRows();
    emit run_removed(id);
    if (was_visible) emit visibility_changed();
}

void RunStore::set_started(int id, const QString& device, const MemoryByCategory& memory,
                           std::int64_t steps_per_epoch) {
    const int row = row_of(id);
    if (row < 0) return;
    RunRecord& r = m_runs[row];
    r.device = device;
    r.memory = memory;
    r.steps_per_epoch = steps_per_epoch;
    if (!r.created.isValid()) r.created = QDateTime::currentDateTimeUtc(); // not stored on disk
    r.state = RunState::Running;
    r.message.clear();
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    emit run_changed(id);
}

void RunStore::append_steps(int id, const QVector<StepRecord>& steps) {
    const int row = row_of(id);
    if (row < 0 || steps.isEmpty()) return;
    m_runs[row].steps += steps;
    emit run_changed(id);
}

void RunStore::append_quant(int id, const QVector<QuantRecord>& records) {
    const int row = row_of(id);
    if (row < 0 || records.isEmpty()) return;
    m_runs[row].quant += records;
    emit run_changed(id);
}

void RunStore::append_epoch(int id, const EpochRecord& epoch) {
    const int row = row_of(id);
    if (row < 0) return;
    m_runs[row].epochs.push_back(epoch);
    emit run_changed(id);
}

void RunStore::set_state(int id, RunState state, const QString& message) {
    const int row = row_of(id);
    if (row < 0) return;
    RunRecord& r = m_runs[row];
    r.state = state;
    r.message = message;
    emit dataChanged(index(row, ColStatus), index(row, ColStatus));
    emit run_changed(id);
}

void RunStore::set_finished(int id, const RunSummary& summary) {
    const int row = row_of(id);
    if (row < 0) return;
    RunRecord& r = m_runs[row];
    r.summary = summary;
    r.state = run_state_of(summary.status);
    r.message = QString::fromStdString(summary.message);
    emit dataChanged(index(row, ColStatus), index(row, ColStatus));
    emit run_changed(id);
}

int RunStore::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_runs.size());
}

int RunStore::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunStore::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() < 0 || index.row() >= m_runs.size()) return {};
    const RunRecord& r = m_runs[index.row()];
    switch (index.column()) {
    case ColName:
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole) return r.name;
        if (role == Qt::DecorationRole) return r.color;
        if (role == Qt::CheckStateRole) return r.visible ? Qt::Checked : Qt::Unchecked;
        break;
    case ColPolicy:
        if (role == Qt::DisplayRole) return QString::fromStdString(r.experiment.policy);
        break;
    case ColDevice:
        // A data-parallel run (from mpirun) names its ranks; the tooltip adds the allreduce dtype.
        if (role == Qt::DisplayRole) {
            const QString ranks = ranks_text(r);
            return ranks.isEmpty() ? r.device : r.device + QStringLiteral(" · ") + ranks;
        }
        if (role == Qt::ToolTipRole) {
            const QString parallel = data_parallel_text(r);
            return parallel.isEmpty() ? r.device
                                      : r.device + QStringLiteral("\ndata-parallel: ") + parallel;
        }
        break;
    case ColStarted:
        // Runs from several days sit side by side; the start time tells them apart.
        if (role == Qt::DisplayRole && r.created.isValid())
            return QLocale().toString(r.created.toLocalTime(), QStringLiteral("yyyy-MM-dd HH:mm"));
        if (role == Qt::ToolTipRole && !r.folder.isEmpty()) return r.folder;
        break;
    case ColStatus:
        if (role == Qt::DisplayRole) return run_state_name(r.state);
        if (role == Qt::ToolTipRole) {
            if (r.state == RunState::Incomplete)
                return tr("The app stopped while this run trained; its metrics up to then are "
                          "kept.");
            return r.message.isEmpty() ? run_state_name(r.state) : r.message;
        }
        if (role == Qt::ForegroundRole &&
            (r.state == RunState::Failed || r.state == RunState::Diverged))
            return QBrush(QColor(QStringLiteral("#D55E00")));
        if (role == Qt::FontRole && r.state == RunState::Incomplete) {
            QFont font;
            font.setItalic(true);
            return font;
        }
        break;
    default:
        break;
    }
    return {};
}

QVariant RunStore::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case ColName:
        return tr("Name");
    case ColPolicy:
        return tr("Policy");
    case ColDevice:
        return tr("Device");
    case ColStarted:
        return tr("Started");
    case ColStatus:
        return tr("Status");
    default:
        return {};
    }
}

Qt::ItemFlags RunStore::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == ColName) f |= Qt::ItemIsUserCheckable;
    return f;
}

bool RunStore::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || index.column() != ColName || role != Qt::CheckStateRole ||
        index.row() >= m_runs.size())
        return false;
    const bool visible = value.toInt() == Qt::Checked;
    RunRecord& r = m_runs[index.row()];
    if (r.visible == visible) return true;
    r.visible = visible;
    emit dataChanged(index, index, {Qt::CheckStateRole});
    emit visibility_changed();
    return true;
}

int RunStore::row_of(int id) const {
    for (int row = 0; row < m_runs.size(); ++row)
        if (m_runs[row].id == id) return row;
    return -1;
}

} // namespace mantissa::ui
