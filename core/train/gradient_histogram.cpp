// Gradient histograms: finding each layer's gradient tensors in a compiled Plan, binning them on
// the backend, and reading them against float16's range (underflow, subnormal, overflow).
#include "core/train/gradient_histogram.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/plan/plan.h"

namespace mantissa {

namespace {

// float16's limits as exponents of floor(log2|x|): subnormals start at 2^-24, normals at 2^-14,
// and 2^16 is past its largest finite value 65504.
constexpr int kFloat16MinSubnormalExp = -24;
constexpr int kFloat16MinNormalExp = -14;
constexpr int kFloat16OverflowExp = 16;

int exponent_of_bin(int bin) {
    return bin - 1 + kHistogramMinExp;
}

std::string layer_of(const std::string& param_name) {
    return param_name.substr(0, param_name.find('/'));
}

} // namespace

std::int64_t ExponentCounts::total() const {
    std::int64_t sum = 0;
    for (std::int64_t c : bins) sum += c;
    return sum;
}

std::int64_t ExponentCounts::at_exponent(int e) const {
    if (e < kHistogramMinExp || e > kHistogramMaxExp) return 0;
    return bins[static_cast<std::size_t>(1 + e - kHistogramMinExp)];
}

ExponentCounts& ExponentCounts::operator+=(const ExponentCounts& other) {
    for (std::size_t i = 0; i < bins.size(); ++i) bins[i] += other.bins[i];
    return *this;
}

int loss_scale_shift(double loss_scale) {
    if (!(loss_scale > 0) || !std::isfinite(loss_scale)) return 0;
    return static_cast<int>(std::lround(std::log2(loss_scale)));
}

bool loss_scale_is_power_of_two(double loss_scale) {
    if (!(loss_scale > 0) || !std::isfinite(loss_scale)) return false;
    int exponent = 0;
    return std::frexp(loss_scale, &exponent) == 0.5;
}

Float16Fractions float16_fractions(const ExponentCounts& counts, int exponent_shift) {
    Float16Fractions f;
    f.total = counts.total();
    if (f.total == 0) return f;
    std::int64_t underflow = 0, subnormal = 0, overflow = counts.non_finite();
    for (int bin = 1; bin < kHistogramNonFiniteBin; ++bin) {
        const int e = exponent_of_bin(bin) + exponent_shift;
        const std::int64_t c = counts.bins[static_cast<std::size_t>(bin)];
        if (e < kFloat16MinSubnormalExp)
            underflow += c;
        else if (e < kFloat16MinNormalExp)
            subnormal += c;
        else if (e >= kFloat16OverflowExp)
            overflow += c;
    }
    const double n = static_cast<double>(f.total);
    f.zero = static_cast<double>(counts.zeros()) / n;
    f.underflow = static_cast<double>(underflow) / n;
    f.subnormal = static_cast<double>(subnormal) / n;
    f.overflow = static_cast<double>(overflow) / n;
    return f;
}

GradientHistogramProbe::GradientHistogramProbe(const Plan& plan, Backend& backend)
    : m_backend(backend) {
    // A variable's gradient as its layer computed it: under a mixed policy the layer writes a
    // compute-dtype copy that a backward cast turns into the variable-dtype gradient.
    auto computed_grad = [&](const PlanParam& p) -> const Tensor* {
        for (const PlanStep& step : plan.steps)
            if (step.phase == StepPhase::Backward && step.is_cast && step.outputs.size() == 1 &&
                step.outputs[0] == p.grad && step.inputs.size() == 1)
                return &plan.tensor(step.inputs[0]);
        return &plan.tensor(p.grad);
    };
    std::set<const void*> seen; // a Flatten's gradient is a view of the previous layer's
    for (const LayerSummary& layer : plan.layers) {
        Source source;
        source.layer = layer.name;
        const std::string output_grad = "grad(" + layer.name + "/output)";
        for (const Tensor& t : plan.tensors)
            if (t.name == output_grad && t.numel() > 0 && seen.insert(t.data).second)
                source.activation.push_back(&t);
        for (const PlanParam& p : plan.params)
            if (layer_of(p.name) == layer.name) {
                source.weight.push_back(computed_grad(p));
                source.has_weights = true;
            }
        if (!source.activation.empty() || !source.weight.empty())
            m_sources.push_back(std::move(source));
    }
    const std::int64_t slots = static_cast<std::int64_t>(m_sources.size()) * 2;
    m_counts.name = "gradient_histograms";
    m_counts.dtype = DType::Int32;
    m_counts.shape = {std::max<std::int64_t>(slots, 1) * kHistogramBins};
    m_counts.category = MemCategory::Workspace;
    m_buffer = m_backend.allocate(m_counts.bytes());
    m_counts.data = m_buffer.data();
    for (std::int64_t i = 0; i < slots; ++i) {
        Tensor slot = m_counts;
        slot.shape = {kHistogramBins};
        slot.data = static_cast<std::int32_t*>(m_counts.data) + i * kHistogramBins;
        m_slots.push_back(slot);
    }
}

GradientHistogramProbe::~GradientHistogramProbe() = default;

GradientHistogram GradientHistogramProbe::collect(std::int64_t step, double loss_scale) {
    m_backend.fill(m_counts, 0.0);
    for (std::size_t i = 0; i < m_sources.size(); ++i) {
        for (const Tensor* t : m_sources[i].activation)
            m_backend.exponent_histogram(*t, m_slots[2 * i]);
        for (const Tensor* t : m_sources[i].weight)
            m_backend.exponent_histogram(*t, m_slots[2 * i + 1]);
    }
    std::vector<std::int32_t> host(static_cast<std::size_t>(m_counts.numel()));
    m_backend.download(m_counts, host.data());

    GradientHistogram out;
    out.step = step;
    out.loss_scale = loss_scale;
    for (std::size_t i = 0; i < m_sources.size(); ++i) {
        LayerGradientHistogram layer;
        layer.layer = m_sources[i].layer;
        layer.has_weights = m_sources[i].has_weights;
        for (int b = 0; b < kHistogramBins; ++b) {
            layer.activation.bins[static_cast<std::size_t>(b)] =
                host[(2 * i) * kHistogramBins + static_cast<std::size_t>(b)];
            layer.weight.bins[static_cast<std::size_t>(b)] =
                host[(2 * i + 1) * kHistogramBins + static_cast<std::size_t>(b)];
        }
        out.all_activation += layer.activation;
        out.all_weight += layer.weight;
        out.layers.push_back(std::move(layer));
    }
    return out;
}

} // namespace mantissa
