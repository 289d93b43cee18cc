// The metrics records' field tables and the JSON both sides of a metrics file share. A field
// added to StepRecord, EpochRecord or RunSummary is added to its table here and nowhere else.
#include "core/records/metrics_record_json.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "core/error.h"
#include "core/records/metrics_json_values.h"

namespace mantissa {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

template <class R>
using Fields = std::vector<RecordField<R>>;

constexpr unsigned kFileAndExport = kInJsonl | kInExport;

template <class Json, class R>
Json fields_json(const R& record, const Fields<R>& fields, RecordOutput output) {
    Json out = Json::object();
    for (const RecordField<R>& field : fields) {
        if (!(field.outputs & output)) continue;
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(record.*member)>;
                const T& value = record.*member;
                if constexpr (std::is_same_v<T, double>) {
                    out[field.name] = field.negative_is_null && value < 0
                                          ? Json(nullptr)
                                          : json_number<Json>(value);
                } else if constexpr (std::is_same_v<T, RunStatus>) {
                    out[field.name] = run_status_name(value);
                } else if constexpr (std::is_same_v<T, MemoryByCategory>) {
                    out[field.name] = memory_json<Json>(value);
                } else {
                    out[field.name] = value;
                }
            },
            field.member);
    }
    return out;
}

RunStatus status_from_name(const RecordReader& r, const std::string& field,
                           const std::string& name) {
    for (RunStatus s :
         {RunStatus::Completed, RunStatus::Stopped, RunStatus::Diverged, RunStatus::Failed})
        if (name == run_status_name(s)) return s;
    r.fail(field,
           "unknown status '" + name + "' (expected completed, stopped, diverged or failed)");
}

template <class R>
R fields_from_json(const RecordReader& r, const Fields<R>& fields) {
    R record;
    for (const RecordField<R>& field : fields) {
        if (!(field.outputs & kInJsonl)) continue;
        const std::string name = field.name;
        const std::optional<double> fallback = field.fallback;
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(record.*member)>;
                T& value = record.*member;
                if constexpr (std::is_same_v<T, int> || std::is_same_v<T, std::int64_t>) {
                    value = static_cast<T>(r.integer(
                        name,
                        fallback ? std::optional<std::int64_t>(static_cast<std::int64_t>(*fallback))
                                 : std::nullopt));
                } else if constexpr (std::is_same_v<T, double>) {
                    value = r.number(name, fallback);
                    if (field.negative_is_null && std::isnan(value)) value = fallback.value_or(-1);
                } else if constexpr (std::is_same_v<T, bool>) {
                    value = r.boolean(name, fallback ? std::optional<bool>(*fallback != 0)
                                                     : std::nullopt);
                } else if constexpr (std::is_same_v<T, std::size_t>) {
                    value = r.size(name, fallback ? std::optional<std::size_t>(
                                                        static_cast<std::size_t>(*fallback))
                                                  : std::nullopt);
                } else if constexpr (std::is_same_v<T, std::string>) {
                    value = r.string(name, fallback ? std::optional<std::string>(std::string())
                                                    : std::nullopt);
                } else if constexpr (std::is_same_v<T, RunStatus>) {
                    value = status_from_name(r, name, r.string(name));
                } else {
                    value = r.memory(name);
                }
            },
            field.member);
    }
    return record;
}

json counts_json(const ExponentCounts& counts) {
    return json(std::vector<std::int64_t>(counts.bins.begin(), counts.bins.end()));
}

} // namespace

const std::vector<RecordField<StepRecord>>& step_fields() {
    using S = StepRecord;
    static const Fields<S> fields = {
        {"step", &S::step},
        {"epoch", &S::epoch},
        {"loss", &S::loss},
        {"accuracy", &S::accuracy},
        {"step_ms", &S::step_ms},
        {"samples_per_s", &S::samples_per_s},
        {"loss_scale", &S::loss_scale},
        {"skipped", &S::skipped},
        {"good_steps", &S::good_steps, 0.0},
        // The rate this step's update used (or would have: a skipped step); 0 in older files.
        {"learning_rate", &S::learning_rate, 0.0},
        // Constant for a compiled plan: the export keeps it once, in its "memory".
        {"mem", &S::memory, std::nullopt, kInJsonl | kInCsv},
        {"device_mem_used", &S::device_mem_used, 0.0},
        {"device_mem_total", &S::device_mem_total, 0.0, kFileAndExport},
    };
    return fields;
}

