// The strict JSON parse and the field-path reader shared by the experiment and lesson readers:
// one place decides what a hand-written file may contain and how its errors read.
#include "core/io/strict_json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/io/json_depth.h"

namespace mantissa {

namespace {

using nlohmann::json;

std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

// "line 3, column 5" for a 0-based offset into `text`, as editors count (both 1-based).
std::string line_column(const std::string& text, std::size_t offset) {
    offset = std::min(offset, text.size());
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// nlohmann silently keeps the last of two equal keys; a duplicated field is almost always an
// edit mistake, so it is reported instead.
json parse_rejecting_duplicates(const std::string& text) {
    std::vector<std::set<std::string>> open_objects;
    json::parser_callback_t cb = [&](int, json::parse_event_t event, json& parsed) {
        switch (event) {
        case json::parse_event_t::object_start:
            open_objects.emplace_back();
            break;
        case json::parse_event_t::object_end:
            if (!open_objects.empty()) open_objects.pop_back();
            break;
        case json::parse_event_t::key:
            if (!open_objects.empty() &&
                !open_objects.back().insert(parsed.get<std::string>()).second)
                throw Error(ErrorKind::Config, "field '" + parsed.get<std::string>() +
                                                   "' appears twice in the same object");
            break;
        default:
            break;
        }
        return true;
    };
    return json::parse(text, cb);
}

} // namespace

json parse_strict_json(const std::string& text, const std::string& source) {
    // Copying, dumping and merging a value recurse once per level (json_depth.h).
    if (json_nesting_depth(text) > kMaxJsonDepth)
        throw Error(ErrorKind::Config, source + ": invalid JSON: it nests deeper than " +
                                           std::to_string(kMaxJsonDepth) + " levels");
    try {
        return parse_rejecting_duplicates(text);
    } catch (const json::parse_error& e) {
        // e.byte is the 1-based index of the character the parser stopped at.
        std::string detail = e.what();
        // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: ".
        if (const auto col = detail.find("column "); col != std::string::npos) {
            if (const auto colon = detail.find(": ", col); colon != std::string::npos)
                detail = detail.substr(colon + 2);
        }
        throw Error(ErrorKind::Config, source + ": " +
                                           line_column(text, e.byte == 0 ? 0 : e.byte - 1) +
                                           ": invalid JSON: " + detail);
    } catch (const json::out_of_range& e) {
        // A literal like 1e999 that no double holds; nlohmann gives no position, so find the
        // literal it quotes ("number overflow parsing '1e999'") in the text.
        const std::string what = e.what();
        const auto open = what.find('\'');
        const auto close = open == std::string::npos ? open : what.find('\'', open + 1);
        std::string where;
        if (close != std::string::npos) {
            const std::string literal = what.substr(open + 1, close - open - 1);
            if (const auto at = text.find(literal); at != std::string::npos)
                where = line_column(text, at) + ": ";
        }
        throw Error(ErrorKind::Config, source + ": " + where +
                                           "invalid JSON: " + what.substr(what.find(']') + 2) +
                                           " (too large for a 64-bit float)");
    } catch (const json::exception& e) {
        throw Error(ErrorKind::Config, source + ": invalid JSON: " + e.what());
    } catch (const Error& e) {
        throw Error(ErrorKind::Config, source + ": " + e.what());
    }
}

std::string json_value_text(const json& v) {
    switch (v.type()) {
    case json::value_t::null:
        return "null";
    case json::value_t::object:
        return "an object";
    case json::value_t::array:
        return "an array";
    case json::value_t::string: {
        std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
        if (s.size() > 40) s = s.substr(0, 37) + "...\"";
        return "the string " + s;
    }
    case json::value_t::boolean:
        return v.get<bool>() ? "true" : "false";
    default:
        return v.dump(-1, ' ', false, json::error_handler_t::replace);
    }
}

std::string json_kind(const json& v) {
    switch (v.type()) {
    case json::value_t::null:
        return "null";
    case json::value_t::object:
        return "an object";
    case json::value_t::array:
        return v.empty() ? "an empty list" : "a list";
    case json::value_t::string:
        return "a string";
    case json::value_t::boolean:
        return "a boolean";
    default:
        return "a number";
    }
}

void JsonFieldReader::fail(const std::string& path, const std::string& what) const {
    throw Error(ErrorKind::Config, m_source + ": " + path + ": " + what);
}

void JsonFieldReader::check_fields(const json& obj, const std::string& path,
                                   const std::vector<std::string>& allowed,
                                   const std::string& context) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
        fail(child(path, it.key()), "unknown field; valid fields" +
                                        (context.empty() ? "" : " " + context) + ": " +
                                        join(allowed));
    }
}

std::string JsonFieldReader::child(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

std::string JsonFieldReader::element(const std::string& path, std::size_t index) {
    return path + "[" + std::to_string(index) + "]";
}

const json& JsonFieldReader::object(const json& v, const std::string& path) const {
    if (!v.is_object()) fail(path, "expected an object, got " + json_value_text(v));
    return v;
}

const json& JsonFieldReader::array(const json& v, const std::string& path) const {
    if (!v.is_array()) fail(path, "expected an array, got " + json_value_text(v));
    return v;
}

std::string JsonFieldReader::string(const json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a string, got " + json_value_text(v));
    return v.get<std::string>();
}

bool JsonFieldReader::boolean(const json& v, const std::string& path) const {
    if (!v.is_boolean()) fail(path, "expected true or false, got " + json_value_text(v));
    return v.get<bool>();
}

double JsonFieldReader::number(const json& v, const std::string& path) const {
    if (!v.is_number()) fail(path, "expected a number, got " + json_value_text(v));
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(path, "expected a finite number, got " + json_value_text(v));
    return d;
}

std::int64_t JsonFieldReader::integer(const json& v, const std::string& path, std::int64_t min,
                                      std::int64_t max) const {
    const bool unbounded = min == std::numeric_limits<std::int64_t>::min() &&
                           max == std::numeric_limits<std::int64_t>::max();
    const std::string expected =
        unbounded ? std::string("an integer")
        : max == std::numeric_limits<std::int64_t>::max()
            ? (min == 1 ? "a positive integer" : "an integer >= " + std::to_string(min))
            : "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    std::int64_t i = 0;
    if (v.is_number_unsigned()) {
        const std::uint64_t u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(max))
            fail(path, "expected " + expected + ", got " + json_value_text(v));
        i = static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
        i = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        if (!(d == std::floor(d) && d >= -9.2e18 && d <= 9.2e18))
            fail(path, "expected " + expected + ", got " + json_value_text(v));
        i = static_cast<std::int64_t>(d);
    } else {
        fail(path, "expected " + expected + ", got " + json_value_text(v));
    }
    if (i < min || i > max) fail(path, "expected " + expected + ", got " + json_value_text(v));
    return i;
}

std::uint64_t JsonFieldReader::unsigned_integer(const json& v, const std::string& path) const {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
        return static_cast<std::uint64_t>(v.get<std::int64_t>());
    fail(path, "expected a non-negative integer, got " + json_value_text(v));
}

} // namespace mantissa
