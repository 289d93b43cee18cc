// Gradient histograms for the teaching lab: counts of floor(log2|g|) per layer and for all layers,
// for activation and weight gradients as computed (loss-scaled); only the counts leave the device.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/backend/histogram.h"

namespace mantissa {

class Plan;

// One histogram in the layout of core/backend/histogram.h (zeros, 128 exponents, inf/NaN).
struct ExponentCounts {
    std::array<std::int64_t, kHistogramBins> bins{};

    std::int64_t total() const;
    std::int64_t zeros() const { return bins[kHistogramZeroBin]; }
    std::int64_t non_finite() const { return bins[kHistogramNonFiniteBin]; }
    // Elements whose exponent floor(log2|g|) is e (edge bins hold everything beyond them).
    std::int64_t at_exponent(int e) const;
    ExponentCounts& operator+=(const ExponentCounts& other);
    bool operator==(const ExponentCounts&) const = default;
};

struct LayerGradientHistogram {
    std::string layer; // "dense_1"
    // d loss / d (the layer's output), in the layer's compute dtype, as the tensor holds it after
    // the step: a Dense layer's elementwise activation derivative runs in place, so there it is
    // dZ, except where an engine fuses that derivative with dZ's FP8 codes and never writes dZ
    // (the CUDA engine, ReLU on FP8 GEMMs under delayed scaling), which leaves dY.
    ExponentCounts activation;
    ExponentCounts weight;    // its variables' gradients in the compute dtype, before unscaling
    bool has_weights = false; // Dense and Conv2D have variables; Activation, Dropout... do not
};

// The gradients of one training step. They carry the loss scale of that step: the unscaled
// histogram is the same bins moved down by log2(loss_scale), exact for a power-of-two scale.
struct GradientHistogram {
    std::int64_t step = 0;
    double loss_scale = 1;
    std::vector<LayerGradientHistogram> layers; // in stack order, layers with a gradient only
    ExponentCounts all_activation, all_weight;  // the sums over layers
};

// Where the values of a histogram fall against float16, as fractions of all its elements.
struct Float16Fractions {
    double zero = 0;      // exact zeros (as computed)
    double underflow = 0; // 0 < |g| < 2^-24: float16 flushes them to zero
    double subnormal = 0; // 2^-24 <= |g| < 2^-14: float16 keeps them with fewer bits
    double overflow = 0;  // |g| >= 2^16, inf or NaN: float16 has them as inf (>= 65520 rounds up)
    std::int64_t total = 0;
};

// The whole power of two that unscaling moves exponents by: log2(scale) rounded to an integer.
int loss_scale_shift(double loss_scale);
// True when dividing by `loss_scale` moves every exponent by exactly loss_scale_shift().
bool loss_scale_is_power_of_two(double loss_scale);
// Fractions of `counts` against float16's range after moving every exponent by `exponent_shift`
// (0: as computed; -loss_scale_shift(scale): unscaled).
Float16Fractions float16_fractions(const ExponentCounts& counts, int exponent_shift);

// Finds the gradient tensors of a compiled plan once and fills histograms from them on demand.
// Activation gradients are the tensors "grad(<layer>/output)"; weight gradients are the gradients
// each variable's layer computed (the compute-dtype copy under a mixed policy).
class GradientHistogramProbe {
public:
    GradientHistogramProbe(const Plan& plan, Backend& backend);
    ~GradientHistogramProbe();
    GradientHistogramProbe(const GradientHistogramProbe&) = delete;
    GradientHistogramProbe& operator=(const GradientHistogramProbe&) = delete;

    // Bins the gradient tensors as they are now (call it after a forward and backward pass and
    // before the optimizer unscales them). One download of the counts; no tensor is copied.
    GradientHistogram collect(std::int64_t step, double loss_scale);

private:
    struct Source {
        std::string layer;
        std::vector<const Tensor*> activation, weight;
        bool has_weights = false;
    };
    Backend& m_backend;
    std::vector<Source> m_sources;
    Buffer m_buffer;
    Tensor m_counts;             // int32 (sources * 2 * kHistogramBins)
    std::vector<Tensor> m_slots; // views of m_counts, kHistogramBins each: activation, weight
};

} // namespace mantissa
