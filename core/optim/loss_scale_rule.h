// One step of the dynamic loss scale as plain arithmetic on plain values, so that next_loss_scale()
// (the CPU engine) and a CUDA kernel (MANTISSA_HD is __host__ __device__ under nvcc) run the same
// code instead of two copies that must be kept in step.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace mantissa {

struct DynamicScaleStep {
    double scale;            // the scale the next step uses
    std::int64_t good_steps; // consecutive finite steps since the last change
    bool skipped;            // this step's update is not applied
};

//  non-finite: skip; scale = max(scale / factor, min); good_steps = 0
//  finite:     good_steps + 1 >= growth_interval ? (scale *= factor unless that overflows float32,
//              good_steps = 0) : good_steps + 1
// ">=" rather than "==": a counter restored from an older config with a longer interval still
// grows at the next finite step instead of never.
MANTISSA_HD inline DynamicScaleStep dynamic_scale_step(double scale, std::int64_t good_steps,
                                                       bool found_nonfinite, double factor,
                                                       double min, std::int64_t growth_interval) {
    // The loss is float32 (float64 under float64) when it is scaled; a scale float32 cannot hold
    // would turn every loss into inf.
    const double float32_max = 3.4028234663852886e38;
    if (found_nonfinite) {
        const double backed_off = scale / factor;
        return {backed_off < min ? min : backed_off, 0, true}; // std::max(backed_off, min)
    }
    if (good_steps + 1 >= growth_interval) {
        const double grown = scale * factor;
        return {grown <= float32_max ? grown : scale, 0, false}; // else keep the scale (Keras)
    }
    return {scale, good_steps + 1, false};
}

} // namespace mantissa