const std::vector<RecordField<EpochRecord>>& epoch_fields() {
    using E = EpochRecord;
    static const Fields<E> fields = {
        {"epoch", &E::epoch, std::nullopt, kFileAndExport},
        {"steps", &E::steps, 0.0, kFileAndExport},
        {"loss", &E::loss, std::nullopt, kFileAndExport},
        {"accuracy", &E::accuracy, std::nullopt, kFileAndExport},
        {"val_loss", &E::val_loss, std::nullopt, kFileAndExport},
        {"val_accuracy", &E::val_accuracy, std::nullopt, kFileAndExport},
        {"seconds", &E::seconds, 0.0, kFileAndExport},
        {"median_step_ms", &E::median_step_ms, 0.0, kFileAndExport},
        {"skipped_steps", &E::skipped_steps, 0.0, kFileAndExport},
        {"loss_scale", &E::loss_scale, 1.0, kFileAndExport},
    };
    return fields;
}

const std::vector<RecordField<RunSummary>>& summary_fields() {
    using R = RunSummary;
    static const Fields<R> fields = {
        {"status", &R::status, std::nullopt, kFileAndExport},
        {"message", &R::message, 0.0, kFileAndExport},
        {"steps", &R::steps, std::nullopt, kFileAndExport},
        {"epochs", &R::epochs, 0.0, kFileAndExport},
        {"train_loss", &R::train_loss, std::nullopt, kFileAndExport},
        {"train_accuracy", &R::train_accuracy, std::nullopt, kFileAndExport},
        {"val_loss", &R::val_loss, std::nullopt, kFileAndExport},
        {"val_accuracy", &R::val_accuracy, std::nullopt, kFileAndExport},
        {"seconds", &R::seconds, 0.0, kFileAndExport},
        {"median_step_ms", &R::median_step_ms, 0.0, kFileAndExport},
        {"samples_per_s", &R::samples_per_s, 0.0, kFileAndExport},
        {"skipped_steps", &R::skipped_steps, 0.0, kFileAndExport},
        // null means "never reached 97%", which RunSummary spells -1.
        {"seconds_to_97", &R::seconds_to_97, -1.0, kFileAndExport, true},
        {"peak_memory", &R::peak_memory, 0.0, kFileAndExport},
    };
    return fields;
}

const std::vector<RecordField<QuantTensorRecord>>& quant_tensor_fields() {
    using Q = QuantTensorRecord;
    static const Fields<Q> fields = {
        {"layer", &Q::layer},     {"role", &Q::role},   {"format", &Q::format},
        {"amax", &Q::amax},       {"scale", &Q::scale}, {"clipped", &Q::clipped},
        {"flushed", &Q::flushed}, {"count", &Q::count}, {"blocks", &Q::blocks},
    };
    return fields;
}

template <class Json>
Json record_json(const StepRecord& r, RecordOutput output) {
    Json line = fields_json<Json>(r, step_fields(), output);
    // The skipped-step ledger: only on steps with non-finite gradients (older readers skip it).
    if (output == kInJsonl && !r.overflowed.empty()) line["overflowed"] = r.overflowed;
    if (output == kInJsonl && r.ranks > 1) {
        line["ranks"] = r.ranks;
        line["rank_step_ms"] = r.rank_step_ms;
        line["rank_skipped"] = r.rank_skipped;
        line["allreduce_ms"] = r.allreduce_ms;
        line["allreduce_bytes"] = r.allreduce_bytes;
    }
    return line;
}

template <class Json>
Json record_json(const EpochRecord& r, RecordOutput output) {
    return fields_json<Json>(r, epoch_fields(), output);
}

template <class Json>
Json record_json(const RunSummary& r, RecordOutput output) {
    return fields_json<Json>(r, summary_fields(), output);
}

template json record_json<json>(const StepRecord&, RecordOutput);
template ojson record_json<ojson>(const StepRecord&, RecordOutput);
template json record_json<json>(const EpochRecord&, RecordOutput);
template ojson record_json<ojson>(const EpochRecord&, RecordOutput);
template json record_json<json>(const RunSummary&, RecordOutput);
template ojson record_json<ojson>(const RunSummary&, RecordOutput);

json histogram_json(const GradientHistogram& h) {
    json layers = json::array();
    for (const LayerGradientHistogram& layer : h.layers) {
        json entry = {{"name", layer.layer}, {"activation", counts_json(layer.activation)}};
        entry["weight"] = layer.has_weights ? counts_json(layer.weight) : json(nullptr);
        layers.push_back(std::move(entry));
    }
    // The bins' layout travels with the record so a reader needs no header file.
    return {
        {"step", h.step},
        {"loss_scale", h.loss_scale},
        {"bins",
         {{"zero", kHistogramZeroBin},
          {"min_exponent", kHistogramMinExp},
          {"max_exponent", kHistogramMaxExp},
          {"non_finite", kHistogramNonFiniteBin}}},
        {"layers", layers},
        {"all",
         {{"activation", counts_json(h.all_activation)}, {"weight", counts_json(h.all_weight)}}}};
}

