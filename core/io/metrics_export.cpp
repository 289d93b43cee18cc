// Metrics JSONL -> CSV / JSON. Columns come from the records themselves (ordered as written), so
// fields added to the JSONL later appear in the exports without changes here.
#include "core/io/metrics_export.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/io/atomic_file.h"

namespace mantissa {

namespace {

using ojson = nlohmann::ordered_json;

void flatten(const ojson& value, const std::string& prefix,
             std::vector<std::pair<std::string, const ojson*>>& out) {
    if (value.is_object()) {
        for (const auto& [key, child] : value.items())
            flatten(child, prefix.empty() ? key : prefix + "." + key, out);
        return;
    }
    out.emplace_back(prefix, &value);
}

std::string csv_cell(const ojson& v) {
    if (v.is_null()) return "nan";
    if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
    if (v.is_number()) return v.dump();
    std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

} // namespace

MetricsRun read_metrics_jsonl(const std::string& path) {
    const std::string text = read_file(path);
    MetricsRun run;
    run.source = path;
    std::size_t start = 0, line_no = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        const bool last = end == std::string::npos;
        if (last) end = text.size();
        ++line_no;
        const std::string line = text.substr(start, end - start);
        start = end + 1;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        ojson record;
        try {
            record = ojson::parse(line);
        } catch (const nlohmann::json::exception& e) {
            if (last) { // the writer was stopped mid-line: keep everything before it
                run.truncated_tail = true;
                break;
            }
            throw Error(ErrorKind::Config,
                        path + ":" + std::to_string(line_no) + ": not a JSON object: " + e.what());
        }
        if (!record.is_object() || !record.contains("type") || !record["type"].is_string())
            throw Error(ErrorKind::Config, path + ":" + std::to_string(line_no) +
                                               ": expected a JSON object with a string \"type\"");
        if (record["type"] == "summary") run.complete = true;
        run.records.push_back(line);
    }
    if (run.records.empty() || ojson::parse(run.records.front())["type"] != "run")
        throw Error(ErrorKind::Config,
                    path +
                        ": not a Mantissa metrics file (the first record must be of type \"run\")");
    return run;
}

std::string metrics_csv(const MetricsRun& run, const std::string& type) {
    // The writer's JSON objects sort their keys, so lead with the columns people look for first;
    // the rest follow in file order.
    std::vector<std::string> columns;
    for (const char* lead : {"step", "epoch", "loss", "accuracy", "val_loss", "val_accuracy"})
        for (const std::string& line : run.records) {
            const ojson record = ojson::parse(line);
            if (record["type"] == type && record.contains(lead)) {
                columns.push_back(lead);
                break;
            }
        }
    std::vector<std::vector<std::pair<std::string, std::string>>> rows;
    for (const std::string& line : run.records) {
        const ojson record = ojson::parse(line);
        if (record["type"] != type) continue;
        std::vector<std::pair<std::string, const ojson*>> fields;
        flatten(record, "", fields);
        std::vector<std::pair<std::string, std::string>> row;
        for (const auto& [name, value] : fields) {
            if (name == "type") continue;
            if (std::find(columns.begin(), columns.end(), name) == columns.end())
                columns.push_back(name);
            row.emplace_back(name, csv_cell(*value));
        }
        rows.push_back(std::move(row));
    }
    std::string out;
    for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + columns[i];
    out += "\n";
    for (const auto& row : rows) {
        for (std::size_t i = 0; i < columns.size(); ++i) {
            if (i) out += ",";
            for (const auto& [name, cell] : row)
                if (name == columns[i]) {
                    out += cell;
                    break;
                }
        }
        out += "\n";
    }
    return out;
}

std::string metrics_json(const MetricsRun& run) {
    ojson out = {{"run", nullptr},          {"steps", ojson::array()}, {"epochs", ojson::array()},
                 {"summary", nullptr},      {"logs", ojson::array()},  {"other", ojson::array()},
                 {"complete", run.complete}};
    for (const std::string& line : run.records) {
        ojson record = ojson::parse(line);
        const std::string type = record["type"].get<std::string>();
        if (type == "run")
            out["run"] = record;
        else if (type == "step")
            out["steps"].push_back(record);
        else if (type == "epoch")
            out["epochs"].push_back(record);
        else if (type == "summary")
            out["summary"] = record;
        else if (type == "log")
            out["logs"].push_back(record);
        else
            out["other"].push_back(record);
    }
    return out.dump(1) + "\n";
}

} // namespace mantissa
