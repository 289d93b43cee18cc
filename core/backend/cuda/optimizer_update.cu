// The optimizer kernel: each thread rebuilds the UpdateRule from the host-rounded constants and
// the device's t, then runs update_element (the CPU engine's very function) on its elements.
// Compiled with --fmad=false, so every rounded operation matches the CPU bit for bit (Adam's
// pow() may differ from glibc's powf in the last bit; see the README of the CUDA engine).
// A float32 computation whose parameter and slots share one storage type takes the fast path:
// eight elements a thread in 16-byte accesses, the same update_element per element (issue 26: the
// generic kernel ran a 4096 x 4096 RMSprop update at about 2.5x its bytes' time on an H100).
// Both kernels also write a mixed policy's compute copy of the parameter when asked, so that the
// forward needs no cast step, and a third updates up to 24 float32 tensors in one launch
// (Backend::optimizer_update_all): both written 2026-11-29, not yet run on a GPU.
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/optimizer_update.cuh"
#include "core/backend/cuda/vec8.cuh"
#include "core/optim/update_rules.h"

namespace mantissa::cuda {

namespace {

struct DeviceRoundFloat16 {
    __host__ __device__ float operator()(float x) const { return __half2float(__float2half_rn(x)); }
};
struct DeviceRoundBFloat16 {
    __host__ __device__ float operator()(float x) const {
        return __bfloat162float(__float2bfloat16_rn(x));
    }
};

// make_update_rule() with the t-independent constants taken from the host; t, and with a
// schedule the learning rate, from the device's counters.
template <class T, class Round>
__device__ UpdateRule<T> device_rule(const DeviceRule& d, const StepScalars& s, Round round) {
    const std::int64_t t = s.iterations + 1;
    UpdateRule<T> rule;
    rule.type = d.type;
    rule.convention = d.convention;
    rule.has_momentum = d.has_momentum;
    rule.nesterov = d.nesterov;
    rule.centered = d.centered;
    rule.momentum_slot = d.momentum_slot;
    rule.average_slot = d.average_slot;
    rule.lr = static_cast<T>(d.lr);
    rule.momentum = static_cast<T>(d.momentum);
    rule.rho = static_cast<T>(d.rho);
    rule.one_minus_rho = static_cast<T>(d.one_minus_rho);
    rule.epsilon = static_cast<T>(d.epsilon);
    rule.one_minus_beta_1 = static_cast<T>(d.one_minus_beta_1);
    rule.one_minus_beta_2 = static_cast<T>(d.one_minus_beta_2);
    rule.weight_decay = static_cast<T>(d.weight_decay);
    rule.decay_factor = static_cast<T>(d.decay_factor);
    double learning_rate = d.learning_rate;
    if (d.schedule.kind != ScheduleKind::Constant) {
        // optimizer_at_step() then make_update_rule(), as the CPU engine builds the step's rule:
        // keras conventions get a float32 rate (exact in T, then rounded to the parameter's
        // dtype); pytorch's stays a double until the op converts it.
        learning_rate = scheduled_rate(d.schedule, d.learning_rate, d.convention, s.iterations,
                                       s.skipped_total);
        rule.lr = d.convention == OptimizerConvention::PyTorch
                      ? static_cast<T>(learning_rate)
                      : round(static_cast<T>(learning_rate));
        if (d.convention == OptimizerConvention::PyTorch && d.type == OptimizerType::AdamW)
            rule.decay_factor = static_cast<T>(1.0 - learning_rate * d.raw_weight_decay);
    }
    const bool adam = d.type == OptimizerType::Adam || d.type == OptimizerType::AdamW;
    if (adam && d.convention == OptimizerConvention::PyTorch) {
        rule.beta_2 = static_cast<T>(d.beta_2);
        set_pytorch_adam_step(rule, learning_rate, d.beta_1, d.beta_2, static_cast<double>(t));
    } else if (adam) {
        // rounded_constant(t), then the bias correction as make_update_rule computes it. For
        // float the power is taken in double and rounded once (glibc's powf is correctly rounded
        // in practice; CUDA's powf is not).
        T step;
        if constexpr (sizeof(T) == sizeof(double))
            step = round(static_cast<T>(static_cast<double>(t)));
        else
            step = round(static_cast<T>(static_cast<float>(static_cast<double>(t))));
        const T beta_1 = static_cast<T>(d.beta_1), beta_2 = static_cast<T>(d.beta_2);
        const T beta_1_power =
            round(static_cast<T>(pow(static_cast<double>(beta_1), static_cast<double>(step))));
        const T beta_2_power =
            round(static_cast<T>(pow(static_cast<double>(beta_2), static_cast<double>(step))));
        const T numerator =
            round(rule.lr * round(static_cast<T>(sqrt(round(T(1) - beta_2_power)))));
        rule.alpha = round(numerator / round(T(1) - beta_1_power));
    }
    return rule;
}

// The rule with its slot indices as compile-time constants: RMSprop's momentum is slot 1 and its
// average gradient slot AverageSlot (1 without momentum, else 2); the other optimizers read slots
// 0 and 1 only. Constant indices let the compiler keep the per-element slot values in registers
// (runtime ones put them in local memory: this file's sm_90 PTX had 2228 st.local, now none).
template <int AverageSlot, class T, class Round>
__device__ UpdateRule<T> rule_with_fixed_slots(const DeviceRule& d, const StepScalars& s,
                                               Round round) {
    UpdateRule<T> rule = device_rule<T>(d, s, round);
    rule.momentum_slot = 1;
    rule.average_slot = AverageSlot;
    return rule;
}

template <int AverageSlot, class T, class Round>
__global__ void update_kernel(UpdateArgs a, Round round) {
    const StepScalars* s = a.scalars;
    if (a.skip_if_found_inf && s->found_inf != 0) return; // a skipped step writes nothing
    const UpdateRule<T> rule = rule_with_fixed_slots<AverageSlot, T>(a.rule, *s, round);
    const T inv_scale = static_cast<T>(1.0 / s->loss_scale);
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < a.count;
         i += i64(gridDim.x) * blockDim.x) {
        T w = load<T>(a.param, a.param_dtype, i);
        T g = load<T>(a.grad, a.grad_dtype, i);
        if (a.unscale) g *= inv_scale;
        T slot_values[3] = {T(0), T(0), T(0)};
#pragma unroll
        for (int k = 0; k < 3; ++k)
            if (k < a.slot_count) slot_values[k] = load<T>(a.slots[k], a.slot_dtype[k], i);
        T* slot_ptrs[3] = {&slot_values[0], &slot_values[1], &slot_values[2]};
        update_element(rule, w, g, slot_ptrs, 0, round);
        store<T>(a.param, a.param_dtype, i, w);
        // w is the stored parameter (float32 or float64), rounded as the cast kernel rounds it.
        if (a.copy) store<T>(a.copy, a.copy_dtype, i, w);
#pragma unroll
        for (int k = 0; k < 3; ++k)
            if (k < a.slot_count) store<T>(a.slots[k], a.slot_dtype[k], i, slot_values[k]);
    }
}

// One 8-element vector of an update: P is the parameter's and every slot's storage type, G the
// gradient's; a compute copy (of a float32 parameter, `copy_bf16` or float16) is written from the
// same eight values, as cast_vec_kernel writes it. Shared by the per-tensor and the multi-tensor
// kernels, so both compute each element alike.
template <class P, class G, class Round>
__device__ inline void update_vector(const UpdateRule<float>& rule, Round round, P* param,
                                     const G* grad, void* const* slots, int slot_count, void* copy,
                                     bool copy_bf16, bool unscale, float inv_scale, i64 v) {
    float w[kVec], g[kVec], slot[3][kVec] = {};
    load8(param, v, w);
    load8(grad, v, g);
    if (unscale) { // the float32 gradient the unscale would have written (unscale_grad)
#pragma unroll
        for (int j = 0; j < kVec; ++j) g[j] *= inv_scale;
    }
#pragma unroll // constant slot indices keep the slots in registers
    for (int k = 0; k < 3; ++k)
        if (k < slot_count) load8(static_cast<const P*>(slots[k]), v, slot[k]);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
        float values[3] = {slot[0][j], slot[1][j], slot[2][j]};
        float* ptrs[3] = {&values[0], &values[1], &values[2]};
        update_element(rule, w[j], g[j], ptrs, 0, round);
        slot[0][j] = values[0];
        slot[1][j] = values[1];
        slot[2][j] = values[2];
    }
    store8(param, v, w);
#pragma unroll
    for (int k = 0; k < 3; ++k)
        if (k < slot_count) store8(static_cast<P*>(slots[k]), v, slot[k]);
    if constexpr (std::is_same_v<P, float>) {
        if (copy && copy_bf16)
            store8(static_cast<__nv_bfloat16*>(copy), v, w);
        else if (copy)
            store8(static_cast<__half*>(copy), v, w);
    }
}

