// The frontier policies' recipes and their options: TE's FP8 recipes (HYBRID = E4M3 forward, E5M2
// gradients), MX v1.0 block formats along the reduction dimension, NVFP4 with 2-D weight tiles.
#include "core/numeric/quant_recipe.h"

#include <array>
#include <utility>

#include "core/error.h"

namespace mantissa {

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& why) {
    throw Error(ErrorKind::Config, "recipe." + field + ": " + why);
}

struct BlockPolicy {
    std::string_view name;
    BlockFormat format;
};
constexpr std::array<BlockPolicy, 6> kBlockPolicies = {{
    {"mxfp8_e4m3", BlockFormat::MxFp8E4M3},
    {"mxfp8_e5m2", BlockFormat::MxFp8E5M2},
    {"mxfp6_e3m2", BlockFormat::MxFp6E3M2},
    {"mxfp6_e2m3", BlockFormat::MxFp6E2M3},
    {"mxfp4", BlockFormat::MxFp4},
    {"nvfp4", BlockFormat::NvFp4},
}};

QuantSpec block_spec(BlockFormat format, int rows, int cols) {
    QuantSpec s;
    s.scaling = QuantScaling::Block;
    s.block.format = format;
    s.element = block_format_spec(format).element;
    s.block_rows = rows;
    s.block_cols = cols;
    return s;
}

} // namespace

std::string_view quant_role_name(QuantRole role) {
    switch (role) {
    case QuantRole::Activation:
        return "activation";
    case QuantRole::Weight:
        return "weight";
    case QuantRole::Gradient:
        return "gradient";
    }
    return "?";
}

const QuantSpec& QuantRecipe::spec(QuantRole role) const {
    return role == QuantRole::Activation ? activation
           : role == QuantRole::Weight   ? weight
                                         : gradient;
}

bool is_quantized_policy(std::string_view name) {
    if (name == "mixed_float8") return true;
    for (const BlockPolicy& p : kBlockPolicies)
        if (p.name == name) return true;
    return false;
}

