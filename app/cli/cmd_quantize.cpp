// `mantissa-cli quantize`: the block-scaled encoding (MX or NVFP4) of values given in order, one
// report per block: its scale (value and bits), each element's code and decoded value, and how
// many values clipped or flushed to zero. The numbers come from core/numeric/block_quant.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "core/error.h"
#include "core/numeric/block_quant.h"
#include "core/numeric/element_inspect.h"

namespace mantissa::cli {

namespace {

double parse_value(const std::string& text) {
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(begin, &end);
    if (end == begin || *end != '\0')
        throw UsageError("VALUES: '" + text +
                         "' is not a number (try 0.1, -3.5, 1e-5, 0x1p-24, inf or nan)");
    return value;
}

std::string number(double v, int digits) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

// JSON: numbers as numbers, inf/nan (which JSON lacks) as strings.
std::string json_number(double v) {
    if (!std::isfinite(v)) return "\"" + number(v, 17) + "\"";
    return number(v, 17);
}

// "2^-3 = 0.125": MX scales are powers of two, worth showing as such.
std::string scale_text(const BlockScale& s, const BlockFormatSpec& spec) {
    if (std::isnan(s.value)) return "nan";
    if (spec.scale == ElementFormat::E8M0)
        return "2^" + std::to_string(static_cast<int>(s.code) - 127) + " = " + number(s.value, 9);
    return number(s.value, 9);
}

// Core errors name the config field ("scale_rule: ..."); the CLI names the option instead.
UsageError as_usage(const Error& e) {
    std::string msg = e.what();
    for (const auto& [field, option] :
         {std::pair<std::string, std::string>{"scale_rule", "--scale-rule"},
          {"block_size", "--block-size"},
          {"format", "--format"}})
        if (msg.rfind(field + ":", 0) == 0) return UsageError(option + msg.substr(field.size()));
    return UsageError(msg);
}

void print_human(const std::vector<double>& values, const BlockQuantResult& r) {
    const BlockFormatSpec& spec = r.config.spec;
    const ElementFormat elem = spec.element;
    std::printf("%s (%s elements, %s scale per %d values), scale rule %s: %zu value%s in %zu "
                "block%s\n",
                std::string(spec.name).c_str(), std::string(element_format_name(elem)).c_str(),
                std::string(element_format_name(spec.scale)).c_str(), r.config.block_size,
                std::string(scale_rule_name(r.config.rule)).c_str(), values.size(),
                values.size() == 1 ? "" : "s", r.blocks.size(), r.blocks.size() == 1 ? "" : "s");
    if (spec.tensor_scale)
        std::printf("global scale (float32) = amax / (448 * 6) = %s\n",
                    number(r.global_scale, 9).c_str());
    for (std::size_t bi = 0; bi < r.blocks.size(); ++bi) {
        const BlockReport& b = r.blocks[bi];
        std::printf("\nblock %zu (values %zu..%zu): scale %s (%s %s), clipped %d, flushed to zero "
                    "%d\n",
                    bi, b.begin, b.begin + b.count - 1, scale_text(b.scale, spec).c_str(),
                    std::string(element_format_name(spec.scale)).c_str(),
                    element_hex_string(b.scale.code, spec.scale).c_str(), b.clipped, b.zeros);
        std::printf("  %-5s %-14s %-6s %-12s %-14s %s\n", "#", "value", "code", "bits", "decoded",
                    "rel. error");
        for (std::size_t i = b.begin; i < b.begin + b.count; ++i) {
            const double v = values[i], d = r.decoded[i];
            const double rel = v == d ? 0.0 : (v == 0 ? INFINITY : std::fabs(d - v) / std::fabs(v));
            // The core's definition: beyond the element max times the whole scale.
            const double eff = spec.tensor_scale ? b.scale.value * r.global_scale : b.scale.value;
            std::string note;
            if (std::fabs(v) > element_spec(elem).max_finite * eff)
                note = "  clipped";
            else if (v != 0 && d == 0)
                note = "  flushed to 0";
            std::printf("  %-5zu %-14s %-6s %-12s %-14s %s%s\n", i, number(v, 9).c_str(),
                        element_hex_string(r.codes[i], elem).c_str(),
                        element_bit_string(r.codes[i], elem).c_str(), number(d, 9).c_str(),
                        number(rel, 3).c_str(), note.c_str());
        }
    }
}

void print_json(const BlockQuantResult& r) {
    const BlockFormatSpec& spec = r.config.spec;
    for (std::size_t bi = 0; bi < r.blocks.size(); ++bi) {
        const BlockReport& b = r.blocks[bi];
        std::string line = "{\"format\":\"" + std::string(spec.name) +
                           "\",\"block\":" + std::to_string(bi) +
                           ",\"scale\":" + json_number(b.scale.value) + ",\"scale_hex\":\"" +
                           element_hex_string(b.scale.code, spec.scale) + "\"";
        if (spec.tensor_scale) line += ",\"global_scale\":" + json_number(r.global_scale);
        std::string codes, decoded;
        for (std::size_t i = b.begin; i < b.begin + b.count; ++i) {
            const char* sep = i == b.begin ? "" : ",";
            codes += sep + ("\"" + element_hex_string(r.codes[i], spec.element) + "\"");
            decoded += sep + json_number(r.decoded[i]);
        }
        line += ",\"codes\":[" + codes + "],\"decoded\":[" + decoded +
                "],\"clipped\":" + std::to_string(b.clipped) +
                ",\"zeros\":" + std::to_string(b.zeros) + "}";
        std::printf("%s\n", line.c_str());
    }
}

} // namespace

int run_quantize(const Args& args) {
    ArgParser parser(
        "quantize",
        "Block-scaled quantisation: the VALUES, in order, in blocks of 32 (16 for nvfp4; the\n"
        "last block may be short), each block sharing one scale. MX formats (OCP MX v1.0) use\n"
        "an E8M0 power-of-two scale: 'floor' is the spec's 2^(floor(log2 amax) - emax_elem),\n"
        "which can clip the block's largest values to the element max; 'ceil' is the smallest\n"
        "power of two that clips nothing (Transformer Engine). nvfp4 uses an E4M3 scale of\n"
        "amax/6 per 16 values under a float32 tensor scale amax/(448*6). Elements round to\n"
        "nearest even and saturate.\n\n"
        "Formats: mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, mxfp4, nvfp4.\n\n"
        "Examples:\n"
        "  mantissa-cli quantize --format mxfp8_e4m3 500 1 -3.25      # 500 clips to 448\n"
        "  mantissa-cli quantize --format mxfp8_e4m3 --scale-rule ceil 500 1 -3.25\n"
        "  mantissa-cli quantize --format nvfp4 --json 2688 2.4 1 -0.3");
    parser.add_positional("VALUES", "numbers: 0.1, -3.5, 1e-5, 0x1p-24 (hex), inf, -inf, nan",
                          true);
    parser.add_option("--format", "F", "the block format (required; see above)");
    parser.add_option("--scale-rule", "RULE",
                      "floor (MX default) or ceil for MX formats; nvfp4 has its own (amax)");
    parser.add_option("--block-size", "N", "values per block, a power of two (default 32, or 16)");
    parser.add_option("--seed", "N",
                      "round the elements stochastically, reproducibly from this seed");
    parser.add_flag("--json", "one JSON object per line per block: format, block, scale, "
                              "scale_hex, global_scale (nvfp4), codes, decoded, clipped, zeros");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    if (!parser.has("--format")) throw UsageError("--format: missing (e.g. --format mxfp4)");

    BlockQuantConfig config;
    try {
        config.format = block_format_from_name(parser.value("--format"), "--format");
        if (parser.has("--scale-rule"))
            config.rule = scale_rule_from_name(parser.value("--scale-rule"), "--scale-rule");
        config.block_size = static_cast<int>(parser.int_value("--block-size", 0, 1, 4096));
        if (parser.has("--seed")) {
            config.stochastic = true;
            config.seed = static_cast<std::uint64_t>(
                parser.int_value("--seed", 0, 0, std::numeric_limits<std::int64_t>::max()));
        }
        resolve_block_quant(config); // validate before reading the values
    } catch (const Error& e) {
        throw as_usage(e);
    }
    std::vector<double> values;
    for (const std::string& text : parser.positionals()) values.push_back(parse_value(text));

    const BlockQuantResult r = quantize_blocks(values, config);
    if (parser.has("--json"))
        print_json(r);
    else
        print_human(values, r);
    return 0;
}

} // namespace mantissa::cli
