// Runs the real mantissa-cli binary: `quantize` (MX / NVFP4 block encoding, its JSON contract and
// its errors) and `cast` on the element formats that are not dtypes (float6, float4, e8m0).

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/unit/cli.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa::unit;

namespace {

std::vector<nlohmann::json> json_lines(const std::string& out) {
    std::vector<nlohmann::json> objects;
    for (const std::string& line : split_lines(out)) {
        if (line.empty()) continue;
        nlohmann::json doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (doc.is_discarded() || !doc.is_object()) return {};
        objects.push_back(std::move(doc));
    }
    return objects;
}

std::vector<std::string> strings(const nlohmann::json& v) {
    std::vector<std::string> out;
    for (const nlohmann::json& x : v) out.push_back(x.get<std::string>());
    return out;
}

std::vector<double> numbers(const nlohmann::json& v) {
    std::vector<double> out;
    for (const nlohmann::json& x : v) out.push_back(x.get<double>());
    return out;
}

} // namespace

class TestCliQuantize {

public:
    // The clipping case: amax = 500 in MXFP8 E4M3 clips under floor, not under ceil.
    void floorClipsCeilDoesNot() {
        const ProcessResult f =
            run_cli({"quantize", "--format", "mxfp8_e4m3", "--json", "500", "1", "-3.25"});
        CHECK_EQ(f.status, 0);
        CHECK_MSG(f.err.empty(), (f.err));
        const std::vector<nlohmann::json> fl = json_lines(f.out);
        CHECK_EQ(fl.size(), 1);
        const nlohmann::json b = fl[0];
        std::vector<std::string> keys;
        for (const auto& [key, value] : b.items()) keys.push_back(key);
        CHECK_EQ(keys, (std::vector<std::string>{"block", "clipped", "codes", "decoded", "format",
                                                 "scale", "scale_hex", "zeros"}));
        CHECK_EQ(b.at("format").get<std::string>(), std::string("mxfp8_e4m3"));
        CHECK_EQ(b.at("block").get<int>(), 0);
        CHECK_EQ(b.at("scale").get<double>(), 1.0);
        CHECK_EQ(b.at("scale_hex").get<std::string>(), std::string("0x7F"));
        CHECK_EQ(strings(b.at("codes")), (std::vector<std::string>{"0x7E", "0x38", "0xC5"}));
        CHECK_EQ(numbers(b.at("decoded")), (std::vector<double>{448, 1, -3.25}));
        CHECK_EQ(b.at("clipped").get<int>(), 1);
        CHECK_EQ(b.at("zeros").get<int>(), 0);

        const ProcessResult c = run_cli({"quantize", "--format", "mxfp8_e4m3", "--scale-rule",
                                         "ceil", "--json", "500", "1", "-3.25"});
        CHECK_EQ(c.status, 0);
        const std::vector<nlohmann::json> cl = json_lines(c.out);
        const nlohmann::json cb = cl.empty() ? nlohmann::json::object() : cl[0];
        CHECK_EQ(cb.at("scale").get<double>(), 2.0);
        CHECK_EQ(cb.at("scale_hex").get<std::string>(), std::string("0x80"));
        CHECK_EQ(cb.at("clipped").get<int>(), 0);
        CHECK_EQ(numbers(cb.at("decoded")), (std::vector<double>{512, 1, -3.25}));

        // The human table marks the clipped value.
        const ProcessResult h = run_cli({"quantize", "--format", "mxfp8_e4m3", "500", "1"});
        CHECK_EQ(h.status, 0);
        CHECK_MSG(contains(h.out, "clipped 1") && contains(h.out, "448"), (h.out));
    }

    // NVFP4: blocks of 16 (the last short), the E4M3 block scale and the float32 global scale.
    void nvfp4Json() {
        std::vector<std::string> args{"quantize", "--format", "nvfp4", "--json", "2688",
                                      "1344",     "224",      "100",   "-896",   "560"};
        for (int i = 0; i < 10; ++i) args.push_back("0");
        args.insert(args.end(), {"2.4", "1", "-0.3"});
        const ProcessResult r = run_cli(args);
        CHECK_EQ(r.status, 0);
        const std::vector<nlohmann::json> blocks = json_lines(r.out);
        CHECK_EQ(blocks.size(), 2);
        CHECK_EQ(blocks[0].at("global_scale").get<double>(), 1.0);
        CHECK_EQ(blocks[0].at("scale_hex").get<std::string>(), std::string("0x7E"));
        CHECK_EQ(blocks[0].at("zeros").get<int>(), 1);
        const std::vector<std::string> codes = strings(blocks[0].at("codes"));
        CHECK_EQ(std::vector<std::string>(codes.begin(),
                                          codes.begin() + std::min<std::size_t>(6, codes.size())),
                 (std::vector<std::string>{"0x7", "0x5", "0x1", "0x0", "0xC", "0x2"}));
        CHECK_EQ(blocks[1].at("block").get<int>(), 1);
        CHECK_EQ(blocks[1].at("scale").get<double>(), 0.40625);
        CHECK_EQ(blocks[1].at("scale_hex").get<std::string>(), std::string("0x2D"));
        CHECK_EQ(strings(blocks[1].at("codes")), (std::vector<std::string>{"0x7", "0x4", "0x9"}));
        CHECK_EQ(numbers(blocks[1].at("decoded")),
                 (std::vector<double>{2.4375, 0.8125, -0.203125}));
    }

