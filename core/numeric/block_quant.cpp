// Block-scaled quantisation: one kernel over a strided tile (a 1D block is a 1 x n tile) that
// finds the block's amax, its scale, and encodes, decodes and counts each element in place.
#include "core/numeric/block_quant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/numeric/element_codec.h"
#include "core/numeric/quant_math.h"

namespace mantissa {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const BlockFormatSpec kSpecs[] = {
    {BlockFormat::MxFp8E4M3, "mxfp8_e4m3", ElementFormat::Float8E4M3, ElementFormat::E8M0, 32,
     ScaleRule::Floor, false, 8.25},
    {BlockFormat::MxFp8E5M2, "mxfp8_e5m2", ElementFormat::Float8E5M2, ElementFormat::E8M0, 32,
     ScaleRule::Floor, false, 8.25},
    {BlockFormat::MxFp6E3M2, "mxfp6_e3m2", ElementFormat::Float6E3M2, ElementFormat::E8M0, 32,
     ScaleRule::Floor, false, 6.25},
    {BlockFormat::MxFp6E2M3, "mxfp6_e2m3", ElementFormat::Float6E2M3, ElementFormat::E8M0, 32,
     ScaleRule::Floor, false, 6.25},
    {BlockFormat::MxFp4, "mxfp4", ElementFormat::Float4E2M1, ElementFormat::E8M0, 32,
     ScaleRule::Floor, false, 4.25},
    {BlockFormat::NvFp4, "nvfp4", ElementFormat::Float4E2M1, ElementFormat::Float8E4M3, 16,
     ScaleRule::Amax, true, 4.5},
};

bool is_power_of_two(long long v) {
    return v > 0 && (v & (v - 1)) == 0;
}

// The exact-quotient rounding and the per-element step are the shared ones (quant_math.h), so
// the CUDA kernels run the same arithmetic as this reference path.
using quant_math::nearest_code_of_quotient;

struct TileCounts {
    BlockScale scale;
    int clipped = 0, zeros = 0;
};

// Quantises the rows x cols tile at `in` (row stride `ld`): codes (optional) and decoded values
// (may alias `in`) at the same positions. `index0` is the flat index of the tile's first element
// and `ld` the flat stride, so stochastic rounding draws the same random value for an element
// whatever the blocking.
template <typename T>
TileCounts quantize_tile(const T* in, std::size_t ld, std::size_t rows, std::size_t cols,
                         const ResolvedBlockQuant& q, float global_scale, std::size_t index0,
                         std::uint8_t* codes, T* out) {
    const ElementFormat elem = q.spec.element;
    const double max_elem = element_spec(elem).max_finite;
    double amax = 0;
    bool nan = false;
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
            const double v = std::fabs(static_cast<double>(in[r * ld + c]));
            nan = nan || std::isnan(v);
            amax = std::max(amax, v);
        }
    if (nan) amax = kNaN;

    TileCounts t;
    double eff; // the whole scale an element code is multiplied by
    if (q.spec.tensor_scale) {
        t.scale = nvfp4_block_scale(amax, global_scale);
        eff = t.scale.value * static_cast<double>(global_scale); // 4 x 24 bits: exact
    } else {
        t.scale = mx_block_scale(amax, elem, q.rule);
        eff = t.scale.value;
    }
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
            const std::size_t at = r * ld + c;
            const double v = static_cast<double>(in[at]);
            const quant_math::ElementResult e = quant_math::quantize_element(
                v, eff, elem, max_elem, q.stochastic, q.spec.tensor_scale,
                q.stochastic ? rounding_random(q.seed, index0 + at) : 0u);
            const std::uint32_t code = e.code;
            const double decoded = e.decoded;
            t.clipped += e.clipped ? 1 : 0;
            t.zeros += e.zero ? 1 : 0;
            if (codes) codes[at] = static_cast<std::uint8_t>(code);
            out[at] = static_cast<T>(decoded);
        }
    return t;
}

