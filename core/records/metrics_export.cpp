// Metrics export to CSV and JSON. Numbers are printed with 17 significant digits (round-trip
// exact for doubles) so an exported loss compares equal to the one the run recorded.
#include "core/records/metrics_export.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/atomic_file.h"
#include "core/records/metrics_json_values.h"
#include "core/records/metrics_record_json.h"

namespace mantissa {

namespace {

using ojson = nlohmann::ordered_json;

std::string cell(double value) {
    if (!std::isfinite(value)) return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    return buf;
}

// One CSV cell of a step field: integers as they are, flags 0/1, memory as its total.
std::string step_cell(const StepRecord& s, const RecordField<StepRecord>& field) {
    return std::visit(
        [&](auto member) -> std::string {
            using T = std::remove_cvref_t<decltype(s.*member)>;
            const T& value = s.*member;
            if constexpr (std::is_same_v<T, double>)
                return cell(value);
            else if constexpr (std::is_same_v<T, bool>)
                return value ? "1" : "0";
            else if constexpr (std::is_same_v<T, MemoryByCategory>)
                return std::to_string(value.total());
            else if constexpr (std::is_same_v<T, std::string>)
                return value;
            else if constexpr (std::is_same_v<T, RunStatus>)
                return run_status_name(value);
            else
                return std::to_string(value);
        },
        field.member);
}

} // namespace

std::string metrics_to_csv(const RunMetrics& run) {
    // The last step of each epoch carries that epoch's validation, as TensorBoard's CSV would.
    std::map<int, const EpochRecord*> epoch_of;
    for (const EpochRecord& e : run.epochs) epoch_of[e.epoch] = &e;
    std::map<int, std::int64_t> last_step_of;
    for (const StepRecord& s : run.steps) last_step_of[s.epoch] = s.step;

    std::vector<const RecordField<StepRecord>*> columns;
    std::string out;
    for (const RecordField<StepRecord>& field : step_fields()) {
        if (!(field.outputs & kInCsv)) continue;
        columns.push_back(&field);
        out += field.name;
        if (std::holds_alternative<MemoryByCategory StepRecord::*>(field.member)) out += "_total";
        out += ',';
    }
    // The epoch's validation closes each row (on the epoch's last step).
    out += std::string(field_name(&EpochRecord::val_loss, epoch_fields())) + ',' +
           field_name(&EpochRecord::val_accuracy, epoch_fields()) + '\n';
    for (const StepRecord& s : run.steps) {
        for (const RecordField<StepRecord>* field : columns) out += step_cell(s, *field) + ',';
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
    for (const StepRecord& s : run.steps) steps.push_back(record_json<ojson>(s, kInExport));
    ojson epochs = ojson::array();
    for (const EpochRecord& e : run.epochs) epochs.push_back(record_json<ojson>(e, kInExport));
    ojson summary = nullptr;
    if (run.summary) summary = record_json<ojson>(*run.summary, kInExport);
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