template <class Json>
Json quant_json(const QuantRecord& record) {
    Json tensors = Json::array();
    for (const QuantTensorRecord& t : record.tensors)
        tensors.push_back(fields_json<Json>(t, quant_tensor_fields(), kInJsonl));
    Json out = Json::object();
    out[kQuantStepField] = record.step;
    out[kQuantTensorsField] = std::move(tensors);
    return out;
}

template json quant_json<json>(const QuantRecord&);
template ojson quant_json<ojson>(const QuantRecord&);

json log_json(const std::string& message) {
    return {{"message", message}};
}

// --- reading ----------------------------------------------------------------------------------

namespace {

std::string type_of(const json& value) {
    if (value.is_number()) return "the number " + value.dump();
    return std::string(value.type_name());
}

} // namespace

void RecordReader::fail(const std::string& field, const std::string& what) const {
    throw Error(ErrorKind::Data, m_where + ": field '" + field + "': " + what);
}

const json* RecordReader::find(const std::string& field) const {
    const auto it = m_object.find(field);
    return it == m_object.end() ? nullptr : &*it;
}

double RecordReader::number(const std::string& field, std::optional<double> fallback) const {
    const json* value = find(field);
    if (!value) {
        if (fallback) return *fallback;
        fail(field, "missing");
    }
    if (value->is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!value->is_number()) fail(field, "expected a number, got " + type_of(*value));
    return value->get<double>();
}

std::int64_t RecordReader::integer(const std::string& field,
                                   std::optional<std::int64_t> fallback) const {
    const json* value = find(field);
    if (!value) {
        if (fallback) return *fallback;
        fail(field, "missing");
    }
    if (!value->is_number_integer()) fail(field, "expected an integer, got " + type_of(*value));
    return value->get<std::int64_t>();
}

std::size_t RecordReader::size(const std::string& field,
                               std::optional<std::size_t> fallback) const {
    const std::int64_t v =
        integer(field, fallback ? std::optional<std::int64_t>(static_cast<std::int64_t>(*fallback))
                                : std::nullopt);
    if (v < 0) fail(field, "expected a byte count >= 0, got " + std::to_string(v));
    return static_cast<std::size_t>(v);
}

bool RecordReader::boolean(const std::string& field, std::optional<bool> fallback) const {
    const json* value = find(field);
    if (!value) {
        if (fallback) return *fallback;
        fail(field, "missing");
    }
    if (!value->is_boolean()) fail(field, "expected true or false, got " + type_of(*value));
    return value->get<bool>();
}

std::string RecordReader::string(const std::string& field,
                                 std::optional<std::string> fallback) const {
    const json* value = find(field);
    if (!value) {
        if (fallback) return *fallback;
        fail(field, "missing");
    }
    if (!value->is_string()) fail(field, "expected a string, got " + type_of(*value));
    return value->get<std::string>();
}

MemoryByCategory RecordReader::memory(const std::string& field) const {
    MemoryByCategory out;
    const json* value = find(field);
    if (!value) return out;
    if (!value->is_object()) fail(field, "expected an object, got " + type_of(*value));
    const RecordReader inner(*value, m_where);
    for (std::size_t i = 0; i < kMemCategoryCount; ++i) {
        const std::string name = mem_category_name(static_cast<MemCategory>(i));
        const json* bytes = inner.find(name);
        if (!bytes) continue;
        if (!bytes->is_number_unsigned())
            fail(field + "." + name, "expected a byte count, got " + type_of(*bytes));
        out.bytes[i] = bytes->get<std::size_t>();
    }
    return out;
}

StepRecord step_from_json(const RecordReader& r) {
    StepRecord s = fields_from_json(r, step_fields());
    // Data-parallel fields: absent from ordinary runs and from files written before them.
    const std::int64_t ranks = r.integer("ranks", 1);
    if (ranks < 1 || ranks > (1 << 24)) r.fail("ranks", "expected a rank count >= 1");
    s.ranks = static_cast<int>(ranks);
    if (const json* ms = r.find("rank_step_ms")) {
        if (!ms->is_array()) r.fail("rank_step_ms", "expected an array of numbers");
        for (const json& v : *ms) {
            if (!v.is_number()) r.fail("rank_step_ms", "expected an array of numbers");
            s.rank_step_ms.push_back(v.get<double>());
        }
    }
    if (const json* skipped = r.find("rank_skipped")) {
        if (!skipped->is_array()) r.fail("rank_skipped", "expected an array of true/false");
        for (const json& v : *skipped) {
            if (!v.is_boolean()) r.fail("rank_skipped", "expected an array of true/false");
            s.rank_skipped.push_back(v.get<bool>());
        }
    }
    if (const json* overflowed = r.find("overflowed")) {
        if (!overflowed->is_array()) r.fail("overflowed", "expected an array of gradient names");
        for (const json& v : *overflowed) {
            if (!v.is_string()) r.fail("overflowed", "expected an array of gradient names");
            s.overflowed.push_back(v.get<std::string>());
        }
    }
    s.allreduce_ms = r.number("allreduce_ms", 0.0);
    s.allreduce_bytes = r.integer("allreduce_bytes", 0);
    return s;
}