// The training path's kernel: float data quantised in place, no codes kept. Bit for bit what
// quantize_tile<float> does (tst_block_quant compares the two over every format and rule), but
// with the element format a template parameter (no per-element switch or call), the scale's
// special cases and the rounding mode decided once per block, decoding by table, a power-of-two
// scale applied by multiplying with its exact inverse, and NVFP4's exact nearest rounding done by
// comparing |v| with the 7 midpoints between E2M1 values times the block's scale (each product
// exact, as in nearest_code_of_quotient).
template <ElementFormat F>
TileCounts fake_quantize_tile(float* data, std::size_t ld, std::size_t rows, std::size_t cols,
                              const ResolvedBlockQuant& q, float global_scale, std::size_t index0) {
    constexpr auto& values = element_codec::kValues<F>;
    constexpr std::uint32_t sign_bit = element_codec::kCodes<F> / 2;
    const double max_elem = element_spec(F).max_finite;
    float amax_f = 0;
    bool nan = false;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = data + r * ld;
        for (std::size_t c = 0; c < cols; ++c) {
            const float a = std::fabs(row[c]);
            nan = nan || a != a;
            amax_f = a > amax_f ? a : amax_f; // std::max's rule: a NaN never replaces amax
        }
    }
    const double amax = nan ? kNaN : static_cast<double>(amax_f);

    TileCounts t;
    double eff;
    if (q.spec.tensor_scale) {
        t.scale = nvfp4_block_scale(amax, global_scale);
        eff = t.scale.value * static_cast<double>(global_scale);
    } else {
        t.scale = mx_block_scale(amax, F, q.rule);
        eff = t.scale.value;
    }
    if (std::isnan(eff)) {
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) data[r * ld + c] = static_cast<float>(kNaN);
        return t;
    }
    if (eff == 0) {
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) {
                float& x = data[r * ld + c];
                t.zeros += (x != 0 && !std::isnan(x)) ? 1 : 0;
                x = std::signbit(x) ? -0.0f : 0.0f;
            }
        return t;
    }
    const double limit = max_elem * eff;
    // One pass per rounding mode; `code_of` gives the element's code.
    auto run = [&](auto code_of) {
        int clipped = 0, zeros = 0;
        for (std::size_t r = 0; r < rows; ++r) {
            float* row = data + r * ld;
            for (std::size_t c = 0; c < cols; ++c) {
                const double v = static_cast<double>(row[c]);
                const std::uint32_t code = code_of(v, r * ld + c);
                const double decoded = values[code] * eff;
                clipped += std::fabs(v) > limit ? 1 : 0;
                zeros += (v != 0 && decoded == 0) ? 1 : 0; // no NaN gets here (eff would be NaN)
                row[c] = static_cast<float>(decoded);
            }
        }
        t.clipped = clipped;
        t.zeros = zeros;
    };
    if (q.stochastic) {
        run([&](double v, std::size_t at) {
            return element_codec::encode_stochastic<F>(v / eff,
                                                       rounding_random(q.seed, index0 + at));
        });
    } else if (!q.spec.tensor_scale) {
        // A power of two in [2^-127, 2^127], exact as a float32; so is v * inv but where the
        // product falls below float32's normals, far under half the format's smallest
        // subnormal, where both round to zero. Rounding on float32 bits gives the decoded value.
        const auto inv = static_cast<float>(1.0 / eff);
        int clipped = 0, zeros = 0;
        for (std::size_t r = 0; r < rows; ++r) {
            float* row = data + r * ld;
            for (std::size_t c = 0; c < cols; ++c) {
                const float v = row[c];
                const float e = element_codec::round_to_element<F>(v * inv);
                clipped += std::fabs(static_cast<double>(v)) > limit ? 1 : 0;
                zeros += (v != 0 && e == 0) ? 1 : 0;
                row[c] = static_cast<float>(static_cast<double>(e) * eff);
            }
        }
        t.clipped = clipped;
        t.zeros = zeros;
    } else if constexpr (F == ElementFormat::Float4E2M1) {
        double mid[7];
        for (int j = 0; j < 7; ++j) mid[j] = (values[j] + values[j + 1]) / 2 * eff;
        run([&](double v, std::size_t) {
            const double a = std::fabs(v);
            std::uint32_t mag = 0;
            for (int j = 0; j < 7; ++j) // a tie goes to the even magnitude: up from an odd one
                mag += (a > mid[j] || (a == mid[j] && (j & 1))) ? 1u : 0u;
            return (std::signbit(v) ? sign_bit : 0u) | mag;
        });
    } else {
        run([&](double v, std::size_t) { return nearest_code_of_quotient(v, eff, F); });
    }
    return t;
}

