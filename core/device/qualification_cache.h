// The record of which GPU set-ups the CUDA engine has passed its checks on, kept in the user's
// data folder (one JSON file). A record counts only for the exact fingerprint it was made on: a
// new driver, CUDA runtime, cuBLASLt, cuDNN or Mantissa build means "not checked" again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/backend/factory/gpu_fingerprint.h"

namespace mantissa {

struct QualificationRecord {
    GpuFingerprint gpu;
    bool passed = false;
    std::string checked_at; // UTC, "2026-11-25T14:03:11Z"
    int cases = 0;          // op cases and training checks run
    int failures = 0;
    std::string first_failure; // "conv2d bwd-filter 4x10x10x3 bfloat16: max error 0.31 > 0.05"
    double seconds = 0;        // how long the check took
};

class QualificationCache {
public:
    // Where the cache lives: $MANTISSA_QUALIFICATION_FILE when set (tests), else
    // $XDG_DATA_HOME/mantissa/gpu-qualification.json, else ~/.local/share/mantissa/....
    static std::string default_path();

    // Reads `path` if it exists. A file that cannot be read or parsed is never fatal: the cache
    // starts empty and warning() says which file and what was wrong; the next store() replaces it.
    explicit QualificationCache(std::string path);

    const std::string& path() const { return m_path; }
    const std::string& warning() const { return m_warning; }
    const std::vector<QualificationRecord>& records() const { return m_records; }

    // The record made on exactly this fingerprint, if any.
    std::optional<QualificationRecord> find(const GpuFingerprint& gpu) const;
    // The newest record for a card of this name made on other versions: why it is "not checked".
    std::optional<QualificationRecord> find_outdated(const GpuFingerprint& gpu) const;

    // Adds `record` (replacing one of the same fingerprint) and writes the file atomically.
    // Throws Error(Io) naming the file when it cannot be written.
    void store(const QualificationRecord& record);

private:
    std::string m_path;
    std::string m_warning;
    std::vector<QualificationRecord> m_records;
};

// "2026-11-25T14:03:11Z" for now.
std::string utc_timestamp_now();

} // namespace mantissa
