// One optimizer's parameter, gradient and slots in test-owned memory, stepped through the CPU
// engine as a training step ends (begin_step, the gated update, finish_step without scaling).
// Shared by the optimizer suites (tst_optim, tst_optim_conventions).
#pragma once

#include <optional>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/optim/loss_scale.h"
#include "core/optim/optimizer_config.h"
#include "tests/host_tensor.h"

namespace mantissa::test {

// One optimizer's parameter, gradient and slots, with a step driven through the backend.
struct Run {
    OptimizerConfig config;
    HostTensor param;
    HostTensor grad;
    std::vector<HostTensor> slot_tensors; // not "slots": a Qt keyword
    HostScalars scalars;

    // The gradient shares the parameter's dtype unless `grad_dtype` says otherwise.
    Run(const OptimizerConfig& c, DType dtype, const std::vector<double>& w,
        std::optional<DType> grad_dtype = std::nullopt)
        : config(c), param(dtype, w, "w"),
          grad(grad_dtype.value_or(dtype), std::vector<double>(w.size(), 0.0), "g") {
        slot_tensors.reserve(
            3); // the Tensors point into each HostTensor's storage: no reallocation
        for (int k = 0; k < optimizer_slot_count(config); ++k)
            slot_tensors.emplace_back(dtype, std::vector<double>(w.size(), 0.0),
                                      optimizer_slot_name(config, k));
    }
    std::vector<Tensor*> slot_ptrs() {
        std::vector<Tensor*> out;
        for (HostTensor& s : slot_tensors) out.push_back(&s.tensor);
        return out;
    }
    // begin_step, update (gated), finish_step with no loss scaling: iterations advances.
    void step(CpuBackend& backend, const std::vector<double>& g) {
        grad.set(g);
        backend.begin_step(scalars.tensor);
        const std::vector<Tensor*> s = slot_ptrs();
        backend.optimizer_update(config, param.tensor, grad.tensor, s, scalars.tensor, true);
        LossScaleConfig none;
        none.mode = LossScaleMode::None;
        backend.finish_step(none, scalars.tensor);
    }
};

// A reference's slot arrays in the engine's slot order (optimizer_config.cpp): `m` the SGD or
// RMSprop momentum or Adam's m, `v` RMSprop's velocity or Adam's v, `a` the average gradient.
inline std::vector<std::vector<double>> slots_in_engine_order(const OptimizerConfig& c,
                                                              const std::vector<double>& m,
                                                              const std::vector<double>& v,
                                                              const std::vector<double>& a) {
    switch (c.type) {
    case OptimizerType::SGD:
        if (c.momentum != 0) return {m};
        return {};
    case OptimizerType::RMSprop: {
        std::vector<std::vector<double>> out{v};
        if (c.momentum > 0) out.push_back(m);
        if (c.centered) out.push_back(a);
        return out;
    }
    default:
        return {m, v};
    }
}

} // namespace mantissa::test
