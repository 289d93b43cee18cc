// Run configuration: what must match for two runs' numbers to be compared — the model, the
// dataset, batch size, optimizer, epochs and step limit (and the TF32 / graph switches) — that is,
// everything but the dtype policy, the loss scaling, the seed and the device. The comparison
// table groups rows by it and takes each row's float32 reference from the same configuration.
#pragma once

#include <QString>
#include <QVector>

#include "core/train/experiment.h"
#include "ui/runs/step_timing.h"

namespace mantissa::ui {

struct RunRecord;

// A canonical text of the configuration (compact JSON with sorted keys): equal exactly when two
// experiments are comparable. Stable across sessions and machines.
QString configuration_key(const Experiment& experiment);
// Four hex digits of the key's SHA-1: a short, stable name for a configuration ("c3f1").
QString configuration_id(const Experiment& experiment);
// What a person reads: "MLP 128-128-10 · batch 128 · rmsprop · 3 epochs" (runs of layers of one
// width shorten to "64×8"; a step limit reads "200 steps"). Two configurations may read alike
// (they differ in the learning rate, say): the key tells them apart.
QString configuration_label(const Experiment& experiment);

// What the comparison needs to know of a run, computed once per change (the key and the timing
// cost a JSON round trip and a sort).
struct RunFacts {
    QString key;             // configuration_key
    QString policy;          // "float32", ...
    QString device;          // the engine the run used
    bool comparable = false; // finished_with_timing
    StepTiming timing;
    double model_bytes = 0;   // the model's own memory (no dataset)
    double dataset_bytes = 0; // the resident dataset
};
RunFacts facts_of(const RunRecord& run);
// Whether a run's numbers can be compared: it ended (completed or stopped) with timed steps.
bool finished_with_timing(const RunRecord& run);

// The float32 reference of runs[index]: the float32 runs of the same configuration on the same
// device that finished with timed steps. Several (repeats) make one reference: the median of their
// medians (and of their quartiles). Empty `runs` when there is none.
struct Baseline {
    QVector<int> runs;      // indices into `runs`, oldest first
    StepTiming timing;      // the reference's median and spread
    double model_bytes = 0; // the float32 model's own memory (no dataset)
    bool found() const { return !runs.isEmpty(); }
};
Baseline float32_baseline(const QVector<RunFacts>& runs, qsizetype index);

} // namespace mantissa::ui
