// Runs the real mantissa-cli binary: the float lab (`cast`), `policies`, help and exit statuses,
// and selftest's contract with scripts (--list, --require-gpu). These are the commands a learner
// types first, so their output and errors are a contract.

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/factory/backend_factory.h"
#include "tests/unit/cli.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa::unit;

namespace {

// The non-empty lines of `text` (QString::split('\n', Qt::SkipEmptyParts)).
std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    for (std::string& line : split(text, '\n'))
        if (!line.empty()) lines.push_back(std::move(line));
    return lines;
}

// The JSON object on one line; an empty object when it is not one (QJsonDocument::object()).
nlohmann::json object_of(const std::string& line) {
    nlohmann::json doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    return doc.is_object() ? doc : nlohmann::json::object();
}

// `text` without leading and trailing white space.
std::string trimmed(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// The first `n` white-space separated words of `text`, joined by single spaces.
std::string first_words(const std::string& text, int n) {
    std::istringstream in(text);
    std::string result, word;
    for (int i = 0; i < n && in >> word; ++i) result += (i ? " " : "") + word;
    return result;
}

// The JSON object of one dtype among `cast --json` lines.
nlohmann::json json_for(const std::string& out, const std::string& dtype) {
    for (const std::string& line : lines_of(out)) {
        const nlohmann::json o = object_of(line);
        if (o.value("dtype", "") == dtype) return o;
    }
    return nlohmann::json::object();
}

} // namespace

class TestCliBasic {

public:
    void castSquareOverflowsFloat16();
    void castSquareUnderflowsFloat16Json();
    void castMaxFloat16IsExact();
    void castNegativeAndSpecialValues();
    void badArgumentsExit2_data();
    void badArgumentsExit2();
    void policiesListsAll();
    void policiesJson();
    void help_data();
    void help();
    void version();
    void selftestListsTheOpTable();
    void selftestRequireGpuExits3WithTheReason();
};

void TestCliBasic::castSquareOverflowsFloat16() {
    const ProcessResult r = run_cli({"cast", "256", "--square"});
    CHECK_EQ(r.status, 0);
    CHECK_MSG(r.err.empty(), (r.err));
    // The x² table's float16 row says overflow.
    const std::size_t square_table = r.out.find("x²");
    CHECK(square_table != std::string::npos && square_table > 0);
    bool found = false;
    for (const std::string& line : split(r.out.substr(square_table), '\n'))
        if (trimmed(line).starts_with("float16 "))
            found = contains(line, "overflow") && contains(line, "inf");
    CHECK_MSG(found, (r.out));
}

void TestCliBasic::castSquareUnderflowsFloat16Json() {
    const ProcessResult r = run_cli({"cast", "1e-5", "--square", "--json"});
    CHECK_EQ(r.status, 0);
    const std::vector<std::string> lines = lines_of(r.out);
    CHECK_EQ(lines.size(), 5); // the five default dtypes
    for (const std::string& line : lines) {
        const nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
        CHECK_MSG(!doc.is_discarded() && doc.is_object(), (line));
        for (const char* key : {"input", "dtype", "value", "hex", "bits", "class", "rel_error",
                                "square", "square_class"})
            CHECK_MSG(doc.contains(key), (line));
    }
    const nlohmann::json f16 = json_for(r.out, "float16");
    CHECK(contains(f16.at("square_class").get<std::string>(), "underflow"));
    CHECK_EQ(f16.at("square").get<double>(), 0.0);
    CHECK_EQ(f16.at("class").get<std::string>(), std::string("subnormal"));
    CHECK_EQ(json_for(r.out, "float32").at("square_class").get<std::string>(),
             std::string("normal"));
}