EpochRecord epoch_from_json(const RecordReader& r) {
    return fields_from_json(r, epoch_fields());
}

RunSummary summary_from_json(const RecordReader& r) {
    return fields_from_json(r, summary_fields());
}

std::string log_from_json(const RecordReader& r) {
    return r.string("message", std::string());
}

namespace {

// The field's value, or an error naming it when the record lacks it.
const json& required(const RecordReader& r, const std::string& field) {
    const json* value = r.find(field);
    if (!value) r.fail(field, "missing");
    return *value;
}

// One kHistogramBins list of counts (>= 0).
ExponentCounts counts_from_json(const RecordReader& r, const json& value,
                                const std::string& field) {
    if (!value.is_array() || value.size() != static_cast<std::size_t>(kHistogramBins))
        r.fail(field, "expected an array of " + std::to_string(kHistogramBins) + " counts");
    ExponentCounts out;
    for (std::size_t i = 0; i < out.bins.size(); ++i) {
        if (!value[i].is_number_integer() || value[i].get<std::int64_t>() < 0)
            r.fail(field,
                   "expected counts >= 0, item " + std::to_string(i) + " is " + value[i].dump());
        out.bins[i] = value[i].get<std::int64_t>();
    }
    return out;
}

} // namespace

GradientHistogram histogram_from_json(const RecordReader& r) {
    GradientHistogram h;
    h.step = r.integer("step");
    h.loss_scale = r.number("loss_scale");
    // The layout travels with the record; counts binned differently cannot be drawn here.
    const json& bins = required(r, "bins");
    if (!bins.is_object()) r.fail("bins", "expected an object");
    const RecordReader b(bins, r.where() + ": bins");
    const std::int64_t layout[][2] = {{b.integer("zero"), kHistogramZeroBin},
                                      {b.integer("min_exponent"), kHistogramMinExp},
                                      {b.integer("max_exponent"), kHistogramMaxExp},
                                      {b.integer("non_finite"), kHistogramNonFiniteBin}};
    for (const auto& pair : layout)
        if (pair[0] != pair[1])
            r.fail("bins", "a bin layout this version does not use (expected zero " +
                               std::to_string(kHistogramZeroBin) + ", min_exponent " +
                               std::to_string(kHistogramMinExp) + ", max_exponent " +
                               std::to_string(kHistogramMaxExp) + ", non_finite " +
                               std::to_string(kHistogramNonFiniteBin) + ")");
    const json& layers = required(r, "layers");
    if (!layers.is_array()) r.fail("layers", "expected an array");
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string field = "layers[" + std::to_string(i) + "]";
        if (!layers[i].is_object()) r.fail(field, "expected an object");
        const RecordReader l(layers[i], r.where() + ": " + field);
        LayerGradientHistogram layer;
        layer.layer = l.string("name");
        layer.activation = counts_from_json(r, required(l, "activation"), field + ".activation");
        const json& weight = required(l, "weight");
        layer.has_weights = !weight.is_null();
        if (layer.has_weights) layer.weight = counts_from_json(r, weight, field + ".weight");
        h.layers.push_back(std::move(layer));
    }
    const json& all = required(r, "all");
    if (!all.is_object()) r.fail("all", "expected an object");
    const RecordReader a(all, r.where() + ": all");
    h.all_activation = counts_from_json(r, required(a, "activation"), "all.activation");
    h.all_weight = counts_from_json(r, required(a, "weight"), "all.weight");
    return h;
}

QuantRecord quant_from_json(const RecordReader& r) {
    QuantRecord out;
    out.step = r.integer(kQuantStepField);
    const json& tensors = required(r, kQuantTensorsField);
    if (!tensors.is_array()) r.fail(kQuantTensorsField, "expected an array");
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const std::string field = std::string(kQuantTensorsField) + "[" + std::to_string(i) + "]";
        if (!tensors[i].is_object()) r.fail(field, "expected an object");
        const RecordReader t(tensors[i], r.where() + ": " + field);
        out.tensors.push_back(fields_from_json(t, quant_tensor_fields()));
    }
    return out;
}

} // namespace mantissa
