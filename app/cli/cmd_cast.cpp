// `mantissa-cli cast`, the float lab: each input, read as float64, is rounded once to each dtype,
// showing stored value, bits, hex, relative error and what happened (overflow, underflow, ...).
// Besides the dtypes it knows the block-quantisation element formats (float6, float4, e8m0), which
// saturate instead of overflowing (core/numeric/element_inspect).
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "core/error.h"
#include "core/numeric/dtype.h"
#include "core/numeric/element_inspect.h"
#include "core/numeric/float_format.h"
#include "core/numeric/float_inspect.h"

namespace mantissa::cli {

namespace {

struct Input {
    std::string text; // as typed, for messages and JSON
    double value;
};

Input parse_value(const std::string& text) {
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(begin, &end);
    if (end == begin || *end != '\0')
        throw UsageError("VALUES: '" + text +
                         "' is not a number (try 0.1, -3.5, 1e-5, 0x1p-24, inf or nan)");
    return {text, value}; // 1e400 reads as inf and 1e-400 as 0: float64's own rounding
}

// A dtype, or an element format that is not a dtype (float6_e3m2, float6_e2m3, float4_e2m1, e8m0;
// the float8 names stay the dtypes, with their IEEE overflow).
struct Target {
    bool element = false;
    DType dtype = DType::Float32;
    ElementFormat format = ElementFormat::Float4E2M1;
    std::string name() const {
        return std::string(element ? element_format_name(format) : dtype_name(dtype));
    }
};

const ElementFormat kElementOnly[] = {ElementFormat::Float6E3M2, ElementFormat::Float6E2M3,
                                      ElementFormat::Float4E2M1, ElementFormat::E8M0};

std::vector<Target> parse_dtypes(const std::vector<std::string>& lists) {
    std::vector<Target> dtypes;
    for (const std::string& list : lists) {
        std::size_t start = 0;
        while (start <= list.size()) {
            const std::size_t comma = std::min(list.find(',', start), list.size());
            const std::string name = list.substr(start, comma - start);
            start = comma + 1;
            if (name == "all") {
                for (DType d : floating_dtypes()) dtypes.push_back({false, d, {}});
                for (ElementFormat f : kElementOnly) dtypes.push_back({true, {}, f});
                continue;
            }
            ElementFormat format{};
            if (try_element_format_from_name(name, format) && format != ElementFormat::Float8E4M3 &&
                format != ElementFormat::Float8E5M2) {
                dtypes.push_back({true, {}, format});
                continue;
            }
            DType dtype;
            try {
                dtype = dtype_from_name(name);
            } catch (const Error& e) {
                throw UsageError("--dtype: " + std::string(e.what()) +
                                 "; element formats: float6_e3m2, float6_e2m3, float4_e2m1, e8m0");
            }
            if (!is_floating(dtype))
                throw UsageError("--dtype: '" + name + "' is not a floating-point dtype");
            dtypes.push_back({false, dtype, {}});
        }
    }
    if (dtypes.empty())
        for (DType d : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float8E4M3,
                        DType::Float8E5M2})
            dtypes.push_back({false, d, {}});
    return dtypes;
}

std::string number(double v, int digits) {
    if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

// Enough significant digits to show the stored value's difference from the input.
int digits_for(DType dtype) {
    return dtype == DType::Float64 ? 17 : 9;
}

std::string hex_string(std::uint64_t bits, DType dtype) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%0*" PRIX64, static_cast<int>(dtype_size(dtype) * 2), bits);
    return buf;
}

// JSON: numbers as numbers, inf/nan (which JSON lacks) as strings.
std::string json_number(double v) {
    if (!std::isfinite(v)) return "\"" + number(v, 17) + "\"";
    return number(v, 17);
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\';
        if (static_cast<unsigned char>(ch) < 0x20) continue;
        out += ch;
    }
    return out + "\"";
}

// Display width of UTF-8 text (the arrows are one column, three bytes).
std::size_t columns(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80 ? 1 : 0;
    return n;
}

void print_table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> widths;
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (widths.size() <= i) widths.push_back(0);
            widths[i] = std::max(widths[i], columns(row[i]));
        }
    for (const auto& row : rows) {
        std::string line = "  ";
        for (std::size_t i = 0; i < row.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size()) line += std::string(widths[i] - columns(row[i]) + 2, ' ');
        }
        std::printf("%s\n", line.c_str());
    }
}

// x rounded to the element format, squared exactly (a few bits each) and rounded again.
ElementInspection element_square(double x, ElementFormat f) {
    const double r = decode_element(encode_element(x, f), f);
    return inspect_element(r * r, f);
}