TileCounts fake_quantize_tile(float* data, std::size_t ld, std::size_t rows, std::size_t cols,
                              const ResolvedBlockQuant& q, float global_scale, std::size_t index0) {
    switch (q.spec.element) {
    case ElementFormat::Float8E4M3:
        return fake_quantize_tile<ElementFormat::Float8E4M3>(data, ld, rows, cols, q, global_scale,
                                                             index0);
    case ElementFormat::Float8E5M2:
        return fake_quantize_tile<ElementFormat::Float8E5M2>(data, ld, rows, cols, q, global_scale,
                                                             index0);
    case ElementFormat::Float6E3M2:
        return fake_quantize_tile<ElementFormat::Float6E3M2>(data, ld, rows, cols, q, global_scale,
                                                             index0);
    case ElementFormat::Float6E2M3:
        return fake_quantize_tile<ElementFormat::Float6E2M3>(data, ld, rows, cols, q, global_scale,
                                                             index0);
    case ElementFormat::Float4E2M1:
        return fake_quantize_tile<ElementFormat::Float4E2M1>(data, ld, rows, cols, q, global_scale,
                                                             index0);
    case ElementFormat::E8M0:
        break;
    }
    return quantize_tile(data, ld, rows, cols, q, global_scale, index0, nullptr, data);
}

template <typename T>
double tensor_amax(const T* data, std::size_t n) {
    double amax = 0;
    bool nan = false;
    for (std::size_t i = 0; i < n; ++i) {
        const double v = std::fabs(static_cast<double>(data[i]));
        nan = nan || std::isnan(v);
        amax = std::max(amax, v);
    }
    return nan ? kNaN : amax;
}

} // namespace

const BlockFormatSpec& block_format_spec(BlockFormat format) {
    const auto i = static_cast<std::size_t>(format);
    if (i >= std::size(kSpecs))
        throw Error(ErrorKind::InvalidArgument, "unknown block format " + std::to_string(i));
    return kSpecs[i];
}

std::string_view block_format_name(BlockFormat format) {
    return block_format_spec(format).name;
}

const std::vector<BlockFormat>& block_formats() {
    static const std::vector<BlockFormat> all = {BlockFormat::MxFp8E4M3, BlockFormat::MxFp8E5M2,
                                                 BlockFormat::MxFp6E3M2, BlockFormat::MxFp6E2M3,
                                                 BlockFormat::MxFp4,     BlockFormat::NvFp4};
    return all;
}

BlockFormat block_format_from_name(std::string_view name, std::string_view field) {
    std::string valid;
    for (const BlockFormatSpec& s : kSpecs) {
        if (s.name == name) return s.format;
        valid += (valid.empty() ? "" : ", ") + std::string(s.name);
    }
    throw Error(ErrorKind::InvalidArgument, std::string(field) + ": unknown block format '" +
                                                std::string(name) + "' (valid: " + valid + ")");
}

std::string_view scale_rule_name(ScaleRule rule) {
    switch (rule) {
    case ScaleRule::Floor:
        return "floor";
    case ScaleRule::Ceil:
        return "ceil";
    case ScaleRule::Amax:
        return "amax";
    }
    return "?";
}

