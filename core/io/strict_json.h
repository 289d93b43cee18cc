// The one strict JSON reader for files people write by hand (experiments, lessons): a parse that
// rejects duplicate keys and deep nesting, and field-path helpers whose errors name
// "layers[2].units".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace mantissa {

// Parses `text`, rejecting what nlohmann would accept silently or crash on later. Throws
// Error(Config) starting with `source`:
//   "<source>: invalid JSON: it nests deeper than 64 levels" (json_depth.h),
//   "<source>: field 'epochs' appears twice in the same object" (nlohmann keeps the last one),
//   "<source>: line 3, column 10: invalid JSON: <what the parser says>".
nlohmann::json parse_strict_json(const std::string& text, const std::string& source);

// The value as the user wrote it, shortened, with its kind for non-scalars and strings:
// "the string \"relu\"", "128", "true", "an object", "an array", "null".
std::string json_value_text(const nlohmann::json& v);
// Only the kind: "a string", "a number", "a boolean", "null", "an object", "a list",
// "an empty list" (for fields whose values are long texts).
std::string json_kind(const nlohmann::json& v);

// Type-checked access to the fields of a parsed document. Every failure throws Error(Config)
// "<source>: <path>: <what>", so a message names the file and the field ("layers[2].units").
class JsonFieldReader {
public:
    explicit JsonFieldReader(std::string source) : m_source(std::move(source)) {}

    const std::string& source() const { return m_source; }

    [[noreturn]] void fail(const std::string& path, const std::string& what) const;

    // Rejects any key not in `allowed`; `context` names what the object is ("for Dense").
    void check_fields(const nlohmann::json& obj, const std::string& path,
                      const std::vector<std::string>& allowed,
                      const std::string& context = "") const;

    // "model.layers" from "model" and "layers"; the key alone at the top level.
    static std::string child(const std::string& path, const std::string& key);
    // "layers[2]".
    static std::string element(const std::string& path, std::size_t index);

    const nlohmann::json& object(const nlohmann::json& v, const std::string& path) const;
    const nlohmann::json& array(const nlohmann::json& v, const std::string& path) const;
    std::string string(const nlohmann::json& v, const std::string& path) const;
    bool boolean(const nlohmann::json& v, const std::string& path) const;
    // Finite numbers only: nlohmann parses 1e999 as inf.
    double number(const nlohmann::json& v, const std::string& path) const;
    // Integers in [min, max]; 128.0 is accepted as 128 since some tools write every number so.
    std::int64_t integer(const nlohmann::json& v, const std::string& path, std::int64_t min,
                         std::int64_t max) const;
    std::uint64_t unsigned_integer(const nlohmann::json& v, const std::string& path) const;

    // Runs a name lookup that throws Error(Config) and prefixes its message with the field path.
    template <class F>
    auto named(const std::string& path, F&& lookup) const -> decltype(lookup());

private:
    std::string m_source;
};

template <class F>
auto JsonFieldReader::named(const std::string& path, F&& lookup) const -> decltype(lookup()) {
    try {
        return lookup();
    } catch (const Error& e) {
        fail(path, e.what());
    }
}

} // namespace mantissa
