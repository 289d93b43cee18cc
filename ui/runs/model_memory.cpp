// Model memory (see model_memory.h): sums over the categories a policy can change.
#include "ui/runs/model_memory.h"

#include "ui/runs/run_record.h"

namespace mantissa::ui {

const QVector<MemCategory>& model_categories() {
    static const QVector<MemCategory> categories = {
        MemCategory::Weights,   MemCategory::Master,    MemCategory::Activations,
        MemCategory::Gradients, MemCategory::Optimizer, MemCategory::Workspace};
    return categories;
}

std::size_t model_bytes(const MemoryByCategory& memory) {
    std::size_t sum = 0;
    for (MemCategory c : model_categories()) sum += memory[c];
    return sum;
}

std::size_t dataset_bytes(const MemoryByCategory& memory) {
    return memory[MemCategory::Data];
}

MemoryByCategory latest_memory(const RunRecord& run) {
    if (!run.steps.isEmpty() && run.steps.back().memory.total() > 0) return run.steps.back().memory;
    return run.memory;
}

} // namespace mantissa::ui