QuantRecipe make_recipe(std::string_view policy_name, const RecipeOptions& o) {
    if (!is_quantized_policy(policy_name))
        throw Error(ErrorKind::Config, "recipe: policy '" + std::string(policy_name) +
                                           "' quantises nothing; a recipe needs mixed_float8, "
                                           "mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, "
                                           "mxfp4 or nvfp4");
    const bool fp8 = policy_name == "mixed_float8";
    const std::string kind = o.kind.value_or("delayed");
    auto only_fp8 = [&](bool set, const char* field) {
        if (set && !fp8)
            bad(field, "only for policy mixed_float8 (this is " + std::string(policy_name) + ")");
    };
    only_fp8(o.kind.has_value(), "kind");
    only_fp8(o.fp8_format.has_value(), "fp8_format");
    only_fp8(o.gemm.has_value(), "gemm");
    if (o.gemm && kind == "block")
        bad("gemm", "only for kind 'delayed' or 'current' (FP8 GEMMs take one scale per tensor; "
                    "this is 'block')");
    if (o.gemm && *o.gemm != "auto" && *o.gemm != "fp8" && *o.gemm != "fake_quant")
        bad("gemm", "expected \"auto\", \"fp8\" or \"fake_quant\", got \"" + *o.gemm + "\"");
    if (o.hadamard && policy_name != "nvfp4")
        bad("hadamard", "only for policy nvfp4 (this is " + std::string(policy_name) + ")");
    auto only_delayed = [&](bool set, const char* field) {
        only_fp8(set, field);
        if (set && kind != "delayed")
            bad(field, "only for kind 'delayed' (this is '" + kind + "')");
    };
    only_delayed(o.history_len.has_value(), "history_len");
    only_delayed(o.margin.has_value(), "margin");
    only_delayed(o.amax_compute.has_value(), "amax_compute");
    if (o.history_len && *o.history_len < 1) bad("history_len", "must be ≥ 1");
    if (o.history_len && *o.history_len > 65536) bad("history_len", "must be ≤ 65536");
    if (o.margin && (*o.margin < 0 || *o.margin > 64)) bad("margin", "must be between 0 and 64");
    if (o.amax_compute && *o.amax_compute != "max" && *o.amax_compute != "most_recent")
        bad("amax_compute", "expected \"max\" or \"most_recent\", got \"" + *o.amax_compute + "\"");

    QuantRecipe r;
    if (fp8) {
        if (kind != "delayed" && kind != "current" && kind != "block")
            bad("kind", "expected \"delayed\", \"current\" or \"block\", got \"" + kind + "\"");
        const std::string f = o.fp8_format.value_or("hybrid");
        if (f != "hybrid" && f != "e4m3")
            bad("fp8_format",
                "expected \"hybrid\" (E5M2 gradients) or \"e4m3\", got \"" + f + "\"");
        if (o.scale_rule) bad("scale_rule", "only for the MX policies (mxfp8_e4m3, ..., mxfp4)");
        if (o.weight_2d) bad("weight_2d", "only for policy nvfp4");
        const bool hybrid = f == "hybrid";
        r.name = kind;
        if (kind == "block") {
            // DeepSeek-V3 / TE Float8BlockScaling: 1x128 activation and gradient blocks, 128x128
            // weight blocks, power-of-two scales (E8M0, the ceil rule: nothing clips).
            r.activation = block_spec(BlockFormat::MxFp8E4M3, 1, 128);
            r.weight = block_spec(BlockFormat::MxFp8E4M3, 128, 128);
            r.gradient =
                block_spec(hybrid ? BlockFormat::MxFp8E5M2 : BlockFormat::MxFp8E4M3, 1, 128);
            for (QuantSpec* s : {&r.activation, &r.weight, &r.gradient})
                s->block.rule = ScaleRule::Ceil;
        } else {
            QuantSpec s;
            s.scaling = kind == "delayed" ? QuantScaling::Delayed : QuantScaling::Current;
            s.element = ElementFormat::Float8E4M3;
            s.history_len = o.history_len.value_or(1024);
            s.margin = o.margin.value_or(0);
            s.amax_most_recent = o.amax_compute.value_or("max") == "most_recent";
            r.activation = r.weight = r.gradient = s;
            if (hybrid) r.gradient.element = ElementFormat::Float8E5M2;
            r.gemm = o.gemm.value_or("auto");
        }
        if (o.stochastic_gradients && *o.stochastic_gradients) {
            if (kind != "block")
                bad("stochastic_gradients", "per-tensor FP8 recipes round to nearest; use the "
                                            "block kind or a block policy");
            r.gradient.block.stochastic = true;
        }
    } else {
        BlockFormat format = BlockFormat::MxFp4;
        for (const BlockPolicy& p : kBlockPolicies)
            if (p.name == policy_name) format = p.format;
        const BlockFormatSpec& spec = block_format_spec(format);
        const int n = spec.block_size;
        r.name = std::string(policy_name);
        // Blocks run along the reduction dimension of the forward GEMM: a row of the activation
        // (batch, in) and a column of the weight (in, units); gradients along their rows (dX's).
        r.activation = block_spec(format, 1, n);
        r.gradient = block_spec(format, 1, n);
        const bool nv = format == BlockFormat::NvFp4;
        if (o.weight_2d && !nv) bad("weight_2d", "only for policy nvfp4");
        r.weight = nv && o.weight_2d.value_or(true) ? block_spec(format, 16, 16)
                                                    : block_spec(format, n, 1);
        if (o.scale_rule) {
            ScaleRule rule;
            try {
                rule = scale_rule_from_name(*o.scale_rule, "recipe.scale_rule");
            } catch (const Error& e) {
                throw Error(ErrorKind::Config, e.what());
            }
            if (!supports_scale_rule(format, rule))
                bad("scale_rule", std::string(policy_name) + " does not support '" + *o.scale_rule +
                                      "'" +
                                      (nv ? " (nvfp4's scales follow amax: use 'amax')"
                                          : " (use 'floor' or 'ceil')"));
            // Three assignments, not a loop over their addresses: GCC 12's -O3 flagged that loop
            // (a false -Wstringop-overflow).
            r.activation.block.rule = rule;
            r.weight.block.rule = rule;
            r.gradient.block.rule = rule;
        }
        // NVFP4 training rounds gradients stochastically by default (NVIDIA's recipe).
        r.gradient.block.stochastic = o.stochastic_gradients.value_or(nv);
    }
    const std::uint64_t seed = o.seed.value_or(0);
    r.seed = seed;
    r.hadamard = o.hadamard.value_or(false);
    r.activation.block.seed = seed;
    r.weight.block.seed = seed + 1;
    r.gradient.block.seed = seed + 2;
    return r;
}

