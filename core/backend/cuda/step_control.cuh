// The step's control on the device: begin_step (clear the per-step scalars), multi-tensor
// unscale with the finite check, and finish_step (next_loss_scale() of loss_scale.cpp, on the
// device), so the skip decision and the scale update never wait for the host.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/backend/step_scalars.h"
#include "core/numeric/dtype.h"

namespace mantissa::cuda {

void launch_begin_step(StepScalars* scalars, cudaStream_t stream);

// Up to kUnscaleTensors gradients per launch; the host splits longer lists.
inline constexpr int kUnscaleTensors = 32;
struct UnscaleList {
    int count = 0;
    void* data[kUnscaleTensors] = {};
    std::int64_t numel[kUnscaleTensors] = {};
    DType dtype[kUnscaleTensors] = {};
    int index[kUnscaleTensors] = {}; // each one's place in the whole gradient list (the ledger)
    // Checked as unscaled in float32 and not written: the optimizer unscales it as it reads it
    // (Backend::unscale_and_check_finite's leave_scaled).
    bool leave_scaled[kUnscaleTensors] = {};
    // A left-scaled one read eight elements at a time (a vec8 dtype, whole vectors, 16-byte
    // aligned; launch_unscale decides).
    bool vec8[kUnscaleTensors] = {};
};
void launch_unscale(const UnscaleList& list, StepScalars* scalars, cudaStream_t stream);

// LossScaleConfig as the device needs it (mode already resolved: 0 none/fixed, 1 dynamic).
struct DeviceLossScale {
    int dynamic = 0;
    std::int64_t growth_interval = 2000;
    double factor = 2.0;
    double min = 1.0;
};
void launch_finish_step(const DeviceLossScale& config, StepScalars* scalars, cudaStream_t stream);

} // namespace mantissa::cuda
