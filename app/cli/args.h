// A small, strict command-line parser for mantissa-cli's subcommands (no Qt, no dependencies).
// Every error names the offending argument; main() turns UsageError into exit status 2.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mantissa::cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class ArgParser {
public:
    ArgParser(std::string command, std::string summary);

    // "--epochs", "N", "number of epochs". Options take one value ("--epochs 3" or "--epochs=3").
    void add_option(const std::string& name, const std::string& metavar, const std::string& help,
                    bool repeatable = false);
    void add_flag(const std::string& name, const std::string& help);
    void add_positional(const std::string& metavar, const std::string& help, bool repeated = false,
                        bool required = true);

    // Throws UsageError for an unknown option, a missing value or a missing positional.
    // "--help"/"-h" sets help_requested() and skips the other checks.
    void parse(const std::vector<std::string>& args);

    bool help_requested() const { return m_help; }
    std::string help() const; // usage line, summary, positionals and options

    bool has(const std::string& name) const; // option given or flag set
    std::string value(const std::string& name, const std::string& fallback = "") const;
    std::vector<std::string> values(const std::string& name) const; // repeatable options
    // Typed getters throw UsageError like "--epochs: expected an integer from 1 to 100000, got
    // 'x'".
    std::int64_t int_value(const std::string& name, std::int64_t fallback, std::int64_t min,
                           std::int64_t max) const;
    double double_value(const std::string& name, double fallback) const; // finite values only
    const std::vector<std::string>& positionals() const { return m_positionals; }

private:
    struct Option {
        std::string name, metavar, help;
        bool takes_value = true;
        bool repeatable = false;
    };
    struct Positional {
        std::string metavar, help;
        bool repeated = false;
        bool required = true;
    };
    const Option* find(const std::string& name) const;

    std::string m_command, m_summary;
    std::vector<Option> m_options;
    std::vector<Positional> m_positional_specs;
    std::vector<std::pair<std::string, std::string>> m_given; // (name, value) in order
    std::vector<std::string> m_positionals;
    bool m_help = false;
};

} // namespace mantissa::cli
