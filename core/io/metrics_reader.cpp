// Metrics JSONL reader. Each line is checked field by field, so a hand-edited or damaged file
// fails with the line and field to look at instead of a bare parser error.
#include "core/io/metrics_reader.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/io/json_depth.h"

namespace mantissa {

namespace {

using nlohmann::json;

// Reads the fields of one line; every failure names the source, the line and the field.
class LineReader {
public:
    LineReader(const json& object, const std::string& where) : m_object(object), m_where(where) {}

    [[noreturn]] void fail(const std::string& field, const std::string& what) const {
        throw Error(ErrorKind::Data, m_where + ": field '" + field + "': " + what);
    }

    const json* find(const std::string& field) const {
        const auto it = m_object.find(field);
        return it == m_object.end() ? nullptr : &*it;
    }

    const json& require(const std::string& field) const {
        const json* value = find(field);
        if (!value) fail(field, "missing");
        return *value;
    }

    // A number; null (the writer's NaN or infinity) reads as NaN. Absent: `fallback`.
    double number(const std::string& field, std::optional<double> fallback = std::nullopt) const {
        const json* value = find(field);
        if (!value) {
            if (fallback) return *fallback;
            fail(field, "missing");
        }
        if (value->is_null()) return std::numeric_limits<double>::quiet_NaN();
        if (!value->is_number()) fail(field, "expected a number, got " + type_of(*value));
        return value->get<double>();
    }

    std::int64_t integer(const std::string& field,
                         std::optional<std::int64_t> fallback = std::nullopt) const {
        const json* value = find(field);
        if (!value) {
            if (fallback) return *fallback;
            fail(field, "missing");
        }
        if (!value->is_number_integer()) fail(field, "expected an integer, got " + type_of(*value));
        return value->get<std::int64_t>();
    }

    std::size_t size(const std::string& field, std::optional<std::size_t> fallback = {}) const {
        const std::int64_t v = integer(
            field, fallback ? std::optional<std::int64_t>(static_cast<std::int64_t>(*fallback))
                            : std::nullopt);
        if (v < 0) fail(field, "expected a byte count >= 0, got " + std::to_string(v));
        return static_cast<std::size_t>(v);
    }

    bool boolean(const std::string& field, std::optional<bool> fallback = std::nullopt) const {
        const json* value = find(field);
        if (!value) {
            if (fallback) return *fallback;
            fail(field, "missing");
        }
        if (!value->is_boolean()) fail(field, "expected true or false, got " + type_of(*value));
        return value->get<bool>();
    }

    std::string string(const std::string& field, std::optional<std::string> fallback = {}) const {
        const json* value = find(field);
        if (!value) {
            if (fallback) return *fallback;
            fail(field, "missing");
        }
        if (!value->is_string()) fail(field, "expected a string, got " + type_of(*value));
        return value->get<std::string>();
    }

