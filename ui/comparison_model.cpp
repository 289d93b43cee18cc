// ComparisonModel: derives every column from the runs' summaries and step records, so the table
// is always consistent with the charts. Ratios use the latest finished float32 run on the same
// device as the reference, as the Keras guide and the lab notes compare against float32.
#include "ui/comparison_model.h"

#include <QLocale>
#include <algorithm>
#include <cmath>

#include "ui/run_store.h"

namespace mantissa::ui {

namespace {

// The bytes the engine held: the plan and the data (the CPU engine's "device memory").
double peak_bytes(const RunRecord& run) {
    if (run.summary && run.summary->peak_memory > 0)
        return static_cast<double>(run.summary->peak_memory);
    return static_cast<double>(run.memory.total());
}

QString mib(double bytes) {
    return QString::number(bytes / (1024.0 * 1024.0), 'f', 1) + " MiB";
}

} // namespace

ComparisonModel::ComparisonModel(RunStore* store, QObject* parent)
    : QAbstractTableModel(parent), m_store(store) {
    auto reset = [this] {
        beginResetModel();
        endResetModel();
    };
    connect(store, &RunStore::run_added, this, reset);
    connect(store, &RunStore::run_removed, this, reset);
    connect(store, &RunStore::run_changed, this, [this](int) {
        if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    });
}

int ComparisonModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_store->runs().size());
}

int ComparisonModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    static const char* names[] = {"Run",           "Policy",    "Device",         "Test acc.",
                                  "ms/step",       "samples/s", "Speedup vs f32", "Peak memory",
                                  "Memory vs f32", "Skipped",   "Time to 97%"};
    static const char* tips[] = {
        "The run, in its chart colour",
        "The global dtype policy",
        "The engine the run used",
        "Accuracy on the 10,000 test images after the last epoch",
        "Median training step time",
        "Training examples per second at the median step time",
        "float32's median step time divided by this run's (same device)",
        "Bytes the engine held: weights, master weights, activations, gradients, optimizer, data",
        "This run's peak memory divided by the float32 run's",
        "Steps whose update the dynamic loss scaler skipped (non-finite gradients)",
        "Training seconds until the test accuracy first reached 97%"};
    if (section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) return QString::fromUtf8(names[section]);
    if (role == Qt::ToolTipRole) return QString::fromUtf8(tips[section]);
    return {};
}

QVariant ComparisonModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const RunRecord& run = m_store->runs()[index.row()];
    if (role == Qt::DecorationRole && index.column() == ColRun) return run.color;
    if (role == Qt::TextAlignmentRole && index.column() >= ColAccuracy)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};

    // The float32 reference: the latest finished float32 run on the same device.
    const RunRecord* reference = nullptr;
    for (const RunRecord& other : m_store->runs())
        if (other.summary && other.experiment.policy == "float32" && other.device == run.device)
            reference = &other;
    const RunSummary* s = run.summary ? &*run.summary : nullptr;
    const QLocale locale;
    switch (index.column()) {
    case ColRun:
        return run.name;
    case ColPolicy:
        return QString::fromStdString(run.experiment.policy);
    case ColDevice:
        return run.device;
    case ColAccuracy:
        return s && std::isfinite(s->val_accuracy)
                   ? QString::number(100.0 * s->val_accuracy, 'f', 2) + "%"
                   : "–";
    case ColMsPerStep:
        return s ? QString::number(s->median_step_ms, 'f', 2) : "–";
    case ColSamplesPerS:
        return s ? locale.toString(std::llround(s->samples_per_s)) : "–";
    case ColSpeedup:
        return s && reference && s->median_step_ms > 0
                   ? QString::number(reference->summary->median_step_ms / s->median_step_ms, 'f',
                                     2) +
                         "×"
                   : "–";
    case ColPeakMemory:
        return mib(peak_bytes(run));
    case ColMemoryRatio:
        return reference ? QString::number(peak_bytes(run) / peak_bytes(*reference), 'f', 2) + "×"
                         : "–";
    case ColSkipped:
        return s ? QString::number(s->skipped_steps)
                 : QString::number(std::count_if(run.steps.begin(), run.steps.end(),
                                                 [](const StepRecord& r) { return r.skipped; }));
    case ColTimeTo97:
        return s && s->seconds_to_97 >= 0 ? QString::number(s->seconds_to_97, 'f', 1) + " s" : "–";
    default:
        return {};
    }
}

} // namespace mantissa::ui
