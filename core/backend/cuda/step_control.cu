// Step-control kernels. unscale mirrors cpu_step_control.cpp: g * float(1 / scale) (double for
// float64), rounded to the gradient's dtype, and the finite test on the stored value; a gradient
// left scaled for the optimizer gets the test on the float32 product and is not written.

#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/step_control.cuh"
#include "core/backend/cuda/vec8.cuh"
#include "core/optim/loss_scale_rule.h"

namespace mantissa::cuda {

namespace {

__global__ void begin_kernel(StepScalars* s) {
    s->found_inf = 0;
    s->nonfinite_mask = 0;
    s->loss_sum = 0.0;
    s->correct = 0;
    s->examples = 0;
}

// blockIdx.y picks the tensor; the blocks along x stride over it.
__global__ void unscale_kernel(UnscaleList list, StepScalars* s) {
    const int t = blockIdx.y;
    const i64 n = list.numel[t];
    void* data = list.data[t];
    const DType dt = list.dtype[t];
    const double inv_d = 1.0 / s->loss_scale;
    const float inv_f = static_cast<float>(inv_d);
    const bool leave_scaled = list.leave_scaled[t];
    bool nonfinite = false;
    if (list.vec8[t]) { // left scaled: only read, eight elements a load
        for (i64 v = blockIdx.x * i64(blockDim.x) + threadIdx.x; v < n / kVec;
             v += i64(gridDim.x) * blockDim.x) {
            float f[kVec];
            if (dt == DType::Float16)
                load8(static_cast<const __half*>(data), v, f);
            else if (dt == DType::BFloat16)
                load8(static_cast<const __nv_bfloat16*>(data), v, f);
            else
                load8(static_cast<const float*>(data), v, f);
#pragma unroll
            for (int j = 0; j < kVec; ++j) nonfinite |= !isfinite(f[j] * inv_f);
        }
    } else {
        for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < n;
             i += i64(gridDim.x) * blockDim.x) {
            if (dt == DType::Float64) {
                double* p = static_cast<double*>(data);
                const double v = p[i] * inv_d;
                if (!leave_scaled) p[i] = v;
                nonfinite |= !isfinite(v);
            } else if (leave_scaled) { // the float32 gradient a cast and this unscale would make
                nonfinite |= !isfinite(load_float(data, dt, i) * inv_f);
            } else {
                const float v = load_float(data, dt, i) * inv_f;
                store_float(data, dt, i, v);
                nonfinite |= !isfinite(round_to(dt, v));
            }
        }
    }
    if (__syncthreads_or(nonfinite) && threadIdx.x == 0) { // never cleared here
        s->found_inf = 1;
        // The ledger: which gradient held it (several blocks of one tensor may all set the bit).
        atomicOr(reinterpret_cast<unsigned long long*>(&s->nonfinite_mask),
                 static_cast<unsigned long long>(nonfinite_bit(list.index[t])));
    }
}

// next_loss_scale() of loss_scale.cpp, one thread.
__global__ void finish_kernel(DeviceLossScale c, StepScalars* s) {
    const bool found = s->found_inf != 0;
    double scale = s->loss_scale;
    std::int64_t good = s->good_steps;
    bool skipped = false;
    if (c.dynamic) { // the CPU engine's rule, from the same header (core/optim/loss_scale_rule.h)
        const DynamicScaleStep next =
            dynamic_scale_step(scale, good, found, c.factor, c.min, c.growth_interval);
        scale = next.scale;
        good = next.good_steps;
        skipped = next.skipped;
    }
    s->scale_used = s->loss_scale;
    s->skipped = skipped ? 1 : 0;
    if (skipped)
        ++s->skipped_total;
    else
        ++s->iterations;
    s->loss_scale = scale;
    s->good_steps = good;
    advance_batch_position(*s);
}

} // namespace

void launch_begin_step(StepScalars* scalars, cudaStream_t stream) {
    begin_kernel<<<1, 1, 0, stream>>>(scalars);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

void launch_unscale(const UnscaleList& gradients, StepScalars* scalars, cudaStream_t stream) {
    if (gradients.count <= 0) return;
    UnscaleList list = gradients;
    for (int t = 0; t < list.count; ++t)
        list.vec8[t] = list.leave_scaled[t] && vec8_dtype(list.dtype[t]) &&
                       list.numel[t] % kVec == 0 && vec8_aligned(list.data[t]);
    i64 largest = 0;
    for (int t = 0; t < list.count; ++t)
        largest = list.numel[t] > largest ? list.numel[t] : largest;
    const unsigned bx = blocks_for(largest) > 1024 ? 1024 : blocks_for(largest);
    unscale_kernel<<<dim3(bx, static_cast<unsigned>(list.count)), 256, 0, stream>>>(list, scalars);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

void launch_finish_step(const DeviceLossScale& config, StepScalars* scalars, cudaStream_t stream) {
    finish_kernel<<<1, 1, 0, stream>>>(config, scalars);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