    // The `mem` object: bytes per category by name; absent categories are 0.
    MemoryByCategory memory(const std::string& field) const {
        MemoryByCategory out;
        const json* value = find(field);
        if (!value) return out;
        if (!value->is_object()) fail(field, "expected an object, got " + type_of(*value));
        const LineReader inner(*value, m_where);
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

    const std::string& where() const { return m_where; }

private:
    static std::string type_of(const json& value) {
        if (value.is_number()) return "the number " + value.dump();
        return std::string(value.type_name());
    }

    const json& m_object;
    std::string m_where;
};

RunStatus status_from_name(const LineReader& r, const std::string& name) {
    for (RunStatus s :
         {RunStatus::Completed, RunStatus::Stopped, RunStatus::Diverged, RunStatus::Failed})
        if (name == run_status_name(s)) return s;
    r.fail("status",
           "unknown status '" + name + "' (expected completed, stopped, diverged or failed)");
}

void read_header(const LineReader& r, RunMetrics& out) {
    if (const json* config = r.find("config")) {
        if (!config->is_object()) r.fail("config", "expected an object");
        try {
            out.config = experiment_from_json(config->dump(), r.where() + ": config");
        } catch (const Error& e) {
            throw Error(ErrorKind::Data, e.what());
        }
    }
    if (const json* device = r.find("device")) {
        if (!device->is_object()) r.fail("device", "expected an object");
        const LineReader d(*device, r.where() + ": device");
        out.device_id = d.string("id", std::string());
        out.device_name = d.string("name", std::string());
        out.device_memory_total = d.size("memory_total", 0);
    }
    out.memory = r.memory("mem");
    if (const json* parallel = r.find("data_parallel")) {
        if (!parallel->is_object()) r.fail("data_parallel", "expected an object");
        const LineReader p(*parallel, r.where() + ": data_parallel");
        DataParallelInfo info;
        const std::int64_t ranks = p.integer("ranks");
        if (ranks < 1 || ranks > (1 << 24)) p.fail("ranks", "expected a rank count >= 1");
        info.ranks = static_cast<int>(ranks);
        info.allreduce_dtype = p.string("allreduce_dtype", std::string());
        info.communicator = p.string("communicator", std::string());
        out.data_parallel = info;
    }
}

StepRecord read_step(const LineReader& r) {
    StepRecord s;
    s.step = r.integer("step");
    s.epoch = static_cast<int>(r.integer("epoch"));
    s.loss = r.number("loss");
    s.accuracy = r.number("accuracy");
    s.step_ms = r.number("step_ms");
    s.samples_per_s = r.number("samples_per_s");
    s.loss_scale = r.number("loss_scale");
    s.skipped = r.boolean("skipped");
    s.good_steps = r.integer("good_steps", 0);
    s.memory = r.memory("mem");
    s.device_mem_used = r.size("device_mem_used", 0);
    s.device_mem_total = r.size("device_mem_total", 0);
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
    s.allreduce_ms = r.number("allreduce_ms", 0.0);
    s.allreduce_bytes = r.integer("allreduce_bytes", 0);
    return s;
}

EpochRecord read_epoch(const LineReader& r) {
    EpochRecord e;
    e.epoch = static_cast<int>(r.integer("epoch"));
    e.steps = r.integer("steps", 0);
    e.loss = r.number("loss");
    e.accuracy = r.number("accuracy");
    e.val_loss = r.number("val_loss");
    e.val_accuracy = r.number("val_accuracy");
    e.seconds = r.number("seconds", 0.0);
    e.median_step_ms = r.number("median_step_ms", 0.0);
    e.skipped_steps = r.integer("skipped_steps", 0);
    e.loss_scale = r.number("loss_scale", 1.0);
    return e;
}

RunSummary read_summary(const LineReader& r) {
    RunSummary s;
    s.status = status_from_name(r, r.string("status"));
    s.message = r.string("message", std::string());
    s.steps = r.integer("steps");
    s.epochs = static_cast<int>(r.integer("epochs", 0));
    s.train_loss = r.number("train_loss");
    s.train_accuracy = r.number("train_accuracy");
    s.val_loss = r.number("val_loss");
    s.val_accuracy = r.number("val_accuracy");
    s.seconds = r.number("seconds", 0.0);
    s.median_step_ms = r.number("median_step_ms", 0.0);
    s.samples_per_s = r.number("samples_per_s", 0.0);
    s.skipped_steps = r.integer("skipped_steps", 0);
    // null means "never reached 97%", which RunSummary spells -1.
    const double to_97 = r.number("seconds_to_97", -1.0);
    s.seconds_to_97 = std::isnan(to_97) ? -1 : to_97;
    s.peak_memory = r.size("peak_memory", 0);
    return s;
}

// One `kHistogramBins` list of counts (>= 0).
ExponentCounts read_counts(const LineReader& r, const json& value, const std::string& field) {
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

GradientHistogram read_histogram(const LineReader& r) {
    GradientHistogram h;
    h.step = r.integer("step");
    h.loss_scale = r.number("loss_scale");
    // The layout travels with the record; counts binned differently cannot be drawn here.
    const json& bins = r.require("bins");
    if (!bins.is_object()) r.fail("bins", "expected an object");
    const LineReader b(bins, r.where() + ": bins");
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
    const json& layers = r.require("layers");
    if (!layers.is_array()) r.fail("layers", "expected an array");
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string field = "layers[" + std::to_string(i) + "]";
        if (!layers[i].is_object()) r.fail(field, "expected an object");
        const LineReader l(layers[i], r.where() + ": " + field);
        LayerGradientHistogram layer;
        layer.layer = l.string("name");
        layer.activation = read_counts(r, l.require("activation"), field + ".activation");
        const json& weight = l.require("weight");
        layer.has_weights = !weight.is_null();
        if (layer.has_weights) layer.weight = read_counts(r, weight, field + ".weight");
        h.layers.push_back(std::move(layer));
    }
    const json& all = r.require("all");
    if (!all.is_object()) r.fail("all", "expected an object");
    const LineReader a(all, r.where() + ": all");
    h.all_activation = read_counts(r, a.require("activation"), "all.activation");
    h.all_weight = read_counts(r, a.require("weight"), "all.weight");
    return h;
}

} // namespace

RunMetrics parse_metrics_jsonl(const std::string& text, const std::string& source) {
    RunMetrics out;
    std::size_t begin = 0;
    std::size_t line_no = 0;
    while (begin < text.size()) {
        std::size_t end = text.find('\n', begin);
        const bool last_unterminated = end == std::string::npos;
        if (last_unterminated) end = text.size();
        ++line_no;
        const std::string line = text.substr(begin, end - begin);
        begin = end + 1;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue; // blank line
        const std::string where = source + ": line " + std::to_string(line_no);
        if (json_nesting_depth(line) > kMaxJsonDepth)
            throw Error(ErrorKind::Data, where + ": the record nests deeper than " +
                                             std::to_string(kMaxJsonDepth) + " levels");

        json object;
        try {
            object = json::parse(line);
        } catch (const json::exception& e) {
            // The writer ends every record with a newline, so an unterminated, unparseable last
            // line is a record the process was killed in the middle of writing.
            if (last_unterminated) {
                out.truncated_tail = true;
                break;
            }
            std::string detail = e.what();
            // Drop nlohmann's "[json.exception...] parse error at line 1, column 2: ".
            if (const auto col = detail.find("column "); col != std::string::npos)
                if (const auto colon = detail.find(": ", col); colon != std::string::npos)
                    detail = detail.substr(colon + 2);
            throw Error(ErrorKind::Data, where + ": not a JSON record: " + detail);
        }
        if (!object.is_object())
            throw Error(ErrorKind::Data,
                        where + ": expected a JSON object, got " + std::string(object.type_name()));
        const LineReader r(object, where);
        const std::string type = r.string("type");
        try {
            if (type == "run")
                read_header(r, out);
            else if (type == "step")
                out.steps.push_back(read_step(r));
            else if (type == "epoch")
                out.epochs.push_back(read_epoch(r));
            else if (type == "summary")
                out.summary = read_summary(r);
            else if (type == "log")
                out.log.push_back(r.string("message", std::string()));
            else if (type == "histogram")
                out.histograms.push_back(read_histogram(r));
            // Any other type (future records) is for other readers: skip it.
        } catch (const json::exception& e) {
            // Every access is type-checked first; this is a last line of defence.
            throw Error(ErrorKind::Data, where + ": " + e.what());
        }
    }
    return out;
}

RunMetrics read_metrics_jsonl(const std::string& path) {
    return parse_metrics_jsonl(read_file(path), path);
}

} // namespace mantissa
