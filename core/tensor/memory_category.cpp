// Memory category names, as they appear in the metrics JSONL and the memory chart's legend.
// Keep them stable: files written by earlier versions use them as keys.
#include "core/tensor/memory_category.h"

namespace mantissa {

const char* mem_category_name(MemCategory category) {
    switch (category) {
    case MemCategory::Weights:
        return "weights";
    case MemCategory::Master:
        return "master";
    case MemCategory::Activations:
        return "activations";
    case MemCategory::Gradients:
        return "gradients";
    case MemCategory::Optimizer:
        return "optimizer";
    case MemCategory::Workspace:
        return "workspace";
    case MemCategory::Data:
        return "data";
    }
    return "?";
}

} // namespace mantissa
