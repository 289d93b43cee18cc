// Run configuration (see run_configuration.h): the key is built from the experiment writer's own
// JSON, so a field added to the experiment format joins the comparison only if listed here.
#include "ui/runs/run_configuration.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <algorithm>

#include "ui/runs/model_memory.h"
#include "ui/runs/run_record.h"

namespace mantissa::ui {

namespace {

// The experiment file's fields that make two runs comparable; the policy, loss scaling, seed,
// device, histogram interval and divergence handling do not.
constexpr const char* kConfigurationFields[] = {"dataset", "model",     "batch_size", "optimizer",
                                                "epochs",  "max_steps", "tf32",       "graph"};

// "128-128-10", "c32-c64-128-10", "64×8-10", "128-bn-128-10": the widths of the layers with
// weights, and where a BatchNormalization ("bn") or LayerNormalization ("ln") sits among them.
QString widths(const ModelSpec& model) {
    QStringList tokens;
    for (const LayerSpec& layer : model.layers) {
        if (layer.type == LayerType::Dense) tokens << QString::number(layer.units);
        if (layer.type == LayerType::Conv2D) tokens << QStringLiteral("c%1").arg(layer.filters);
        if (layer.type == LayerType::BatchNormalization) tokens << QStringLiteral("bn");
        if (layer.type == LayerType::LayerNormalization) tokens << QStringLiteral("ln");
    }
    QStringList out;
    for (qsizetype i = 0; i < tokens.size();) {
        qsizetype run = 1;
        while (i + run < tokens.size() && tokens[i + run] == tokens[i]) ++run;
        if (run >= 3)
            out << QStringLiteral("%1×%2").arg(tokens[i]).arg(run);
        else
            for (qsizetype k = 0; k < run; ++k) out << tokens[i];
        i += run;
    }
    return out.join(QLatin1Char('-'));
}

bool has_conv(const ModelSpec& model) {
    return std::any_of(model.layers.begin(), model.layers.end(),
                       [](const LayerSpec& l) { return l.type == LayerType::Conv2D; });
}

// A run that completed, or that the user stopped, has numbers worth comparing; a diverged or failed
// one has not, and a running one is not done yet.
bool ended_normally(RunState state) {
    return state == RunState::Completed || state == RunState::Stopped;
}

} // namespace

QString configuration_key(const Experiment& experiment) {
    const QJsonObject all =
        QJsonDocument::fromJson(QByteArray::fromStdString(experiment_to_json(experiment))).object();
    QJsonObject key;
    for (const char* field : kConfigurationFields) {
        const QString name = QString::fromLatin1(field);
        key.insert(name, all.value(name)); // absent in the file: null, the same for everyone
    }
    // Layer names are labels ("dense_1" or the user's): they change no number.
    QJsonObject model = key.value(QStringLiteral("model")).toObject();
    QJsonArray layers = model.value(QStringLiteral("layers")).toArray();
    for (qsizetype i = 0; i < layers.size(); ++i) {
        QJsonObject layer = layers[i].toObject();
        layer.remove(QStringLiteral("name"));
        layers[i] = layer;
    }
    model.insert(QStringLiteral("layers"), layers);
    key.insert(QStringLiteral("model"), model);
    return QString::fromUtf8(QJsonDocument(key).toJson(QJsonDocument::Compact));
}

QString configuration_id(const Experiment& experiment) {
    const QByteArray hash =
        QCryptographicHash::hash(configuration_key(experiment).toUtf8(), QCryptographicHash::Sha1);
    return QString::fromLatin1(hash.toHex().left(4));
}

QString configuration_label(const Experiment& e) {
    QString label =
        (has_conv(e.model) ? QStringLiteral("CNN ") : QStringLiteral("MLP ")) + widths(e.model);
    if (e.dataset != "mnist") label += QStringLiteral(" · ") + QString::fromStdString(e.dataset);
    // The learning rate and the rest are in the key and the tooltip: the label stays short.
    label += QStringLiteral(" · batch %1 · %2")
                 .arg(e.batch_size)
                 .arg(QString::fromLatin1(optimizer_type_name(e.optimizer.type)));
    // Another convention's formulas make another configuration (its key holds the optimizer).
    if (e.optimizer.convention != OptimizerConvention::Keras)
        label += QStringLiteral(" (%1)").arg(
            QString::fromLatin1(optimizer_convention_name(e.optimizer.convention)));
    if (e.max_steps > 0)
        label += QStringLiteral(" · %1 steps").arg(e.max_steps);
    else
        label += e.epochs == 1 ? QStringLiteral(" · 1 epoch")
                               : QStringLiteral(" · %1 epochs").arg(e.epochs);
    if (e.tf32) label += QStringLiteral(" · TF32");
    if (e.graph) label += QStringLiteral(" · graph");
    return label;
}

bool finished_with_timing(const RunRecord& run) {
    return ended_normally(run.state) && step_timing(run.steps).valid();
}

RunFacts facts_of(const RunRecord& run) {
    RunFacts f;
    f.key = configuration_key(run.experiment);
    f.policy = QString::fromStdString(run.experiment.policy);
    // A data-parallel run is its own set-up: its float32 reference is a float32 run with as many
    // ranks, and a one-process run's is not a data-parallel one.
    f.device = run.device;
    if (const QString ranks = ranks_text(run); !ranks.isEmpty()) f.device += " · " + ranks;
    f.timing = step_timing(run.steps);
    f.comparable = ended_normally(run.state) && f.timing.valid();
    const MemoryByCategory memory = latest_memory(run);
    f.model_bytes = static_cast<double>(model_bytes(memory));
    f.dataset_bytes = static_cast<double>(dataset_bytes(memory));
    return f;
}

Baseline float32_baseline(const QVector<RunFacts>& runs, qsizetype index) {
    Baseline out;
    if (index < 0 || index >= runs.size()) return out;
    const RunFacts& run = runs[index];
    QVector<double> medians, p25s, p75s;
    for (qsizetype i = 0; i < runs.size(); ++i) {
        const RunFacts& other = runs[i];
        if (other.policy != QLatin1String("float32") || other.device != run.device ||
            !other.comparable || other.key != run.key)
            continue;
        out.runs.append(static_cast<int>(i));
        medians.append(other.timing.median_ms);
        p25s.append(other.timing.p25_ms);
        p75s.append(other.timing.p75_ms);
        out.model_bytes = other.model_bytes; // the same plan every time: the latest will do
    }
    if (out.runs.isEmpty()) return out;
    out.timing.steps = out.timing.timed = static_cast<int>(out.runs.size());
    out.timing.median_ms = quantile(medians, 0.5);
    out.timing.p25_ms = quantile(p25s, 0.5);
    out.timing.p75_ms = quantile(p75s, 0.5);
    return out;
}

} // namespace mantissa::ui
