// The metrics records <-> JSON mapping, written once: each record's fields (JSON name, member,
// value when a file lacks it, and which outputs carry it), read by the JSONL writer, the JSONL
// reader and the CSV/JSON exporter, so a field is spelled in one place (see ARCHITECTURE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor/memory_category.h"
#include "core/train/gradient_histogram.h"
#include "core/train/metrics.h"
#include "core/train/quant_record.h"

namespace mantissa {

// Which outputs carry a field (a bit set).
enum RecordOutput : unsigned {
    kInJsonl = 1,  // the metrics JSONL (writer and reader)
    kInExport = 2, // the exported JSON document (metrics_to_json)
    kInCsv = 4,    // the CSV's columns (metrics_to_csv; memory as "<name>_total")
};

// One field of a record type R.
template <class R>
struct RecordField {
    const char* name;
    std::variant<int R::*, std::int64_t R::*, double R::*, bool R::*, std::size_t R::*,
                 std::string R::*, RunStatus R::*, MemoryByCategory R::*>
        member;
    // A file without the field reads this value (converted to the member's type); nullopt: the
    // field is required. Strings default to "", memory to all zero.
    std::optional<double> fallback = std::nullopt;
    unsigned outputs = kInJsonl | kInExport | kInCsv;
    // A negative value is written as null and null reads back as `fallback` (seconds_to_97: -1
    // means "never").
    bool negative_is_null = false;
};

// In the order the writer and the exporter emit them and the reader checks them.
const std::vector<RecordField<StepRecord>>& step_fields();
const std::vector<RecordField<EpochRecord>>& epoch_fields();
const std::vector<RecordField<RunSummary>>& summary_fields();
// A `quant` record's own fields; its tensors' are quant_tensor_fields().
inline constexpr const char* kQuantStepField = "step";
inline constexpr const char* kQuantTensorsField = "tensors";
// One tensor of a `quant` record: layer, role, format, amax, scale, clipped, flushed, count,
// blocks (the CSV export's quant columns too).
const std::vector<RecordField<QuantTensorRecord>>& quant_tensor_fields();

// The record's fields that `output` carries (kInJsonl or kInExport), without "type". Json is
// nlohmann::json (the JSONL writer: keys sorted) or nlohmann::ordered_json (the export: keys in
// table order). Non-finite numbers become null. For kInJsonl a data-parallel step (ranks > 1)
// adds ranks, rank_step_ms, rank_skipped, allreduce_ms and allreduce_bytes.
template <class Json>
Json record_json(const StepRecord& record, RecordOutput output);
template <class Json>
Json record_json(const EpochRecord& record, RecordOutput output);
template <class Json>
Json record_json(const RunSummary& record, RecordOutput output);

// The `histogram` record without "type": step, loss_scale, bins (the layout of histogram.h),
// layers [{name, activation, weight}] and all {activation, weight}.
nlohmann::json histogram_json(const GradientHistogram& histogram);

// The `quant` record without "type": step and tensors [quant_tensor_fields()]; non-finite
// numbers become null. Json as for record_json.
template <class Json>
Json quant_json(const QuantRecord& record);

// The `log` record without "type": {"message": ...}.
nlohmann::json log_json(const std::string& message);

// Type-checked fields of one parsed JSONL line; every failure throws Error(Data)
// "<where>: field '<name>': <what>" (where = "run-3/metrics.jsonl: line 17").
class RecordReader {
public:
    RecordReader(const nlohmann::json& object, std::string where)
        : m_object(object), m_where(std::move(where)) {}

    [[noreturn]] void fail(const std::string& field, const std::string& what) const;
    const nlohmann::json* find(const std::string& field) const; // nullptr when absent

    // Absent: `fallback`, or an error when there is none. A null number reads as NaN.
    double number(const std::string& field, std::optional<double> fallback = std::nullopt) const;
    std::int64_t integer(const std::string& field,
                         std::optional<std::int64_t> fallback = std::nullopt) const;
    std::size_t size(const std::string& field, std::optional<std::size_t> fallback = {}) const;
    bool boolean(const std::string& field, std::optional<bool> fallback = std::nullopt) const;
    std::string string(const std::string& field, std::optional<std::string> fallback = {}) const;
    // The `mem` object: bytes per category by name; absent (or absent categories): 0.
    MemoryByCategory memory(const std::string& field) const;

    const std::string& where() const { return m_where; }

private:
    const nlohmann::json& m_object;
    std::string m_where;
};

// The records back from a JSONL line (its "type" already dispatched on).
StepRecord step_from_json(const RecordReader& reader);
EpochRecord epoch_from_json(const RecordReader& reader);
RunSummary summary_from_json(const RecordReader& reader);
std::string log_from_json(const RecordReader& reader); // the message ("" when absent)
// A `histogram` record; a bin layout other than histogram.h's is an error naming "bins".
GradientHistogram histogram_from_json(const RecordReader& reader);
// A `quant` record; a bad tensor field's message names "tensors[i]" and the field.
QuantRecord quant_from_json(const RecordReader& reader);

// The JSON name of a record's member ("val_loss" for &EpochRecord::val_loss).
template <class R, class T>
const char* field_name(T R::*member, const std::vector<RecordField<R>>& fields) {
    for (const RecordField<R>& field : fields)
        if (const auto* m = std::get_if<T R::*>(&field.member); m && *m == member)
            return field.name;
    return "?";
}

} // namespace mantissa
