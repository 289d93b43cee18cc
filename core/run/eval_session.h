// EvalSession: trained weights measured on the 10,000 MNIST test images, as Keras's evaluate()
// does, with a plan compiled for inference only (forward steps; no gradients, no optimizer state)
// and only the test split on the device. `mantissa-cli eval` and Evaluate Weights present it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/nn/model.h"
#include "core/plan/plan.h"
#include "core/plan/plan_weights.h"
#include "core/run/session_inputs.h"
#include "core/train/experiment.h"
#include "core/train/trainer.h"

namespace mantissa {

struct EvalSessionOptions {
    Experiment experiment; // model, policy, batch_size (the evaluation batch), seed, device
    EngineSource engine;
    // Only `data.data->test` is used; a folder is read for its two t10k files only.
    DataSource data;
    ModelWeights weights;
    std::string source; // the weights' file, for messages
    LoadWeightsOptions load;
};

class EvalSession {
public:
    // Opens the engine, reads the test split, compiles the inference plan and loads the weights
    // (checked by name, shape and dtype: Error(Config) naming `source` and the tensor).
    explicit EvalSession(EvalSessionOptions options);
    ~EvalSession();
    EvalSession(const EvalSession&) = delete;
    EvalSession& operator=(const EvalSession&) = delete;

    // Loss and accuracy over every test image.
    EvalResult run();

    Backend& backend() const { return m_engine.backend(); }
    const DeviceChoice* device_choice() const { return m_engine.choice(); }
    const Plan& plan() const { return *m_plan; }
    // Bytes per category, the test images, labels and order ("data") included.
    MemoryByCategory memory() const;
    std::int64_t test_examples() const { return m_count; }

private:
    SessionEngine m_engine; // first: the plan and the device data live on it
    Experiment m_experiment;
    std::unique_ptr<Model> m_model;
    std::unique_ptr<Plan> m_plan;
    Buffer m_buffer; // test images, labels and the identity order
    Tensor m_images, m_labels, m_order;
    std::int64_t m_count = 0;
    std::size_t m_data_bytes = 0;
};

} // namespace mantissa
