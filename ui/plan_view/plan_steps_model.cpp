// PlanStepsModel: cast rows are tinted amber (activation casts) or violet (weight casts, and more
// lightly the optimizer steps that write the weights' compute copies) so the cost of a policy is
// visible as a count of coloured lines, the way a profiler shows it.
#include "ui/plan_view/plan_steps_model.h"

#include <QApplication>
#include <QFont>
#include <QPalette>

#include "ui/window/theme.h"

namespace mantissa::ui {

namespace {

QString text(const std::string& s) {
    return QString::fromStdString(s);
}

QColor cast_colour(bool weight_cast, const QPalette& palette) {
    if (weight_cast) return is_dark(palette) ? QColor(0xd0, 0x9c, 0xf0) : QColor(0x8e, 0x44, 0xad);
    return is_dark(palette) ? QColor(0xff, 0xc1, 0x4d) : QColor(0xb2, 0x6a, 0x00);
}

} // namespace

QString bytes_text(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (bytes >= 1024.0 && unit < 4) bytes /= 1024.0, ++unit;
    return unit == 0 ? QStringLiteral("%1 B").arg(bytes, 0, 'f', 0)
                     : QStringLiteral("%1 %2").arg(bytes, 0, 'f', 1).arg(units[unit]);
}

QString flops_text(double flops) {
    if (flops <= 0) return QStringLiteral("—");
    const char* units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP"};
    int unit = 0;
    while (flops >= 1000.0 && unit < 4) flops /= 1000.0, ++unit;
    return unit == 0 ? QStringLiteral("%1 FLOP").arg(flops, 0, 'f', 0)
                     : QStringLiteral("%1 %2").arg(flops, 0, 'f', 1).arg(units[unit]);
}

QString duration_text(double ms) {
    if (ms >= 1000.0) return QStringLiteral("%1 s").arg(ms / 1000.0, 0, 'g', 3);
    if (ms >= 1.0) return QStringLiteral("%1 ms").arg(ms, 0, 'g', 3);
    return QStringLiteral("%1 µs").arg(ms * 1000.0, 0, 'g', 3);
}

PlanStepsModel::PlanStepsModel(QObject* parent) : QAbstractTableModel(parent) {}

void PlanStepsModel::set_steps(std::vector<PlanStepRow> steps) {
    beginResetModel();
    m_steps = std::move(steps);
    m_timings.clear();
    endResetModel();
}

void PlanStepsModel::set_timings(std::vector<Timing> timings) {
    m_timings = std::move(timings);
    m_timings.resize(m_timings.empty() ? 0 : m_steps.size());
    if (!m_steps.empty()) emit dataChanged(index(0, Measured), index(rowCount() - 1, Roof));
}

void PlanStepsModel::clear() {
    set_steps({});
}

int PlanStepsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_steps.size());
}

int PlanStepsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PlanStepsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const PlanStepRow& s = m_steps[static_cast<std::size_t>(index.row())];
    const auto row = static_cast<std::size_t>(index.row());
    const Timing timing = row < m_timings.size() ? m_timings[row] : Timing{};
    const bool timing_column = index.column() == Measured || index.column() == Roof;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Index:
            return index.row() + 1;
        case Phase:
            return QString::fromLatin1(step_phase_name(s.phase));
        case Layer:
            return text(s.layer);
        case Op:
            return s.is_cast ? QStringLiteral("⇄ ") + text(s.op) : text(s.op);
        case Dtypes: // one column, input → output, so the table fits beside the diagram
            return s.outputs.empty() ? text(s.inputs)
                                     : text(s.inputs) + QStringLiteral(" → ") + text(s.outputs);
        case Bytes:
            return bytes_text(static_cast<double>(s.bytes));
        case Flops:
            return flops_text(s.flops);
        case Measured:
            return timing.measured ? duration_text(timing.ms) : QString();
        case Roof:
            if (!timing.measured) return {};
            return QStringLiteral("%1 %2").arg(duration_text(timing.roof_ms),
                                               timing.compute_bound ? QStringLiteral("compute")
                                                                    : QStringLiteral("memory"));
        }
        return {};
    case Qt::ToolTipRole: {
        // The timings sit left of the layer and op, which a narrow table may leave past its
        // edge: the tooltip names the step.
        if (timing_column && timing.measured)
            return QStringLiteral("%1%2: measured %3 (median of the timed steps); the device's "
                                  "roof allows %4 for this step's %5 (%6 bound): %7× the roof.")
                .arg(s.layer.empty() ? QString() : text(s.layer) + QStringLiteral(" · "),
                     text(s.op), duration_text(timing.ms), duration_text(timing.roof_ms),
                     timing.compute_bound ? flops_text(s.flops) : bytes_text(double(s.bytes)),
                     timing.compute_bound ? QStringLiteral("compute") : QStringLiteral("memory"),
                     timing.roof_ms > 0 ? QString::number(timing.ms / timing.roof_ms, 'f', 1)
                                        : QStringLiteral("∞"));
        QString tip = text(s.detail);
        if (s.is_cast)
            tip.prepend(s.weight_cast
                            ? QStringLiteral("A cast of a float32 master variable (or of its "
                                             "gradient back to it), inserted by the mixed "
                                             "policy every step.\n")
                            : QStringLiteral("A cast of an activation (or its gradient) to the "
                                             "layer's compute dtype, inserted by the policy.\n"));
        else if (s.weight_cast)
            tip.prepend(QStringLiteral("The optimizer's update of every variable (one pass on "
                                       "the GPU), which also writes the compute-dtype copies of "
                                       "the float32 masters that the next forward reads: the "
                                       "mixed policy's weight casts, in the same pass (as fused "
                                       "optimizers do).\n"));
        return tip;
    }
    case Qt::BackgroundRole:
        // Weight casts are violet wherever they run: their own rows, and an optimizer step that
        // writes a master's compute copy (a lighter tint: the update is most of its work).
        if (s.is_cast || s.weight_cast)
            return blend(QApplication::palette().color(QPalette::Base),
                         cast_colour(s.weight_cast, QApplication::palette()),
                         s.is_cast ? 0.22 : 0.12);
        return {};
    case Qt::ForegroundRole:
        if ((s.is_cast || s.weight_cast) && index.column() == Op)
            return cast_colour(s.weight_cast, QApplication::palette());
        return {};
    case Qt::FontRole:
        if (s.is_cast && index.column() == Op) {
            QFont f = QApplication::font();
            f.setBold(true);
            return f;
        }
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == Bytes || index.column() == Flops || index.column() == Index ||
            timing_column)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::UserRole: // whether the row is a cast, for tests and filters
        return s.is_cast;
    }
    return {};
}

QVariant PlanStepsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case Index:
            return QStringLiteral("#");
        case Phase:
            return QStringLiteral("phase");
        case Layer:
            return QStringLiteral("layer");
        case Op:
            return QStringLiteral("op");
        case Dtypes:
            return QStringLiteral("dtypes in → out");
        case Bytes:
            return QStringLiteral("bytes");
        case Flops:
            return QStringLiteral("FLOPs");
        case Measured:
            return QStringLiteral("measured");
        case Roof:
            return QStringLiteral("roof");
        }
    }
    if (role == Qt::ToolTipRole) {
        if (section == Bytes)
            return QStringLiteral("Bytes the step reads and writes (its distinct input and "
                                  "output tensors), per training step.");
        if (section == Flops)
            return QStringLiteral("Floating-point operations per execution of the step.");
        if (section == Measured)
            return QStringLiteral("The step's time on the engine, the median over the timed "
                                  "steps (Time each step): on a GPU the device's time between "
                                  "events around the step, on the CPU the clock around it.");
        if (section == Roof)
            return QStringLiteral("The least time the device allows for the step's work: its "
                                  "FLOPs at the measured GEMM rate or its bytes at the measured "
                                  "copy rate, whichever is longer, and which of the two bounds "
                                  "it.");
    }
    return {};
}

} // namespace mantissa::ui