template <int AverageSlot, class P, class G, class Round>
__global__ void update_vec_kernel(UpdateArgs a, Round round, i64 vectors) {
    const StepScalars* s = a.scalars;
    if (a.skip_if_found_inf && s->found_inf != 0) return;
    const UpdateRule<float> rule = rule_with_fixed_slots<AverageSlot, float>(a.rule, *s, round);
    const bool copy_bf16 = a.copy_dtype == DType::BFloat16;
    const float inv_scale = static_cast<float>(1.0 / s->loss_scale);
    for (i64 v = blockIdx.x * i64(blockDim.x) + threadIdx.x; v < vectors;
         v += i64(gridDim.x) * blockDim.x)
        update_vector(rule, round, static_cast<P*>(a.param), static_cast<const G*>(a.grad), a.slots,
                      a.slot_count, a.copy, copy_bf16, a.unscale, inv_scale, v);
}

// The multi-tensor launch: a block finds its tensor by the blocks' starts (at most
// kMultiUpdateTensors, the same for the whole block), then its threads take
// kMultiVectorsPerThread vectors each. __grid_constant__ lets the entries be indexed at run time
// without a per-thread copy of the 2 KB argument.
constexpr unsigned kMultiThreads = 256;
constexpr int kMultiVectorsPerThread = 4;
constexpr i64 kMultiBlockVectors = i64(kMultiThreads) * kMultiVectorsPerThread;