    // 33 values make a block of 32 and a block of 1; a NaN makes its block's scale NaN.
    void shortLastBlockAndNaN() {
        std::vector<std::string> args{"quantize", "--format", "mxfp4", "--json"};
        for (int i = 0; i < 32; ++i) args.push_back(std::to_string(i % 7 - 3));
        args.push_back("nan");
        const ProcessResult r = run_cli(args);
        CHECK_EQ(r.status, 0);
        const std::vector<nlohmann::json> blocks = json_lines(r.out);
        CHECK_EQ(blocks.size(), 2);
        CHECK_EQ(blocks[0].at("codes").size(), 32);
        CHECK_EQ(blocks[0].at("scale").get<double>(), 0.5); // amax 3: 2^(floor(log2 3) - 2)
        CHECK_EQ(blocks[1].at("codes").size(), 1);
        CHECK_EQ(blocks[1].at("scale").get<std::string>(), std::string("nan"));
        CHECK_EQ(blocks[1].at("scale_hex").get<std::string>(), std::string("0xFF"));
        CHECK_EQ(blocks[1].at("decoded").at(0).get<std::string>(), std::string("nan"));
    }

    void badArgumentsExit2_data() {
        add_column<std::vector<std::string>>("args");
        add_column<std::string>("named");
        new_row("no format") << std::vector<std::string>{"quantize", "1"} << "--format";
        new_row("unknown format") << std::vector<std::string>{"quantize", "--format", "mxfp5", "1"}
                                  << "mxfp5";
        new_row("rule nvfp4 lacks") << std::vector<std::string>{"quantize",     "--format", "nvfp4",
                                                                "--scale-rule", "floor",    "1"}
                                    << "--scale-rule: nvfp4";
        new_row("unknown rule") << std::vector<std::string>{"quantize",     "--format", "mxfp4",
                                                            "--scale-rule", "round",    "1"}
                                << "--scale-rule";
        new_row("block size") << std::vector<std::string>{"quantize",     "--format", "mxfp4",
                                                          "--block-size", "24",       "1"}
                              << "--block-size: 24";
        new_row("not a number") << std::vector<std::string>{"quantize", "--format", "mxfp4", "1",
                                                            "x2"}
                                << "x2";
        new_row("no values") << std::vector<std::string>{"quantize", "--format", "mxfp4"}
                             << "VALUES";
        new_row("cast unknown element")
            << std::vector<std::string>{"cast", "1", "--dtype", "float5_e2m2"} << "float4_e2m1";
    }
    void badArgumentsExit2() {
        FETCH(std::vector<std::string>, args);
        FETCH(std::string, named);
        const ProcessResult r = run_cli(args);
        CHECK_EQ(r.status, 2);
        CHECK_MSG(contains(r.err, named), (r.err));
        CHECK(r.out.empty());
    }

    // `cast` knows float6_e3m2, float6_e2m3, float4_e2m1 and e8m0: they saturate, e8m0 has
    // neither zero nor sign.
    void castElementFormats() {
        const ProcessResult r = run_cli(
            {"cast", "100", "--json", "--dtype", "float6_e3m2,float6_e2m3,float4_e2m1,e8m0"});
        CHECK_EQ(r.status, 0);
        const std::vector<nlohmann::json> rows = json_lines(r.out);
        CHECK_EQ(rows.size(), 4);
        CHECK_EQ(rows[0].at("value").get<double>(), 28.0);
        CHECK_EQ(rows[0].at("class").get<std::string>(), std::string("saturated"));
        CHECK_EQ(rows[0].at("hex").get<std::string>(), std::string("0x1F"));
        CHECK_EQ(rows[1].at("value").get<double>(), 7.5);
        CHECK_EQ(rows[2].at("value").get<double>(), 6.0);
        CHECK_EQ(rows[2].at("bits").get<std::string>(), std::string("0|11|1"));
        CHECK_EQ(rows[3].at("dtype").get<std::string>(), std::string("e8m0"));
        CHECK_EQ(rows[3].at("value").get<double>(), 128.0); // 100 is nearer 128 than 64
        CHECK_EQ(rows[3].at("hex").get<std::string>(), std::string("0x86"));

        const ProcessResult z = run_cli({"cast", "0", "-2", "--json", "--dtype", "e8m0"});
        const std::vector<nlohmann::json> e = json_lines(z.out);
        CHECK_EQ(e.size(), 2);
        CHECK_EQ(e[0].at("class").get<std::string>(), std::string("clamped_to_min"));
        CHECK_EQ(e[1].at("class").get<std::string>(), std::string("negative_to_nan"));

        // 'all' lists the dtypes and then the four element formats.
        const ProcessResult a = run_cli({"cast", "1", "--json", "--dtype", "all"});
        CHECK_EQ(json_lines(a.out).size(), 6 + 4);
    }

    void help() {
        const ProcessResult r = run_cli({"quantize", "--help"});
        CHECK_EQ(r.status, 0);
        CHECK(contains(r.out, "--scale-rule") && contains(r.out, "nvfp4"));
        const ProcessResult top = run_cli({"--help"});
        CHECK(contains(top.out, "quantize"));
    }
};

MANTISSA_TEST_MAIN(TestCliQuantize, floorClipsCeilDoesNot, nvfp4Json, shortLastBlockAndNaN,
                   badArgumentsExit2, castElementFormats, help)
