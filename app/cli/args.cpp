// ArgParser: strict parsing of one subcommand's arguments, and its --help text.
// Tokens that read as numbers ("-3.5", "-inf") are values, never options: cast takes negatives.
#include "app/cli/args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace mantissa::cli {

namespace {

// A whole token that strtod accepts: decimal, hex float, inf, nan (any sign).
bool is_number(const std::string& token) {
    if (token.empty()) return false;
    const char* begin = token.c_str();
    char* end = nullptr;
    std::strtod(begin, &end);
    return end != begin && *end == '\0';
}

bool looks_like_option(const std::string& token) {
    return token.size() > 1 && token[0] == '-' && !is_number(token);
}

} // namespace

ArgParser::ArgParser(std::string command, std::string summary)
    : m_command(std::move(command)), m_summary(std::move(summary)) {}

void ArgParser::add_option(const std::string& name, const std::string& metavar,
                           const std::string& help, bool repeatable) {
    m_options.push_back({name, metavar, help, true, repeatable});
}

void ArgParser::add_flag(const std::string& name, const std::string& help) {
    m_options.push_back({name, "", help, false, false});
}

void ArgParser::add_positional(const std::string& metavar, const std::string& help, bool repeated,
                               bool required) {
    m_positional_specs.push_back({metavar, help, repeated, required});
}

const ArgParser::Option* ArgParser::find(const std::string& name) const {
    for (const Option& option : m_options)
        if (option.name == name) return &option;
    return nullptr;
}

void ArgParser::parse(const std::vector<std::string>& args) {
    m_given.clear();
    m_positionals.clear();
    m_help = false;
    // --help wins over everything else, wherever it stands before "--".
    for (const std::string& token : args) {
        if (token == "--") break;
        if (token == "--help" || token == "-h") {
            m_help = true;
            return;
        }
    }

    bool options_done = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& token = args[i];
        if (options_done || !looks_like_option(token)) {
            m_positionals.push_back(token);
            continue;
        }
        if (token == "--") {
            options_done = true;
            continue;
        }
        const std::size_t eq = token.find('=');
        const std::string name = token.substr(0, eq);
        const Option* option = find(name);
        if (!option) throw UsageError("unknown option '" + name + "'");
        std::string value;
        if (!option->takes_value) {
            if (eq != std::string::npos) throw UsageError(name + ": takes no value");
        } else if (eq != std::string::npos) {
            value = token.substr(eq + 1);
        } else {
            if (i + 1 >= args.size() || looks_like_option(args[i + 1]) || args[i + 1] == "--")
                throw UsageError(name + ": missing value " + option->metavar);
            value = args[++i];
        }
        if (!option->repeatable && has(name)) throw UsageError(name + ": given more than once");
        m_given.emplace_back(name, value);
    }

    // Match the positionals against their specs: a repeated one takes all that remain.
    std::size_t next = 0;
    for (const Positional& spec : m_positional_specs) {
        const std::size_t available = m_positionals.size() - next;
        if (available == 0) {
            if (spec.required) throw UsageError("missing " + spec.metavar);
            continue;
        }
        next += spec.repeated ? available : 1;
    }
    if (next < m_positionals.size())
        throw UsageError("unexpected argument '" + m_positionals[next] + "'");
}

std::string ArgParser::help() const {
    std::ostringstream out;
    out << "Usage: mantissa-cli " << m_command;
    if (!m_options.empty()) out << " [options]";
    for (const Positional& p : m_positional_specs) {
        const std::string name = p.metavar + (p.repeated ? "..." : "");
        out << ' ' << (p.required ? name : "[" + name + "]");
    }
    out << "\n\n" << m_summary << "\n";

    // Two aligned columns: the left one as wide as its widest entry.
    std::vector<std::pair<std::string, std::string>> rows;
    std::size_t width = 0;
    for (const Positional& p : m_positional_specs) {
        rows.emplace_back(p.metavar + (p.repeated ? "..." : ""), p.help);
        width = std::max(width, rows.back().first.size());
    }
    const std::size_t positional_rows = rows.size();
    for (const Option& o : m_options) {
        std::string left = o.name + (o.takes_value ? " " + o.metavar : "");
        rows.emplace_back(left, o.help + (o.repeatable ? " (repeatable)" : ""));
        width = std::max(width, left.size());
    }
    rows.emplace_back("-h, --help", "show this help and exit");
    width = std::max(width, rows.back().first.size());

    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i == 0 && positional_rows > 0) out << "\nArguments:\n";
        if (i == positional_rows) out << "\nOptions:\n";
        out << "  " << rows[i].first << std::string(width - rows[i].first.size() + 2, ' ')
            << rows[i].second << "\n";
    }
    return out.str();
}

bool ArgParser::has(const std::string& name) const {
    for (const auto& given : m_given)
        if (given.first == name) return true;
    return false;
}

std::string ArgParser::value(const std::string& name, const std::string& fallback) const {
    std::string result = fallback;
    for (const auto& given : m_given)
        if (given.first == name) result = given.second; // the last one wins
    return result;
}

std::vector<std::string> ArgParser::values(const std::string& name) const {
    std::vector<std::string> result;
    for (const auto& given : m_given)
        if (given.first == name) result.push_back(given.second);
    return result;
}

std::int64_t ArgParser::int_value(const std::string& name, std::int64_t fallback, std::int64_t min,
                                  std::int64_t max) const {
    if (!has(name)) return fallback;
    const std::string text = value(name);
    errno = 0;
    char* end = nullptr;
    const long long parsed = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || parsed < min || parsed > max)
        throw UsageError(name + ": expected an integer from " + std::to_string(min) + " to " +
                         std::to_string(max) + ", got '" + text + "'");
    return parsed;
}

double ArgParser::double_value(const std::string& name, double fallback) const {
    if (!has(name)) return fallback;
    const std::string text = value(name);
    char* end = nullptr;
    const double parsed = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(parsed))
        throw UsageError(name + ": expected a finite number, got '" + text + "'");
    return parsed;
}

} // namespace mantissa::cli