template <int AverageSlot, class G>
__global__ void multi_update_kernel(const __grid_constant__ MultiUpdateArgs a) {
    const StepScalars* s = a.scalars;
    if (a.skip_if_found_inf && s->found_inf != 0) return;
    int t = 0;
    while (t + 1 < a.tensors && i64(blockIdx.x) >= a.entries[t + 1].first_block) ++t;
    const MultiUpdateEntry& e = a.entries[t];
    const UpdateRule<float> rule =
        rule_with_fixed_slots<AverageSlot, float>(a.rule, *s, NoRounding{});
    void* slots[3] = {e.slots[0], e.slots[1], e.slots[2]};
    const float inv_scale = static_cast<float>(1.0 / s->loss_scale);
    const i64 first = (i64(blockIdx.x) - e.first_block) * kMultiBlockVectors + threadIdx.x;
    for (int j = 0; j < kMultiVectorsPerThread; ++j) {
        const i64 v = first + i64(j) * kMultiThreads;
        if (v >= e.vectors) break;
        update_vector(rule, NoRounding{}, e.param, static_cast<const G*>(e.grad), slots,
                      a.slot_count, e.copy, e.copy_bf16, a.unscale, inv_scale, v);
    }
}

template <class Round>
bool launch_vec(const UpdateArgs& a, Round round, cudaStream_t stream) {
    if (a.count % kVec != 0 || !vec8_dtype(a.param_dtype) || !vec8_dtype(a.grad_dtype) ||
        !vec8_aligned(a.param) || !vec8_aligned(a.grad) || a.slot_count > 3)
        return false;
    for (int k = 0; k < a.slot_count; ++k)
        if (a.slot_dtype[k] != a.param_dtype || !vec8_aligned(a.slots[k])) return false;
    if (a.copy && (a.param_dtype != DType::Float32 || !vec8_aligned(a.copy) ||
                   (a.copy_dtype != DType::BFloat16 && a.copy_dtype != DType::Float16)))
        return false; // the generic kernel writes any other copy
    const i64 vectors = a.count / kVec;
    const unsigned blocks = vec8_blocks(vectors) > 2048 ? 2048 : vec8_blocks(vectors);
    with_storage(a.param_dtype, [&](auto p_tag) {
        using P = typename decltype(p_tag)::type;
        with_storage(a.grad_dtype, [&](auto g_tag) {
            using G = typename decltype(g_tag)::type;
            if (a.rule.average_slot == 2)
                update_vec_kernel<2, P, G, Round><<<blocks, 256, 0, stream>>>(a, round, vectors);
            else
                update_vec_kernel<1, P, G, Round><<<blocks, 256, 0, stream>>>(a, round, vectors);
        });
    });
    MANTISSA_CUDA_LAUNCH_CHECK();
    return true;
}

