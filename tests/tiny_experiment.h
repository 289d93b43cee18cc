// The short CPU run the GUI suites train: mlp-small from the repository, named, for `steps` steps
// of one epoch, so a test gets real metrics, history files and weights in about a second.
#pragma once

#include <QString>
#include <cstdint>

#include "core/train/experiment.h"

inline mantissa::Experiment tiny_experiment(const QString& name, std::int64_t steps) {
    mantissa::Experiment e =
        mantissa::load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");
    e.name = name.toStdString();
    e.device = "cpu";
    e.epochs = 1;
    e.max_steps = steps;
    return e;
}
