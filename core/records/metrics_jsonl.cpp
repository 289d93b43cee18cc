// Metrics JSONL writer. Non-finite numbers (a diverged loss) are written as null: JSON has no NaN,
// and a null tells a reader "not a number" without breaking its parser.
#include "core/records/metrics_jsonl.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/records/metrics_json_values.h"
#include "core/records/metrics_record_json.h"

namespace mantissa {

namespace {

using nlohmann::json;

// Messages and names can hold any bytes (a file path in a legacy encoding, a truncated UTF-8
// sequence); nlohmann's default dump() throws on invalid UTF-8, which would end the run. Such bytes
// become U+FFFD instead, so every line stays valid JSON (found by fuzz/fuzz_metrics_jsonl).
std::string dump_line(const json& line) {
    return line.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace

MetricsJsonlWriter::MetricsJsonlWriter(const std::string& path) : m_path(path) {
    m_out.open(path, std::ios::out | std::ios::trunc);
    if (!m_out)
        throw Error(ErrorKind::Io,
                    "cannot write metrics to '" + path + "': " + std::strerror(errno));
}

void MetricsJsonlWriter::write_line(const std::string& line) {
    m_out << line << '\n';
    if (!m_out) throw Error(ErrorKind::Io, "writing metrics to '" + m_path + "' failed");
}

void MetricsJsonlWriter::write_header(const Experiment& experiment, const DeviceInfo& device,
                                      const Plan& plan, const MemoryByCategory& memory,
                                      const DataParallelInfo* parallel) {
    json layers = json::array();
    for (const LayerSummary& layer : plan.layers)
        layers.push_back({{"name", layer.name},
                          {"type", layer.type},
                          {"detail", layer.detail},
                          {"output_shape", layer.output_shape},
                          {"params", layer.params},
                          {"policy", layer.policy.name}});
    json lint = json::array();
    for (const LintMessage& message : plan.lint)
        lint.push_back(
            {{"severity", message.severity == LintSeverity::Warning ? "warning" : "hint"},
             {"layer", message.layer},
             {"text", message.text}});
    json header = {
        {"type", "run"},
        {"config", json::parse(experiment_to_json(experiment))},
        {"device",
         {{"id", device.id}, {"name", device.name}, {"memory_total", device.memory_total}}},
        {"versions", {{"mantissa", MANTISSA_VERSION_STRING}, {"format", 1}}},
        {"loss_scale_mode", loss_scale_mode_name(plan.loss_scale.mode)},
        {"params", plan.param_count},
        {"train_flops_per_step", plan.train_flops_per_step()},
        {"layers", layers},
        {"lint", lint},
        {"mem", memory_json<json>(memory)}};
    if (parallel)
        header["data_parallel"] = {{"ranks", parallel->ranks},
                                   {"allreduce_dtype", parallel->allreduce_dtype},
                                   {"communicator", parallel->communicator}};
    write_line(dump_line(header));
    m_out.flush();
}

void MetricsJsonlWriter::write_step(const StepRecord& r) {
    json line = record_json<json>(r, kInJsonl);
    line["type"] = "step";
    write_line(dump_line(line));
}

void MetricsJsonlWriter::write_epoch(const EpochRecord& r) {
    json line = record_json<json>(r, kInJsonl);
    line["type"] = "epoch";
    write_line(dump_line(line));
    m_out.flush();
}

void MetricsJsonlWriter::write_summary(const RunSummary& s) {
    json line = record_json<json>(s, kInJsonl);
    line["type"] = "summary";
    write_line(dump_line(line));
    m_out.flush();
}

void MetricsJsonlWriter::write_histogram(const GradientHistogram& h) {
    json line = histogram_json(h);
    line["type"] = "histogram";
    write_line(line.dump());
}

void MetricsJsonlWriter::write_quant(const QuantRecord& record) {
    json line = quant_json<json>(record);
    line["type"] = "quant";
    write_line(line.dump());
}

void MetricsJsonlWriter::flush() {
    m_out.flush();
    if (!m_out) throw Error(ErrorKind::Io, "writing metrics to '" + m_path + "' failed");
}

void MetricsJsonlWriter::write_log(const std::string& message) {
    json line = log_json(message);
    line["type"] = "log";
    write_line(dump_line(line));
}

} // namespace mantissa
