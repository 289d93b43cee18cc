// The experiment's `graph` flag (CUDA Graph capture of a step, issue 17 §4): an experiment file
// that sets it loads, a run with it trains as without it, and the run says once that the flag
// has no effect on this engine (no engine captures yet; the CPU engine never will).
#include <QtTest>

#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/synthetic_mnist.h"
#include "core/train/experiment.h"
#include "core/train/trainer.h"
#include "tests/test_support.h"

using namespace mantissa;
using namespace mantissa::test;

namespace {

struct Outcome {
    std::vector<std::string> logs;
    std::vector<double> losses;
};

Outcome run(bool graph) {
    Experiment e;
    e.name = "graph-flag";
    e.model = mlp_small();
    e.policy = "float32";
    e.optimizer = optimizer_defaults(OptimizerType::RMSprop);
    e.batch_size = 32;
    e.epochs = 1;
    e.max_steps = 3;
    e.device = "cpu";
    e.graph = graph;
    CpuBackend backend;
    Trainer trainer(e, synthetic_mnist(128, 32), backend);
    TrainControl control;
    TrainerCallbacks callbacks;
    Outcome out;
    callbacks.on_log = [&](const std::string& line) { out.logs.push_back(line); };
    callbacks.on_step = [&](const StepRecord& r) { out.losses.push_back(r.loss); };
    trainer.run(control, callbacks);
    return out;
}

int notes(const Outcome& o) {
    int count = 0;
    for (const std::string& line : o.logs)
        if (line.find("graph flag has no effect") != std::string::npos) ++count;
    return count;
}

} // namespace

class TestGraphFlag : public QObject {
    Q_OBJECT

private slots:
    void flagLoadsFromAnExperimentFile() {
        Experiment e = experiment_from_json(
            R"({"format_version": 1, "name": "g", "model": {"input": [28, 28, 1], "layers": [
                {"type": "Flatten"}, {"type": "Dense", "units": 10}]}, "graph": true})",
            "test");
        QVERIFY(e.graph);
    }

    void cpuRunSaysTheFlagHasNoEffect() {
        const Outcome with = run(true);
        const Outcome without = run(false);
        QCOMPARE(notes(with), 1);
        QCOMPARE(notes(without), 0);
        QVERIFY2(with.logs.empty() || with.logs.front().find("CPU engine") != std::string::npos,
                 with.logs.empty() ? "" : with.logs.front().c_str());
        // The flag changes nothing in the numbers.
        QCOMPARE(with.losses.size(), std::size_t(3));
        QCOMPARE(with.losses, without.losses);
    }
};

QTEST_APPLESS_MAIN(TestGraphFlag)
#include "tst_graph_flag.moc"