std::optional<QuantSpec> QuantRecipe::columnwise(QuantRole role) const {
    QuantSpec s = spec(role);
    if (s.scaling != QuantScaling::Block || s.block_rows == s.block_cols) return std::nullopt;
    std::swap(s.block_rows, s.block_cols);
    // Seeds seed+3..seed+5: the column-wise copy rounds independently of the row-wise one.
    s.block.seed += 3;
    if (hadamard && role != QuantRole::Weight) {
        s.hadamard = true;
        s.hadamard_seed = seed; // one sign vector for X and dZ: the transforms cancel in Xᵀ·dZ
    }
    return s;
}

std::string describe_quant_spec(const QuantSpec& s) {
    const std::string elem(element_format_name(s.element));
    if (s.scaling == QuantScaling::Delayed)
        return elem + " per tensor, delayed scale (amax " +
               (s.amax_most_recent ? std::string("most recent") : std::string("max")) + " over " +
               std::to_string(s.history_len) + " steps" +
               (s.margin ? ", margin " + std::to_string(s.margin) : std::string()) + ")";
    if (s.scaling == QuantScaling::Current) return elem + " per tensor, current scale";
    const BlockFormatSpec& spec = block_format_spec(s.block.format);
    const ScaleRule rule = s.block.rule.value_or(spec.default_rule);
    return std::string(spec.name) + " " + std::to_string(s.block_rows) + "×" +
           std::to_string(s.block_cols) + " blocks, " +
           std::string(element_format_name(spec.scale)) + " scale (" +
           std::string(scale_rule_name(rule)) + ")" + (s.block.stochastic ? ", stochastic" : "") +
           (s.hadamard ? ", random Hadamard 16" : "") +
           (tensor_scale_in_gemm(s) ? ", tensor scale in the GEMM" : "");
}

double quant_bits_per_element(const QuantSpec& s) {
    const int bits = element_spec(s.element).width;
    if (s.scaling != QuantScaling::Block) return bits; // one float32 scale per tensor: ~0
    const BlockFormatSpec& spec = block_format_spec(s.block.format);
    const double per_block = element_spec(spec.scale).width;
    return bits + per_block / (static_cast<double>(s.block_rows) * s.block_cols);
}

bool decodes_exactly_in_bfloat16(const QuantSpec& spec) {
    if (spec.scaling != QuantScaling::Block) return false;
    const BlockFormatSpec& format = block_format_spec(spec.block.format);
    // E8M0 scales are powers of two; every MX element format has at most 4 significant bits.
    // NVFP4's code · E4M3 block scale is (at most 2 bits) x (4 bits), at least 2^-1 · 2^-9; its
    // float32 tensor scale is what breaks exactness, unless the GEMM applies it.
    if (format.tensor_scale) return tensor_scale_in_gemm(spec);
    return format.scale == ElementFormat::E8M0;
}

bool tensor_scale_in_gemm(const QuantSpec& spec) {
    return spec.scaling == QuantScaling::Block && spec.block.tensor_scale_in_gemm &&
           block_format_spec(spec.block.format).tensor_scale;
}

bool quant_copy_dtype_ok(const QuantSpec& spec, DType dtype) {
    return dtype == DType::Float32 ||
           (dtype == DType::BFloat16 && decodes_exactly_in_bfloat16(spec) && !spec.hadamard);
}

} // namespace mantissa
