// optimizer_update on the device: update_rules.h's update_element for every element, gated on
// the device's found_inf flag and with Adam's bias correction computed from the device's
// iteration counter, so a step never waits for the host to learn whether it was skipped.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/backend/step_scalars.h"
#include "core/numeric/dtype.h"
#include "core/optim/optimizer_config.h"

namespace mantissa::cuda {

enum class RoundKind : std::uint8_t { None, Float16, BFloat16 };

// The rule's constants, rounded on the host exactly as make_update_rule() rounds them (stored as
// double: every float/float16/bfloat16 constant is exact in double).
struct DeviceRule {
    OptimizerType type = OptimizerType::SGD;
    OptimizerConvention convention = OptimizerConvention::Keras;
    bool has_momentum = false, nesterov = false, centered = false;
    int momentum_slot = 0, average_slot = 0;
    double lr = 0, momentum = 0, rho = 0, one_minus_rho = 0, epsilon = 0;
    double one_minus_beta_1 = 0, one_minus_beta_2 = 0, weight_decay = 0;
    double beta_1 = 0, beta_2 = 0; // Adam: alpha = f(t) is computed on the device
    // pytorch: beta_1, beta_2 above are the config's own doubles, and step_size =
    // learning_rate / (1 - beta_1^t) is computed on the device from the unrounded learning rate
    double learning_rate = 0, decay_factor = 0;
    // A schedule (Constant: lr above every step): the device computes each step's rate from its
    // own iteration and skip counters (scheduled_rate), so a replayed CUDA Graph needs no write.
    LearningRateSchedule schedule;
    double raw_weight_decay = 0; // pytorch AdamW: decay_factor = 1 - rate * weight_decay
};

struct UpdateArgs {
    DeviceRule rule;
    RoundKind round = RoundKind::None; // the parameter's dtype for pure 16-bit policies
    bool f64 = false;                  // compute in double (float64 parameter)
    void* param = nullptr;
    DType param_dtype = DType::Float32;
    const void* grad = nullptr;
    DType grad_dtype = DType::Float32;
    void* slots[3] = {};
    DType slot_dtype[3] = {};
    int slot_count = 0;
    // The compute-dtype copy the next forward reads (Backend::optimizer_update's compute_copy),
    // of a float32 or float64 parameter; nullptr: none.
    void* copy = nullptr;
    DType copy_dtype = DType::BFloat16;
    std::int64_t count = 0;
    bool skip_if_found_inf = true;
    // The gradient still carries the loss scale: each element is multiplied by
    // float(1 / loss_scale) (double for a float64 parameter) as it is read.
    bool unscale = false;
    const StepScalars* scalars = nullptr;
};

void launch_optimizer_update(const UpdateArgs& args, cudaStream_t stream);

// Several parameters' updates in one launch (Backend::optimizer_update_all): float32 parameters
// and slots, no rounding (mixed policies' masters and float32), gradients of one dtype per launch
// (float32, or the bfloat16 / float16 gradients a mixed layer leaves for the optimizer to widen),
// whole 8-element vectors at 16-byte aligned addresses, a bfloat16 or float16 compute copy or none
// (multi_update_fits). Each thread block takes kMultiBlockVectors vectors of one tensor;
// `first_block` is where a tensor's blocks start. The arithmetic per element is
// launch_optimizer_update's.
inline constexpr int kMultiUpdateTensors = 24;
struct MultiUpdateEntry {
    float* param = nullptr;
    const void* grad = nullptr; // MultiUpdateArgs::grad_dtype
    float* slots[3] = {};
    void* copy = nullptr; // the compute copy, or nullptr
    bool copy_bf16 = false;
    std::int64_t vectors = 0;     // count / 8
    std::int64_t first_block = 0; // set by add_multi_update
};
struct MultiUpdateArgs {
    DeviceRule rule;                   // shared: one optimizer config, no rounding
    DType grad_dtype = DType::Float32; // every entry's
    int slot_count = 0;
    int tensors = 0;
    std::int64_t blocks = 0; // thread blocks over all tensors
    bool skip_if_found_inf = true;
    bool unscale = false; // every entry's (UpdateArgs::unscale)
    const StepScalars* scalars = nullptr;
    MultiUpdateEntry entries[kMultiUpdateTensors];
};
bool multi_update_fits(const UpdateArgs& args);
// Appends `args` (multi_update_fits) to `multi` (not full: tensors < kMultiUpdateTensors, and
// empty or holding gradients of args.grad_dtype and args.unscale).
void add_multi_update(MultiUpdateArgs& multi, const UpdateArgs& args);
void launch_optimizer_update_multi(const MultiUpdateArgs& args, cudaStream_t stream);

} // namespace mantissa::cuda
