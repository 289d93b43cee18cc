// `mantissa-cli policies`: the dtype policies (Keras names) with compute and variable dtypes.
// It is what a learner reads first, so each row also says if loss scaling is on by default.
#include <cstdio>
#include <string>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "core/numeric/dtype.h"
#include "core/numeric/policy.h"

namespace mantissa::cli {

namespace {

std::string json_escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\';
        out += ch;
    }
    return out;
}

} // namespace

int run_policies(const Args& args) {
    ArgParser parser("policies",
                     "List the dtype policies. A policy has a compute dtype (what layers compute\n"
                     "in) and a variable dtype (what weights are stored in); mixed_* policies\n"
                     "compute in 16 bits and keep float32 master weights. Loss scaling is dynamic\n"
                     "by default when the compute dtype is float16.");
    parser.add_flag("--json", "one JSON object per line per policy");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    const bool json = parser.has("--json");
    if (!json)
        std::printf("%-16s %-9s %-9s %-13s %s\n", "policy", "compute", "variable", "loss scaling",
                    "description");
    for (const Policy& p : all_policies()) {
        const std::string compute(dtype_name(p.compute)), variable(dtype_name(p.variable));
        const char* scaling = loss_scaling_recommended(p) ? "dynamic" : "none";
        const std::string description = policy_description(p);
        // Quantised policies (issue 18) add {"recipe": {name, activation, weight, gradient}}.
        std::string recipe;
        if (p.quant)
            recipe = ",\"recipe\":{\"name\":\"" + json_escape(p.quant->name) +
                     "\",\"activation\":\"" +
                     json_escape(describe_quant_spec(p.quant->activation)) + "\",\"weight\":\"" +
                     json_escape(describe_quant_spec(p.quant->weight)) + "\",\"gradient\":\"" +
                     json_escape(describe_quant_spec(p.quant->gradient)) + "\"}";
        if (json)
            std::printf("{\"name\":\"%s\",\"compute\":\"%s\",\"variable\":\"%s\",\"mixed\":%s,"
                        "\"loss_scaling\":\"%s\",\"description\":\"%s\"%s}\n",
                        p.name.c_str(), compute.c_str(), variable.c_str(),
                        p.is_mixed() ? "true" : "false", scaling, json_escape(description).c_str(),
                        recipe.c_str());
        else
            std::printf("%-16s %-9s %-9s %-13s %s\n", p.name.c_str(), compute.c_str(),
                        variable.c_str(), scaling, description.c_str());
    }
    return 0;
}

} // namespace mantissa::cli