void TestCliBasic::castMaxFloat16IsExact() {
    const ProcessResult r = run_cli({"cast", "65504", "--dtype", "float16"});
    CHECK_EQ(r.status, 0);
    CHECK(contains(r.out, "0x7BFF"));
    CHECK(contains(r.out, "0|11110|1111111111"));
    const ProcessResult j = run_cli({"cast", "65504", "--dtype=float16", "--json"});
    const nlohmann::json o = json_for(j.out, "float16");
    CHECK_EQ(o.at("value").get<double>(), 65504.0);
    CHECK_EQ(o.at("rel_error").get<double>(), 0.0);
    CHECK_EQ(o.at("class").get<std::string>(), std::string("normal"));
    // One more and it still rounds down; 65520 is the overflow threshold.
    const ProcessResult t = run_cli({"cast", "65519.99", "65520", "--dtype", "fp16", "--json"});
    const std::vector<std::string> lines = lines_of(t.out);
    CHECK_EQ(lines.size(), 2);
    CHECK_EQ(object_of(lines[0]).at("hex").get<std::string>(), std::string("0x7BFF"));
    CHECK_EQ(object_of(lines[1]).at("class").get<std::string>(), std::string("overflow_to_inf"));
}

void TestCliBasic::castNegativeAndSpecialValues() {
    const ProcessResult r =
        run_cli({"cast", "-3.5", "-inf", "nan", "0x1p-24", "--dtype", "float16", "--json"});
    CHECK_EQ(r.status, 0);
    const std::vector<std::string> lines = lines_of(r.out);
    CHECK_EQ(lines.size(), 4);
    const auto obj = [&](std::size_t i) { return object_of(lines[i]); };
    CHECK_EQ(obj(0).at("value").get<double>(), -3.5);
    CHECK_EQ(obj(1).at("value").get<std::string>(), std::string("-inf"));
    CHECK_EQ(obj(2).at("class").get<std::string>(), std::string("nan"));
    CHECK_EQ(obj(3).at("hex").get<std::string>(), std::string("0x0001"));
    CHECK_EQ(obj(3).at("class").get<std::string>(), std::string("subnormal"));
    // e4m3: 464 ties to 448, 465 overflows to NaN (no infinity).
    const ProcessResult e = run_cli({"cast", "464", "465", "--dtype", "float8_e4m3", "--json"});
    CHECK(contains(e.out, "\"hex\":\"0x7E\""));
    CHECK(contains(e.out, "overflow_to_nan"));
}

void TestCliBasic::badArgumentsExit2_data() {
    add_column<std::vector<std::string>>("args");
    add_column<std::string>("named"); // what stderr must mention
    new_row("not a number") << std::vector<std::string>{"cast", "12abc"} << "12abc";
    new_row("unknown dtype") << std::vector<std::string>{"cast", "1", "--dtype", "float12"}
                             << "float12";
    new_row("one bad dtype in a list")
        << std::vector<std::string>{"cast", "1", "--dtype", "float16,bogus"} << "bogus";
    new_row("integer dtype") << std::vector<std::string>{"cast", "1", "--dtype", "int32"}
                             << "int32";
    new_row("no values") << std::vector<std::string>{"cast"} << "VALUES";
    new_row("unknown option") << std::vector<std::string>{"cast", "1", "--squared"} << "--squared";
    new_row("missing value") << std::vector<std::string>{"cast", "1", "--dtype"} << "--dtype";
    new_row("policies extra") << std::vector<std::string>{"policies", "extra"} << "extra";
    new_row("unknown command") << std::vector<std::string>{"frobnicate"} << "frobnicate";
    new_row("no command") << std::vector<std::string>{} << "Usage";
}

void TestCliBasic::badArgumentsExit2() {
    FETCH(std::vector<std::string>, args);
    FETCH(std::string, named);
    const ProcessResult r = run_cli(args);
    CHECK_EQ(r.status, 2);
    CHECK_MSG(contains(r.err, named), (r.err));
    CHECK(r.out.empty());
}

void TestCliBasic::policiesListsAll() {
    const ProcessResult r = run_cli({"policies"});
    CHECK_EQ(r.status, 0);
    for (const char* name :
         {"float32", "float64", "float16", "bfloat16", "mixed_float16", "mixed_bfloat16"})
        CHECK_MSG(contains(r.out, std::string(name) + " "), name);
    // mixed_float16: float16 compute, float32 variables, dynamic loss scaling.
    for (const std::string& line : split(r.out, '\n'))
        if (line.starts_with("mixed_float16 "))
            CHECK_EQ(first_words(line, 4), std::string("mixed_float16 float16 float32 dynamic"));
}

