// Metrics JSONL reader. Each line is checked field by field, so a hand-edited or damaged file
// fails with the line and field to look at instead of a bare parser error.
#include "core/records/metrics_reader.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/io/json_depth.h"
#include "core/records/metrics_record_json.h"

namespace mantissa {

namespace {

using nlohmann::json;

void read_header(const RecordReader& r, RunMetrics& out) {
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
        const RecordReader d(*device, r.where() + ": device");
        out.device_id = d.string("id", std::string());
        out.device_name = d.string("name", std::string());
        out.device_memory_total = d.size("memory_total", 0);
    }
    out.memory = r.memory("mem");
    if (const json* parallel = r.find("data_parallel")) {
        if (!parallel->is_object()) r.fail("data_parallel", "expected an object");
        const RecordReader p(*parallel, r.where() + ": data_parallel");
        DataParallelInfo info;
        const std::int64_t ranks = p.integer("ranks");
        if (ranks < 1 || ranks > (1 << 24)) p.fail("ranks", "expected a rank count >= 1");
        info.ranks = static_cast<int>(ranks);
        info.allreduce_dtype = p.string("allreduce_dtype", std::string());
        info.communicator = p.string("communicator", std::string());
        out.data_parallel = info;
    }
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
        const RecordReader r(object, where);
        const std::string type = r.string("type");
        try {
            if (type == "run")
                read_header(r, out);
            else if (type == "step")
                out.steps.push_back(step_from_json(r));
            else if (type == "epoch")
                out.epochs.push_back(epoch_from_json(r));
            else if (type == "summary")
                out.summary = summary_from_json(r);
            else if (type == "log")
                out.log.push_back(log_from_json(r));
            else if (type == "histogram")
                out.histograms.push_back(histogram_from_json(r));
            else if (type == "quant")
                out.quant.push_back(quant_from_json(r));
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
