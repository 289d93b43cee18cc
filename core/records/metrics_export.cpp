// Metrics export to CSV and JSON. Numbers are printed with 17 significant digits (round-trip
// exact for doubles) so an exported loss compares equal to the one the run recorded.
#include "core/records/metrics_export.h"

#include <cmath>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "core/io/atomic_file.h"
#include "core/records/metrics_json_values.h"

namespace mantissa {

namespace {

using ojson = nlohmann::ordered_json;

std::string cell(double value) {
    if (!std::isfinite(value)) return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    return buf;
}

ojson number(double value) {
    return json_number<ojson>(value);
}

} // namespace

std::string metrics_to_csv(const RunMetrics& run) {
    // The last step of each epoch carries that epoch's validation, as TensorBoard's CSV would.
    std::map<int, const EpochRecord*> epoch_of;
    for (const EpochRecord& e : run.epochs) epoch_of[e.epoch] = &e;
    std::map<int, std::int64_t> last_step_of;
    for (const StepRecord& s : run.steps) last_step_of[s.epoch] = s.step;

    std::string out = "step,epoch,loss,accuracy,step_ms,samples_per_s,loss_scale,skipped,"
                      "good_steps,mem_total,device_mem_used,val_loss,val_accuracy\n";
    for (const StepRecord& s : run.steps) {
        out += std::to_string(s.step) + ',' + std::to_string(s.epoch) + ',' + cell(s.loss) + ',' +
               cell(s.accuracy) + ',' + cell(s.step_ms) + ',' + cell(s.samples_per_s) + ',' +
               cell(s.loss_scale) + ',' + (s.skipped ? "1" : "0") + ',' +
               std::to_string(s.good_steps) + ',' + std::to_string(s.memory.total()) + ',' +
               std::to_string(s.device_mem_used) + ',';
        const auto epoch = epoch_of.find(s.epoch);
        if (epoch != epoch_of.end() && last_step_of[s.epoch] == s.step)
            out += cell(epoch->second->val_loss) + ',' + cell(epoch->second->val_accuracy);
        else
            out += ',';
        out += '\n';
    }
    return out;
}

std::string metrics_to_json(const RunMetrics& run, const std::string& name,
                            const std::string& status) {
    ojson steps = ojson::array();
    for (const StepRecord& s : run.steps)
        steps.push_back({{"step", s.step},
                         {"epoch", s.epoch},
                         {"loss", number(s.loss)},
                         {"accuracy", number(s.accuracy)},
                         {"step_ms", number(s.step_ms)},
                         {"samples_per_s", number(s.samples_per_s)},
                         {"loss_scale", number(s.loss_scale)},
                         {"skipped", s.skipped},
                         {"good_steps", s.good_steps},
                         {"device_mem_used", s.device_mem_used},
                         {"device_mem_total", s.device_mem_total}});
    ojson epochs = ojson::array();
    for (const EpochRecord& e : run.epochs)
        epochs.push_back({{"epoch", e.epoch},
                          {"steps", e.steps},
                          {"loss", number(e.loss)},
                          {"accuracy", number(e.accuracy)},
                          {"val_loss", number(e.val_loss)},
                          {"val_accuracy", number(e.val_accuracy)},
                          {"seconds", number(e.seconds)},
                          {"median_step_ms", number(e.median_step_ms)},
                          {"skipped_steps", e.skipped_steps},
                          {"loss_scale", number(e.loss_scale)}});
    ojson summary = nullptr;
    if (run.summary) {
        const RunSummary& s = *run.summary;
        summary = {{"status", run_status_name(s.status)},
                   {"message", s.message},
                   {"steps", s.steps},
                   {"epochs", s.epochs},
                   {"train_loss", number(s.train_loss)},
                   {"train_accuracy", number(s.train_accuracy)},
                   {"val_loss", number(s.val_loss)},
                   {"val_accuracy", number(s.val_accuracy)},
                   {"seconds", number(s.seconds)},
                   {"median_step_ms", number(s.median_step_ms)},
                   {"samples_per_s", number(s.samples_per_s)},
                   {"skipped_steps", s.skipped_steps},
                   {"seconds_to_97", s.seconds_to_97 >= 0 ? ojson(s.seconds_to_97) : nullptr},
                   {"peak_memory", s.peak_memory}};
    }
    ojson doc = {
        {"format", "mantissa-metrics"},
        {"version", 1},
        {"name", name},
        {"status", status},
        {"device", {{"id", run.device_id}, {"name", run.device_name}}},
        {"config", run.config ? ojson::parse(experiment_to_json(*run.config)) : ojson(nullptr)},
        {"memory", memory_json<ojson>(run.memory)},
        {"steps", steps},
        {"epochs", epochs},
        {"summary", summary}};
    return doc.dump(1) + "\n";
}

void export_metrics_csv(const RunMetrics& run, const std::string& path) {
    write_file_atomic(path, metrics_to_csv(run));
}

void export_metrics_json(const RunMetrics& run, const std::string& name, const std::string& status,
                         const std::string& path) {
    write_file_atomic(path, metrics_to_json(run, name, status));
}

} // namespace mantissa