void TestCliBasic::policiesJson() {
    const ProcessResult r = run_cli({"policies", "--json"});
    CHECK_EQ(r.status, 0);
    const std::vector<std::string> lines = lines_of(r.out);
    CHECK_EQ(lines.size(), 13); // 6 Keras policies + 7 quantised ones (issue 18)
    int recipes = 0;
    for (const std::string& line : lines) {
        const nlohmann::json o = object_of(line);
        CHECK_MSG(!o.value("name", "").empty(), line);
        CHECK(o.contains("compute") && o.contains("variable") && o.contains("loss_scaling"));
        if (o.contains("recipe")) ++recipes;
        if (o.value("name", "") == "nvfp4")
            CHECK_MSG(contains(o["recipe"].value("weight", ""), "16×16"), line);
    }
    CHECK_EQ(recipes, 7);
}

void TestCliBasic::help_data() {
    add_column<std::vector<std::string>>("args");
    add_column<std::string>("mentions");
    new_row("top level") << std::vector<std::string>{"--help"} << "policies";
    new_row("top level -h") << std::vector<std::string>{"-h"} << "cast";
    new_row("cast") << std::vector<std::string>{"cast", "--help"} << "--square";
    new_row("cast with values") << std::vector<std::string>{"cast", "1", "--help"} << "--dtype";
    new_row("policies") << std::vector<std::string>{"policies", "--help"} << "--json";
    new_row("selftest") << std::vector<std::string>{"selftest", "--help"} << "--require-gpu";
}

void TestCliBasic::help() {
    FETCH(std::vector<std::string>, args);
    FETCH(std::string, mentions);
    const ProcessResult r = run_cli(args);
    CHECK_EQ(r.status, 0);
    CHECK(r.out.starts_with("Usage: mantissa-cli"));
    CHECK_MSG(contains(r.out, mentions), (r.out));
}

void TestCliBasic::version() {
    const ProcessResult r = run_cli({"--version"});
    CHECK_EQ(r.status, 0);
    CHECK(r.out.starts_with("mantissa-cli "));
}

// One case a line, every op at every dtype (core/check/op_cases.h).
void TestCliBasic::selftestListsTheOpTable() {
    const ProcessResult r = run_cli({"selftest", "--list"});
    CHECK_EQ(r.status, 0);
    const std::vector<std::string> lines = lines_of(r.out);
    CHECK_MSG(lines.size() >= 60, std::to_string(lines.size()));
    for (const std::string& line : lines)
        CHECK_MSG(line.ends_with(" float64") || line.ends_with(" float32") ||
                      line.ends_with(" float16") || line.ends_with(" bfloat16"),
                  (line));
    CHECK(std::find(lines.begin(), lines.end(),
                    "conv2d bwd-filter 4x10x10x3 k3 s1 p0 f8 bfloat16") != lines.end());
}

// A GPU script must not pass where no GPU opened: exit 3, and the reason on stderr, before any
// CPU training (so this is quick).
void TestCliBasic::selftestRequireGpuExits3WithTheReason() {
    for (const mantissa::DeviceInfo& device : mantissa::available_devices())
        if (device.is_gpu)
            SKIP_TEST("a CUDA device is present: --require-gpu would run the checks");
    const ProcessResult r = run_cli({"selftest", "--require-gpu"});
    CHECK_EQ(r.status, 3);
    CHECK_MSG(contains(r.err, "no CUDA device was checked: "), (r.err));
    // The reason: no CUDA engine in this build, no device, or the driver/runtime's own words.
    const std::string marker = "no CUDA device was checked: ";
    const std::string reason = trimmed(r.err.substr(r.err.find(marker) + marker.size()));
    CHECK_MSG(contains(reason, "CUDA"), (reason));
    CHECK_MSG(r.out.empty(), (r.out));
}

MANTISSA_TEST_MAIN(TestCliBasic, castSquareOverflowsFloat16, castSquareUnderflowsFloat16Json,
                   castMaxFloat16IsExact, castNegativeAndSpecialValues, badArgumentsExit2,
                   policiesListsAll, policiesJson, help, version, selftestListsTheOpTable,
                   selftestRequireGpuExits3WithTheReason)