ScaleRule scale_rule_from_name(std::string_view name, std::string_view field) {
    for (ScaleRule r : {ScaleRule::Floor, ScaleRule::Ceil, ScaleRule::Amax})
        if (scale_rule_name(r) == name) return r;
    throw Error(ErrorKind::InvalidArgument, std::string(field) + ": unknown scale rule '" +
                                                std::string(name) + "' (valid: floor, ceil, amax)");
}

bool supports_scale_rule(BlockFormat format, ScaleRule rule) {
    return block_format_spec(format).tensor_scale ? rule == ScaleRule::Amax
                                                  : rule != ScaleRule::Amax;
}

ResolvedBlockQuant resolve_block_quant(const BlockQuantConfig& config) {
    const BlockFormatSpec& spec = block_format_spec(config.format);
    ResolvedBlockQuant r{spec, config.rule.value_or(spec.default_rule),
                         config.block_size ? config.block_size : spec.block_size, config.stochastic,
                         config.seed};
    if (!supports_scale_rule(spec.format, r.rule)) {
        const std::string why =
            spec.tensor_scale
                ? "its E4M3 block scale is amax/6 under a float32 tensor scale: use 'amax'"
                : "its E8M0 block scale is a power of two: use 'floor' or 'ceil'";
        throw Error(ErrorKind::InvalidArgument,
                    "scale_rule: " + std::string(spec.name) + " does not support '" +
                        std::string(scale_rule_name(r.rule)) + "' (" + why + ")");
    }
    if (!is_power_of_two(r.block_size) || r.block_size > 4096)
        throw Error(ErrorKind::InvalidArgument, "block_size: " + std::to_string(r.block_size) +
                                                    " is not a power of two between 1 and 4096");
    return r;
}

BlockScale mx_block_scale(double amax, ElementFormat element, ScaleRule rule) {
    const std::uint32_t code = quant_math::mx_scale_code(amax, element, rule == ScaleRule::Ceil);
    return {static_cast<std::uint8_t>(code), decode_element(code, ElementFormat::E8M0)};
}

float nvfp4_global_scale(double amax_tensor) {
    return quant_math::nvfp4_global_scale(amax_tensor);
}

BlockScale nvfp4_block_scale(double amax_block, float global_scale) {
    const std::uint32_t code = quant_math::nvfp4_scale_code(amax_block, global_scale);
    return {static_cast<std::uint8_t>(code), decode_element(code, ElementFormat::Float8E4M3)};
}

BlockQuantResult quantize_blocks(std::span<const double> values, const BlockQuantConfig& config) {
    BlockQuantResult r;
    r.config = resolve_block_quant(config);
    const std::size_t n = values.size();
    r.codes.assign(n, 0);
    r.decoded.assign(n, 0.0);
    if (r.config.spec.tensor_scale)
        r.global_scale = nvfp4_global_scale(tensor_amax(values.data(), n));
    const auto bs = static_cast<std::size_t>(r.config.block_size);
    r.blocks.reserve((n + bs - 1) / bs);
    for (std::size_t begin = 0; begin < n; begin += bs) {
        const std::size_t count = std::min(bs, n - begin);
        const TileCounts t =
            quantize_tile(values.data() + begin, count, 1, count, r.config, r.global_scale, begin,
                          r.codes.data() + begin, r.decoded.data() + begin);
        BlockReport b;
        b.begin = begin;
        b.count = count;
        b.col = begin;
        b.cols = count;
        b.scale = t.scale;
        b.clipped = t.clipped;
        b.zeros = t.zeros;
        r.clipped += static_cast<std::size_t>(t.clipped);
        r.zeros += static_cast<std::size_t>(t.zeros);
        r.blocks.push_back(b);
    }
    return r;
}

