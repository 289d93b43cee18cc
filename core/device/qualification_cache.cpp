// The qualification cache's JSON file: read leniently (a bad file is a warning, never a crash),
// written atomically.
#include "core/device/qualification_cache.h"

#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/io/atomic_file.h"

namespace mantissa {

namespace {

using json = nlohmann::json;
constexpr int kFormatVersion = 1;

json to_json(const QualificationRecord& r) {
    const GpuFingerprint& g = r.gpu;
    return json{{"gpu",
                 {{"name", g.name},
                  {"compute_capability",
                   std::to_string(g.compute_major) + "." + std::to_string(g.compute_minor)},
                  {"memory_total", g.memory_total},
                  {"driver_version", g.driver_version},
                  {"runtime_version", g.runtime_version},
                  {"cublaslt_version", g.cublaslt_version},
                  {"cudnn_version", g.cudnn_version},
                  {"mantissa_build", g.build}}},
                {"passed", r.passed},
                {"checked_at", r.checked_at},
                {"cases", r.cases},
                {"failures", r.failures},
                {"first_failure", r.first_failure},
                {"seconds", r.seconds}};
}

// Throws nlohmann's exceptions on a missing or mistyped field; the caller turns them into the
// cache's warning.
QualificationRecord from_json(const json& j) {
    QualificationRecord r;
    const json& g = j.at("gpu");
    r.gpu.name = g.at("name").get<std::string>();
    const std::string cc = g.at("compute_capability").get<std::string>();
    const auto dot = cc.find('.');
    if (dot == std::string::npos) throw std::runtime_error("compute_capability is not 'M.m'");
    r.gpu.compute_major = std::stoi(cc.substr(0, dot));
    r.gpu.compute_minor = std::stoi(cc.substr(dot + 1));
    r.gpu.memory_total = g.at("memory_total").get<std::size_t>();
    r.gpu.driver_version = g.at("driver_version").get<int>();
    r.gpu.runtime_version = g.at("runtime_version").get<int>();
    r.gpu.cublaslt_version = g.at("cublaslt_version").get<std::size_t>();
    r.gpu.cudnn_version = g.at("cudnn_version").get<std::size_t>();
    r.gpu.build = g.at("mantissa_build").get<std::string>();
    r.passed = j.at("passed").get<bool>();
    r.checked_at = j.at("checked_at").get<std::string>();
    r.cases = j.at("cases").get<int>();
    r.failures = j.at("failures").get<int>();
    r.first_failure = j.at("first_failure").get<std::string>();
    r.seconds = j.at("seconds").get<double>();
    return r;
}

} // namespace

std::string QualificationCache::default_path() {
    if (const char* file = std::getenv("MANTISSA_QUALIFICATION_FILE"); file && *file) return file;
    std::string base;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = std::string(home) + "/.local/share";
    else
        base = ".";
    return base + "/mantissa/gpu-qualification.json";
}

QualificationCache::QualificationCache(std::string path) : m_path(std::move(path)) {
    std::error_code ec;
    if (!std::filesystem::exists(m_path, ec)) return;
    try {
        const json doc = json::parse(read_file(m_path));
        if (!doc.is_object() || doc.value("format_version", 0) != kFormatVersion)
            throw std::runtime_error("not a format_version " + std::to_string(kFormatVersion) +
                                     " qualification file");
        for (const json& entry : doc.at("records")) m_records.push_back(from_json(entry));
    } catch (const std::exception& err) {
        m_records.clear();
        m_warning = "the GPU qualification cache " + m_path + " could not be read (" + err.what() +
                    "); every GPU counts as not checked until it is checked again, "
                    "which rewrites the file";
    }
}

std::optional<QualificationRecord> QualificationCache::find(const GpuFingerprint& gpu) const {
    const std::string key = gpu.key();
    for (const QualificationRecord& r : m_records)
        if (r.gpu.key() == key) return r;
    return std::nullopt;
}

std::optional<QualificationRecord>
QualificationCache::find_outdated(const GpuFingerprint& gpu) const {
    std::optional<QualificationRecord> newest;
    const std::string key = gpu.key();
    for (const QualificationRecord& r : m_records)
        if (r.gpu.name == gpu.name && r.gpu.key() != key &&
            (!newest || r.checked_at > newest->checked_at))
            newest = r;
    return newest;
}

void QualificationCache::store(const QualificationRecord& record) {
    const std::string key = record.gpu.key();
    std::erase_if(m_records, [&](const QualificationRecord& r) { return r.gpu.key() == key; });
    m_records.push_back(record);
    json doc{{"format_version", kFormatVersion},
             {"about", "Mantissa's GPU qualification results: which GPU, driver and library "
                       "versions passed the CUDA engine's op-case table and training check. "
                       "Safe to delete: every GPU is then checked again before 'auto' uses it."},
             {"records", json::array()}};
    for (const QualificationRecord& r : m_records) doc["records"].push_back(to_json(r));
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(m_path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec)
        throw Error(ErrorKind::Io, "cannot create the folder " + parent.string() +
                                       " for the GPU qualification cache: " + ec.message());
    write_file_atomic(m_path, doc.dump(2) + "\n");
    m_warning.clear();
}

std::string utc_timestamp_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

} // namespace mantissa
