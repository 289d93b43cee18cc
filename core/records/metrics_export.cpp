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

// A text cell quoted when it holds a separator, a quote or a line break (RFC 4180): the
// quantise step's format reads "mxfp8_e4m3 1×32 blocks, ...".
std::string text_cell(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + '"';
}

// One CSV cell of a record field: integers as they are, flags 0/1, memory as its total.
template <class R>
std::string field_cell(const R& s, const RecordField<R>& field) {
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
                return text_cell(value);
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
        for (const RecordField<StepRecord>* field : columns) out += field_cell(s, *field) + ',';
        const auto epoch = epoch_of.find(s.epoch);
        if (epoch != epoch_of.end() && last_step_of[s.epoch] == s.step)
            out += cell(epoch->second->val_loss) + ',' + cell(epoch->second->val_accuracy);
        else
            out += ',';
        out += '\n';
    }
    return out;
}

std::string quant_to_csv(const RunMetrics& run) {
    std::vector<const RecordField<QuantTensorRecord>*> columns;
    std::string out = kQuantStepField;
    for (const RecordField<QuantTensorRecord>& field : quant_tensor_fields()) {
        if (!(field.outputs & kInCsv)) continue;
        columns.push_back(&field);
        out += ',';
        out += field.name;
    }
    out += '\n';
    for (const QuantRecord& record : run.quant)
        for (const QuantTensorRecord& t : record.tensors) {
            out += std::to_string(record.step);
            for (const RecordField<QuantTensorRecord>* field : columns)
                out += ',' + field_cell(t, *field);
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
    ojson quant = ojson::array();
    for (const QuantRecord& q : run.quant) quant.push_back(quant_json<ojson>(q));
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
        {"quant", quant},
        {"summary", summary}};
    return doc.dump(1) + "\n";
}

void export_metrics_csv(const RunMetrics& run, const std::string& path) {
    write_file_atomic(path, metrics_to_csv(run));
}

void export_quant_csv(const RunMetrics& run, const std::string& path) {
    write_file_atomic(path, quant_to_csv(run));
}

void export_metrics_json(const RunMetrics& run, const std::string& name, const std::string& status,
                         const std::string& path) {
    write_file_atomic(path, metrics_to_json(run, name, status));
}

} // namespace mantissa
