// Model memory: the bytes a policy changes (weights, master weights, activations, gradients,
// optimizer state, workspace) apart from the dataset kept resident beside them. Resident MNIST is
// ~55 MiB, far more than a small model, and the same under every policy: added in, it hides the
// effect a comparison or a lesson is about.
#pragma once

#include <QVector>

#include "core/tensor/memory_category.h"

namespace mantissa::ui {

struct RunRecord;

// Every category but Data, in the chart's order.
const QVector<MemCategory>& model_categories();
std::size_t model_bytes(const MemoryByCategory& memory);
std::size_t dataset_bytes(const MemoryByCategory& memory);
// A run's latest memory by category: its last step's, else its compiled plan's.
MemoryByCategory latest_memory(const RunRecord& run);

} // namespace mantissa::ui