template <class T, class Round>
void launch(const UpdateArgs& a, Round round, cudaStream_t stream) {
    if constexpr (sizeof(T) == sizeof(float))
        if (launch_vec(a, round, stream)) return;
    const unsigned blocks = blocks_for(a.count) > 2048 ? 2048 : blocks_for(a.count);
    if (a.rule.average_slot == 2)
        update_kernel<2, T, Round><<<blocks, 256, 0, stream>>>(a, round);
    else
        update_kernel<1, T, Round><<<blocks, 256, 0, stream>>>(a, round);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace

bool multi_update_fits(const UpdateArgs& a) {
    const bool grad_ok = a.grad_dtype == DType::Float32 || a.grad_dtype == DType::BFloat16 ||
                         a.grad_dtype == DType::Float16;
    if (a.f64 || a.round != RoundKind::None || a.param_dtype != DType::Float32 || !grad_ok ||
        a.count <= 0 || a.count % kVec != 0 || !vec8_aligned(a.param) || !vec8_aligned(a.grad) ||
        a.slot_count > 3)
        return false;
    for (int k = 0; k < a.slot_count; ++k)
        if (a.slot_dtype[k] != DType::Float32 || !vec8_aligned(a.slots[k])) return false;
    return !a.copy || ((a.copy_dtype == DType::BFloat16 || a.copy_dtype == DType::Float16) &&
                       vec8_aligned(a.copy));
}

void add_multi_update(MultiUpdateArgs& multi, const UpdateArgs& a) {
    MultiUpdateEntry& e = multi.entries[multi.tensors++];
    e.param = static_cast<float*>(a.param);
    e.grad = a.grad;
    multi.grad_dtype = a.grad_dtype;
    for (int k = 0; k < a.slot_count; ++k) e.slots[k] = static_cast<float*>(a.slots[k]);
    e.copy = a.copy;
    e.copy_bf16 = a.copy_dtype == DType::BFloat16;
    e.vectors = a.count / kVec;
    e.first_block = multi.blocks;
    multi.blocks += (e.vectors + kMultiBlockVectors - 1) / kMultiBlockVectors;
    multi.rule = a.rule;
    multi.slot_count = a.slot_count;
    multi.skip_if_found_inf = a.skip_if_found_inf;
    multi.unscale = a.unscale;
    multi.scalars = a.scalars;
}

void launch_optimizer_update_multi(const MultiUpdateArgs& a, cudaStream_t stream) {
    if (a.tensors == 0 || a.blocks == 0) return;
    const auto blocks = static_cast<unsigned>(a.blocks);
    with_storage(a.grad_dtype, [&](auto g_tag) {
        using G = typename decltype(g_tag)::type; // float, __nv_bfloat16 or __half
        if (a.rule.average_slot == 2)
            multi_update_kernel<2, G><<<blocks, kMultiThreads, 0, stream>>>(a);
        else
            multi_update_kernel<1, G><<<blocks, kMultiThreads, 0, stream>>>(a);
    });
    MANTISSA_CUDA_LAUNCH_CHECK();
}

void launch_optimizer_update(const UpdateArgs& args, cudaStream_t stream) {
    if (args.count <= 0) return;
    if (args.f64)
        launch<double>(args, NoRounding{}, stream);
    else if (args.round == RoundKind::Float16)
        launch<float>(args, DeviceRoundFloat16{}, stream);
    else if (args.round == RoundKind::BFloat16)
        launch<float>(args, DeviceRoundBFloat16{}, stream);
    else
        launch<float>(args, NoRounding{}, stream);
}

} // namespace mantissa::cuda