void print_human(const Input& in, const std::vector<Target>& dtypes, bool square) {
    std::printf("%s  (float64 %s, %s)\n", in.text.c_str(), number(in.value, 17).c_str(),
                hex_string(encode_bits(in.value, DType::Float64), DType::Float64).c_str());
    std::vector<std::vector<std::string>> rows = {
        {"dtype", "stored value", "sign|exponent|mantissa", "hex", "rel. error", "class"}};
    for (const Target& t : dtypes) {
        if (t.element) {
            const ElementInspection c = inspect_element(in.value, t.format);
            rows.push_back({t.name(), number(c.stored, 9), element_bit_string(c.code, t.format),
                            element_hex_string(c.code, t.format), number(c.rel_error, 3),
                            element_outcome_label(c.outcome)});
            continue;
        }
        const DType d = t.dtype;
        const FloatInspection c = inspect_value(in.value, d);
        rows.push_back({std::string(dtype_name(d)), number(c.stored, digits_for(d)),
                        bit_string(c.bits, d), hex_string(c.bits, d), number(c.rel_error, 3),
                        cast_outcome_label(c.outcome)});
    }
    print_table(rows);
    if (square) {
        std::printf(
            "\n  x² computed in each dtype (x rounded to it, multiplied, rounded again):\n");
        std::vector<std::vector<std::string>> sq = {{"dtype", "x²", "hex", "class"}};
        for (const Target& t : dtypes) {
            if (t.element) {
                const ElementInspection c = element_square(in.value, t.format);
                sq.push_back({t.name(), number(c.stored, 9), element_hex_string(c.code, t.format),
                              element_outcome_label(c.outcome)});
                continue;
            }
            const DType d = t.dtype;
            const FloatInspection c = compute_in(ArithOp::Square, in.value, 0, d).result;
            sq.push_back({std::string(dtype_name(d)), number(c.stored, digits_for(d)),
                          hex_string(c.bits, d), cast_outcome_label(c.outcome)});
        }
        print_table(sq);
    }
}

void print_json(const Input& in, const std::vector<Target>& dtypes, bool square) {
    for (const Target& t : dtypes) {
        if (t.element) {
            const ElementInspection c = inspect_element(in.value, t.format);
            std::string line =
                "{\"input\":" + json_number(in.value) + ",\"text\":" + json_string(in.text) +
                ",\"dtype\":\"" + t.name() + "\",\"value\":" + json_number(c.stored) +
                ",\"hex\":\"" + element_hex_string(c.code, t.format) + "\",\"bits\":\"" +
                element_bit_string(c.code, t.format) + "\",\"class\":\"" +
                element_outcome_name(c.outcome) + "\",\"rel_error\":" + json_number(c.rel_error);
            if (square) {
                const ElementInspection s = element_square(in.value, t.format);
                line += ",\"square\":" + json_number(s.stored) + ",\"square_hex\":\"" +
                        element_hex_string(s.code, t.format) + "\",\"square_class\":\"" +
                        element_outcome_name(s.outcome) + "\"";
            }
            std::printf("%s}\n", line.c_str());
            continue;
        }
        const DType d = t.dtype;
        const FloatInspection c = inspect_value(in.value, d);
        std::string line =
            "{\"input\":" + json_number(in.value) + ",\"text\":" + json_string(in.text) +
            ",\"dtype\":\"" + std::string(dtype_name(d)) + "\",\"value\":" + json_number(c.stored) +
            ",\"hex\":\"" + hex_string(c.bits, d) + "\",\"bits\":\"" + bit_string(c.bits, d) +
            "\",\"class\":\"" + cast_outcome_name(c.outcome) +
            "\",\"rel_error\":" + json_number(c.rel_error);
        if (square) {
            const FloatInspection s = compute_in(ArithOp::Square, in.value, 0, d).result;
            line += ",\"square\":" + json_number(s.stored) + ",\"square_hex\":\"" +
                    hex_string(s.bits, d) + "\",\"square_class\":\"" +
                    cast_outcome_name(s.outcome) + "\"";
        }
        std::printf("%s}\n", line.c_str());
    }
}

} // namespace

int run_cast(const Args& args) {
    ArgParser parser(
        "cast", "The float lab: each VALUE is read as float64 and rounded once (nearest, ties\n"
                "to even) to each dtype. Shows the stored value, its bits as\n"
                "sign|exponent|mantissa, the hex pattern, the relative error and the class:\n"
                "normal, subnormal, zero, inf, nan, overflow→inf, overflow→nan (float8_e4m3\n"
                "has no infinity) or underflow→0. The block-quantisation element formats\n"
                "float6_e3m2, float6_e2m3, float4_e2m1 (no inf/NaN: saturate to ±max) and\n"
                "e8m0 (powers of two 2^-127..2^127, no zero, no sign) are listed by name.\n\n"
                "Examples:\n"
                "  mantissa-cli cast 256 --square     # 256² overflows float16\n"
                "  mantissa-cli cast 1e-5 --square    # 1e-5² underflows float16\n"
                "  mantissa-cli cast 0.1 -3.5 --dtype float16,bfloat16 --json\n"
                "  mantissa-cli cast 5 100 --dtype float4_e2m1,float6_e3m2,e8m0");
    parser.add_positional("VALUES", "numbers: 0.1, -3.5, 1e-5, 0x1p-24 (hex), inf, -inf, nan",
                          true);
    parser.add_option(
        "--dtype", "LIST",
        "comma-separated dtypes or element formats, or 'all' (default: float32, float16, "
        "bfloat16 and the float8s)",
        true);
    parser.add_flag("--square", "also show x² computed in each dtype (round, multiply, round)");
    parser.add_flag("--json", "one JSON object per line per (value, dtype); classes as "
                              "overflow_to_inf, underflow_to_zero, ...");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    const std::vector<Target> dtypes = parse_dtypes(parser.values("--dtype"));
    std::vector<Input> inputs;
    for (const std::string& text : parser.positionals()) inputs.push_back(parse_value(text));

    const bool square = parser.has("--square"), json = parser.has("--json");
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (json) {
            print_json(inputs[i], dtypes, square);
        } else {
            if (i > 0) std::printf("\n");
            print_human(inputs[i], dtypes, square);
        }
    }
    return 0;
}

} // namespace mantissa::cli
