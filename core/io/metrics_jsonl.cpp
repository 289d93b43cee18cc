// Metrics JSONL writer. Non-finite numbers (a diverged loss) are written as null: JSON has no NaN,
// and a null tells a reader "not a number" without breaking its parser.
#include "core/io/metrics_jsonl.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/io/metrics_json_values.h"

namespace mantissa {

namespace {

using nlohmann::json;

// Messages and names can hold any bytes (a file path in a legacy encoding, a truncated UTF-8
// sequence); nlohmann's default dump() throws on invalid UTF-8, which would end the run. Such bytes
// become U+FFFD instead, so every line stays valid JSON (found by fuzz/fuzz_metrics_jsonl).
std::string dump_line(const json& line) {
    return line.dump(-1, ' ', false, json::error_handler_t::replace);
}

json number(double value) {
    return json_number<json>(value);
}

json counts_json(const ExponentCounts& counts) {
    return json(std::vector<std::int64_t>(counts.bins.begin(), counts.bins.end()));
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
    json line = {{"type", "step"},
                 {"step", r.step},
                 {"epoch", r.epoch},
                 {"loss", number(r.loss)},
                 {"accuracy", number(r.accuracy)},
                 {"step_ms", r.step_ms},
                 {"samples_per_s", r.samples_per_s},
                 {"loss_scale", r.loss_scale},
                 {"skipped", r.skipped},
                 {"good_steps", r.good_steps},
                 {"mem", memory_json<json>(r.memory)},
                 {"device_mem_used", r.device_mem_used},
                 {"device_mem_total", r.device_mem_total}};
    if (r.ranks > 1) {
        line["ranks"] = r.ranks;
        line["rank_step_ms"] = r.rank_step_ms;
        line["rank_skipped"] = r.rank_skipped;
        line["allreduce_ms"] = r.allreduce_ms;
        line["allreduce_bytes"] = r.allreduce_bytes;
    }
    write_line(dump_line(line));
}

void MetricsJsonlWriter::write_epoch(const EpochRecord& r) {
    json line = {{"type", "epoch"},
                 {"epoch", r.epoch},
                 {"steps", r.steps},
                 {"loss", number(r.loss)},
                 {"accuracy", number(r.accuracy)},
                 {"val_loss", number(r.val_loss)},
                 {"val_accuracy", number(r.val_accuracy)},
                 {"seconds", r.seconds},
                 {"median_step_ms", r.median_step_ms},
                 {"skipped_steps", r.skipped_steps},
                 {"loss_scale", r.loss_scale}};
    write_line(dump_line(line));
    m_out.flush();
}

void MetricsJsonlWriter::write_summary(const RunSummary& s) {
    json line = {{"type", "summary"},
                 {"status", run_status_name(s.status)},
                 {"message", s.message},
                 {"steps", s.steps},
                 {"epochs", s.epochs},
                 {"train_loss", number(s.train_loss)},
                 {"train_accuracy", number(s.train_accuracy)},
                 {"val_loss", number(s.val_loss)},
                 {"val_accuracy", number(s.val_accuracy)},
                 {"seconds", s.seconds},
                 {"median_step_ms", s.median_step_ms},
                 {"samples_per_s", s.samples_per_s},
                 {"skipped_steps", s.skipped_steps},
                 {"seconds_to_97", s.seconds_to_97 >= 0 ? json(s.seconds_to_97) : json(nullptr)},
                 {"peak_memory", s.peak_memory}};
    write_line(dump_line(line));
    m_out.flush();
}

void MetricsJsonlWriter::write_histogram(const GradientHistogram& h) {
    json layers = json::array();
    for (const LayerGradientHistogram& layer : h.layers) {
        json entry = {{"name", layer.layer}, {"activation", counts_json(layer.activation)}};
        entry["weight"] = layer.has_weights ? counts_json(layer.weight) : json(nullptr);
        layers.push_back(std::move(entry));
    }
    // The bins' layout travels with the record so a reader needs no header file.
    json line = {
        {"type", "histogram"},
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
    write_line(line.dump());
}

void MetricsJsonlWriter::write_quant(const QuantRecord& record) {
    auto finite = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    json tensors = json::array();
    for (const QuantTensorRecord& t : record.tensors)
        tensors.push_back({{"layer", t.layer},
                           {"role", t.role},
                           {"format", t.format},
                           {"amax", finite(t.amax)},
                           {"scale", finite(t.scale)},
                           {"clipped", t.clipped},
                           {"flushed", t.flushed},
                           {"count", t.count},
                           {"blocks", t.blocks}});
    write_line(json{{"type", "quant"}, {"step", record.step}, {"tensors", tensors}}.dump());
}

void MetricsJsonlWriter::flush() {
    m_out.flush();
    if (!m_out) throw Error(ErrorKind::Io, "writing metrics to '" + m_path + "' failed");
}

void MetricsJsonlWriter::write_log(const std::string& message) {
    write_line(dump_line(json{{"type", "log"}, {"message", message}}));
}

} // namespace mantissa