BlockQuantResult quantize_blocks_2d(std::span<const double> values, std::size_t rows,
                                    std::size_t cols, const BlockQuantConfig& config, int tile) {
    BlockQuantResult r;
    r.config = resolve_block_quant(config);
    if (!is_power_of_two(tile) || tile > 64)
        throw Error(ErrorKind::InvalidArgument,
                    "tile: " + std::to_string(tile) + " is not a power of two between 1 and 64");
    if (rows * cols != values.size())
        throw Error(ErrorKind::InvalidArgument, "shape: " + std::to_string(rows) + " x " +
                                                    std::to_string(cols) + " is not " +
                                                    std::to_string(values.size()) + " values");
    r.config.block_size = tile * tile;
    const std::size_t n = values.size(), ts = static_cast<std::size_t>(tile);
    r.codes.assign(n, 0);
    r.decoded.assign(n, 0.0);
    if (r.config.spec.tensor_scale)
        r.global_scale = nvfp4_global_scale(tensor_amax(values.data(), n));
    for (std::size_t row = 0; row < rows; row += ts)
        for (std::size_t col = 0; col < cols; col += ts) {
            const std::size_t tr = std::min(ts, rows - row), tc = std::min(ts, cols - col);
            const std::size_t at = row * cols + col;
            const TileCounts t =
                quantize_tile(values.data() + at, cols, tr, tc, r.config, r.global_scale, at,
                              r.codes.data() + at, r.decoded.data() + at);
            BlockReport b;
            b.begin = at;
            b.count = tr * tc;
            b.row = row;
            b.col = col;
            b.rows = tr;
            b.cols = tc;
            b.scale = t.scale;
            b.clipped = t.clipped;
            b.zeros = t.zeros;
            r.clipped += static_cast<std::size_t>(t.clipped);
            r.zeros += static_cast<std::size_t>(t.zeros);
            r.blocks.push_back(b);
        }
    return r;
}

BlockQuantStats fake_quantize(std::span<float> data, const BlockQuantConfig& config) {
    const ResolvedBlockQuant q = resolve_block_quant(config);
    BlockQuantStats s;
    const std::size_t n = data.size(), bs = static_cast<std::size_t>(q.block_size);
    if (q.spec.tensor_scale) s.global_scale = nvfp4_global_scale(tensor_amax(data.data(), n));
    for (std::size_t begin = 0; begin < n; begin += bs) {
        const std::size_t count = std::min(bs, n - begin);
        float* block = data.data() + begin;
        const TileCounts t = fake_quantize_tile(block, count, 1, count, q, s.global_scale, begin);
        ++s.blocks;
        s.clipped += static_cast<std::size_t>(t.clipped);
        s.zeros += static_cast<std::size_t>(t.zeros);
    }
    return s;
}

BlockQuantStats fake_quantize_blocks(std::span<float> data, std::size_t rows, std::size_t cols,
                                     const BlockQuantConfig& config, int block_rows, int block_cols,
                                     double* max_scale) {
    BlockQuantConfig c = config;
    c.block_size = 0; // the shape below decides; resolve only checks the format and rule
    const ResolvedBlockQuant q = resolve_block_quant(c);
    if (block_rows < 1 || block_cols < 1 || rows * cols != data.size())
        throw Error(ErrorKind::InvalidArgument, "fake_quantize_blocks: bad shape");
    BlockQuantStats s;
    if (q.spec.tensor_scale)
        s.global_scale = nvfp4_global_scale(tensor_amax(data.data(), data.size()));
    double top = 0;
    const auto br = static_cast<std::size_t>(block_rows), bc = static_cast<std::size_t>(block_cols);
    for (std::size_t row = 0; row < rows; row += br)
        for (std::size_t col = 0; col < cols; col += bc) {
            const std::size_t tr = std::min(br, rows - row), tc = std::min(bc, cols - col);
            const std::size_t at = row * cols + col;
            float* tile = data.data() + at;
            const TileCounts t = fake_quantize_tile(tile, cols, tr, tc, q, s.global_scale, at);
            ++s.blocks;
            s.clipped += static_cast<std::size_t>(t.clipped);
            s.zeros += static_cast<std::size_t>(t.zeros);
            const double scale =
                q.spec.tensor_scale ? t.scale.value * s.global_scale : t.scale.value;
            if (scale > top || std::isnan(scale)) top = scale;
        }
    if (max_scale) *max_scale = top;
    return s;
}

} // namespace mantissa
