// ComparisonModel: derives every column from the runs' step records, so the table is always
// consistent with the charts. A ratio needs a float32 reference of the same configuration on the
// same device (run_configuration.h); without one the cell says so instead of dividing by an
// unrelated run. Step times are medians after warm-up (step_timing.h), and a speedup whose
// interquartile range overlaps the reference's is marked "≈": it is within the noise.
#include "ui/runs/comparison_model.h"

#include <QApplication>
#include <QBrush>
#include <QLocale>
#include <QPalette>
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/numeric/policy.h"
#include "ui/runs/model_memory.h"
#include "ui/runs/run_store.h"

namespace mantissa::ui {

namespace {

QString mib(double bytes) {
    return QString::number(bytes / (1024.0 * 1024.0), 'f', bytes < 10 * 1024.0 * 1024 ? 2 : 1) +
           " MiB";
}

// 814,120 bytes as "795 KiB", larger as MiB: the allreduce payload per step.
QString payload(std::int64_t bytes) {
    const double b = static_cast<double>(bytes);
    if (b >= 1024.0 * 1024.0) return mib(b);
    if (b >= 1024.0) return QString::number(b / 1024.0, 'f', b < 10 * 1024.0 ? 1 : 0) + " KiB";
    return QString::number(bytes) + " B";
}

QString ms(double value) {
    return QString::number(value, 'f', value < 10 ? 2 : 1);
}

// Whether the CPU engine ran the run in a format it emulates in software (16-bit or quantised
// compute): its step time measures the emulation, not what the format does on a GPU (issue 28).
bool cpu_emulated(const RunRecord& run) {
    if (!run.device.startsWith(QStringLiteral("CPU"))) return false;
    try {
        const Policy p = policy_from_name(run.experiment.policy);
        return p.quant.has_value() || (p.compute != DType::Float32 && p.compute != DType::Float64);
    } catch (const Error&) {
        return false; // an unknown policy name: the policy column says so
    }
}

} // namespace

ComparisonModel::ComparisonModel(RunStore* store, QObject* parent)
    : QAbstractTableModel(parent), m_store(store) {
    auto reset = [this] {
        beginResetModel();
        m_facts_fresh = false;
        rebuild_rows();
        endResetModel();
    };
    connect(store, &RunStore::run_added, this, reset);
    // The table follows the charts: a lesson's or "show only these" runs, not every run kept.
    connect(store, &RunStore::visibility_changed, this, reset);
    connect(store, &RunStore::run_removed, this, [this, reset](int id) {
        m_by_id.remove(id);
        reset();
    });
    connect(store, &RunStore::run_changed, this, [this](int id) {
        m_by_id.remove(id);
        m_facts_fresh = false;
        // One run's change moves every row of its configuration (the reference may change).
        if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    });
    rebuild_rows();
}

const QVector<RunFacts>& ComparisonModel::facts() const {
    if (m_facts_fresh && m_facts.size() == m_store->runs().size()) return m_facts;
    m_facts.clear();
    for (const RunRecord& run : m_store->runs()) {
        auto it = m_by_id.find(run.id);
        if (it == m_by_id.end()) it = m_by_id.insert(run.id, facts_of(run));
        m_facts.append(*it);
    }
    m_facts_fresh = true;
    return m_facts;
}

void ComparisonModel::rebuild_rows() {
    // Configurations in the order their first run appeared; within one, runs in order.
    const QVector<RunFacts>& all = facts();
    QStringList keys;
    QVector<QVector<int>> groups;
    for (int i = 0; i < all.size(); ++i) {
        qsizetype g = keys.indexOf(all[i].key);
        if (g < 0) {
            keys.append(all[i].key);
            groups.append(QVector<int>{});
            g = keys.size() - 1;
        }
        groups[g].append(i);
    }
    m_rows.clear();
    m_row_group.clear();
    int shown_group = -1; // groups numbered among the shown rows, for the shading
    for (const QVector<int>& group : groups) {
        bool any = false;
        for (int i : group) {
            if (!m_store->runs()[i].visible) continue; // hidden runs still serve as references
            if (!any) ++shown_group;
            any = true;
            m_rows.append(i);
            m_row_group.append(shown_group);
        }
    }
}

int ComparisonModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ComparisonModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

int ComparisonModel::run_id(int row) const {
    if (row < 0 || row >= m_rows.size() || m_rows[row] >= m_store->runs().size()) return -1;
    return m_store->runs()[m_rows[row]].id;
}

QString ComparisonModel::no_baseline_text() {
    return tr("no float32 run of this configuration");
}

QString ComparisonModel::label_of(qsizetype index) const {
    const QVector<RunFacts>& all = facts();
    const RunRecord& run = m_store->runs()[index];
    const QString label = configuration_label(run.experiment);
    // Two configurations that read alike (they differ in an activation, say) get their ids.
    for (qsizetype i = 0; i < all.size(); ++i)
        if (all[i].key != all[index].key &&
            configuration_label(m_store->runs()[i].experiment) == label)
            return label + QStringLiteral(" [%1]").arg(configuration_id(run.experiment));
    return label;
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    static const char* names[] = {
        "Configuration", "Run",     "Policy",       "Speedup vs f32", "ms/step",
        "Test acc.",     "p25–p75", "Model memory", "Memory vs f32",  "Dataset",
        "samples/s",     "Skipped", "Time to 97%",  "Allreduce/step", "Device"};
    static const char* tips[] = {
        "What the runs of a group share: model, batch size, optimizer, epochs or steps. Ratios "
        "compare only within one configuration",
        "The run, in its chart colour",
        "The global dtype policy",
        "The float32 run's median step time (same configuration, same device) divided by this "
        "run's; ≈ marks a ratio within the step-to-step noise (the p25–p75 ranges overlap and "
        "the medians are within 1.5× of each other)",
        "Median training step time after warm-up: the first 10% of the steps (at least 5, at "
        "most half) are left out, as they pay for allocation and caches",
        "Accuracy on the 10,000 test images after the last epoch",
        "The spread of the step times after warm-up: half of the steps took between these two "
        "times (interquartile range)",
        "The model's own memory: weights, master weights, activations, gradients, optimizer "
        "state and workspace (the resident dataset is in its own column)",
        "This run's model memory divided by the float32 run's of the same configuration",
        "The dataset kept resident beside the model: the same under every policy",
        "Training examples per second: the median after warm-up",
        "Steps whose update the dynamic loss scaler skipped (non-finite gradients)",
        "Training seconds until the test accuracy first reached 97%",
        "Data-parallel runs (mpirun ... --data-parallel): the gradient bytes each rank puts into "
        "the allreduce per step, in the allreduce dtype (bfloat16 and float16 halve float32's); "
        "– for a one-process run",
        "The engine the run used (and the ranks of a data-parallel run)"};
    if (section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) return QString::fromUtf8(names[section]);
    if (role == Qt::ToolTipRole) return QString::fromUtf8(tips[section]);
    return {};
}

QVariant ComparisonModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const qsizetype i = m_rows[index.row()];
    if (i >= m_store->runs().size()) return {};
    const RunRecord& run = m_store->runs()[i];
    const QVector<RunFacts>& all = facts();
    const RunFacts& f = all[i];
    const int column = index.column();
    if (role == Qt::DecorationRole && column == ColRun) return run.color;
    if (role == Qt::TextAlignmentRole && column != ColConfiguration && column != ColRun &&
        column != ColPolicy && column != ColDevice)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::BackgroundRole && m_row_group[index.row()] % 2 == 1)
        return QApplication::palette().brush(QPalette::AlternateBase); // every other group
    // The configuration is read once per group: the repeats below its first row are faint.
    if (role == Qt::ForegroundRole && column == ColConfiguration && index.row() > 0 &&
        m_row_group[index.row() - 1] == m_row_group[index.row()])
        return QApplication::palette().brush(QPalette::Disabled, QPalette::Text);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};

    const bool tip = role == Qt::ToolTipRole;
    const RunSummary* s = run.summary ? &*run.summary : nullptr;
    const bool is_reference = f.policy == QLatin1String("float32");
    const auto baseline = [&] { return float32_baseline(all, i); };
    const QString dash = QStringLiteral("–");
    switch (column) {
    case ColConfiguration:
        if (tip) {
            QString text =
                tr("Configuration %1: %2 · learning rate %3 · seed and policy aside, "
                   "every run of this group trained the same model on the same data")
                    .arg(configuration_id(run.experiment), configuration_label(run.experiment))
                    .arg(run.experiment.optimizer.learning_rate, 0, 'g', 4);
            // Data parallelism keeps the global batch: the run belongs to the same group.
            if (const QString parallel = data_parallel_text(run); !parallel.isEmpty())
                text += tr(". This run: data-parallel, %1").arg(parallel);
            return text;
        }
        return label_of(i);
    case ColRun:
        return run.name;
    case ColPolicy:
        return f.policy;
    case ColDevice: {
        const QString parallel = tip ? data_parallel_text(run) : ranks_text(run);
        if (parallel.isEmpty()) return run.device;
        return run.device + (tip ? QStringLiteral("\ndata-parallel: ") : QStringLiteral(" · ")) +
               parallel;
    }
    case ColAccuracy:
        if (tip) return {};
        return s && std::isfinite(s->val_accuracy)
                   ? QString::number(100.0 * s->val_accuracy, 'f', 2) + "%"
                   : dash;
    case ColMsPerStep:
        if (tip)
            return f.timing.valid()
                       ? tr("Median of %1 step times; the first %2 of %3 steps were warm-up")
                             .arg(f.timing.timed)
                             .arg(f.timing.warmup)
                             .arg(f.timing.steps)
                       : tr("No timed steps yet");
        return f.timing.valid() ? ms(f.timing.median_ms) : dash;
    case ColSpread:
        if (tip) return {};
        return f.timing.valid()
                   ? QStringLiteral("%1–%2").arg(ms(f.timing.p25_ms), ms(f.timing.p75_ms))
                   : dash;
    case ColSamplesPerS:
        if (tip) return {};
        return f.timing.valid() ? QLocale().toString(std::llround(f.timing.samples_per_s)) : dash;
    case ColSpeedup: {
        if (!f.comparable) return tip ? tr("The run has not finished with timed steps") : dash;
        const Baseline b = baseline();
        if (!b.found())
            return tip ? no_baseline_text() + tr(" on this device") : no_baseline_text();
        const double ratio = b.timing.median_ms / f.timing.median_ms;
        const bool noise = within_noise(b.timing, f.timing);
        if (tip) {
            QString text = tr("float32: %1 ms/step (median of %2 run(s)); this run: %3 ms/step")
                               .arg(ms(b.timing.median_ms))
                               .arg(b.runs.size())
                               .arg(ms(f.timing.median_ms));
            if (noise)
                text += tr(". The p25–p75 ranges overlap: the difference is within the noise");
            if (cpu_emulated(run))
                text += tr(". The CPU engine emulates %1 in software, so this ratio measures the "
                           "emulation, not what the format does on a GPU")
                            .arg(QString::fromStdString(run.experiment.policy));
            return text;
        }
        if (is_reference && b.runs.size() == 1) return QStringLiteral("1.00× (ref)");
        return (noise ? QStringLiteral("≈") : QString()) + QString::number(ratio, 'f', 2) + "×" +
               (cpu_emulated(run) ? tr(" emulated") : QString());
    }
    case ColModelMemory:
        if (tip) {
            const MemoryByCategory memory = latest_memory(run);
            QStringList parts;
            for (MemCategory c : model_categories())
                parts << QStringLiteral("%1 %2").arg(QString::fromLatin1(mem_category_name(c)),
                                                     mib(static_cast<double>(memory[c])));
            return parts.join(QStringLiteral(" + "));
        }
        return f.model_bytes > 0 ? mib(f.model_bytes) : dash;
    case ColMemoryRatio: {
        if (f.model_bytes <= 0) return tip ? QVariant() : QVariant(dash);
        const Baseline b = baseline();
        if (!b.found() || b.model_bytes <= 0)
            return tip ? no_baseline_text() + tr(" on this device") : no_baseline_text();
        if (tip)
            return tr("Model memory (dataset excluded) against float32's %1")
                .arg(mib(b.model_bytes));
        return QString::number(f.model_bytes / b.model_bytes, 'f', 2) + "×";
    }
    case ColDataset:
        if (tip) return {};
        return f.dataset_bytes > 0 ? mib(f.dataset_bytes) : dash;
    case ColSkipped:
        if (tip) return {};
        return s ? QString::number(s->skipped_steps)
                 : QString::number(std::count_if(run.steps.begin(), run.steps.end(),
                                                 [](const StepRecord& r) { return r.skipped; }));
    case ColTimeTo97:
        if (tip) return {};
        return s && s->seconds_to_97 >= 0 ? QString::number(s->seconds_to_97, 'f', 1) + " s" : dash;
    case ColAllreduceBytes: {
        const std::optional<std::int64_t> bytes = allreduce_bytes_per_step(run);
        if (!bytes) return tip ? tr("One process: no gradient allreduce") : dash;
        if (tip)
            return tr("%1 bytes per rank per step · %2")
                .arg(QLocale().toString(static_cast<qlonglong>(*bytes)), data_parallel_text(run));
        return payload(*bytes);
    }
    default:
        return {};
    }
}

} // namespace mantissa::ui
