// Plan summary printing: a layer table, totals, memory by category and lint.
// Casts are counted so the user sees how many conversions the policy inserts per step.
#include "app/cli/plan_summary.h"

namespace mantissa::cli {

std::string human_bytes(std::size_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024.0 && unit < 4) value /= 1024.0, ++unit;
    char text[32];
    std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
    return text;
}

void print_plan_summary(std::FILE* out, const PlanSpec& plan, const MemoryByCategory& memory) {
    std::fprintf(out, "%-28s %-18s %10s  %s\n", "Layer (type)", "Output shape", "Params", "Policy");
    for (const LayerSummary& layer : plan.layers) {
        std::string label = layer.name + " (" + layer.type + ")";
        std::fprintf(out, "%-28s %-18s %10lld  %s\n", label.c_str(),
                     shape_str(layer.output_shape).c_str(), static_cast<long long>(layer.params),
                     layer.policy.name.c_str());
    }
    int casts = 0;
    for (const StepSpec& step : plan.steps) casts += step.is_cast ? 1 : 0;
    std::fprintf(out, "Total params: %lld · %.1f MFLOP per training step · %zu steps, %d casts\n",
                 static_cast<long long>(plan.param_count), plan.train_flops_per_step() / 1e6,
                 plan.steps.size(), casts);
    std::fprintf(out, "Memory:");
    for (std::size_t i = 0; i < kMemCategoryCount; ++i)
        if (memory.bytes[i] > 0)
            std::fprintf(out, " %s %s ·", mem_category_name(static_cast<MemCategory>(i)),
                         human_bytes(memory.bytes[i]).c_str());
    std::fprintf(out, " total %s\n", human_bytes(memory.total()).c_str());
    for (const LintMessage& message : plan.lint)
        std::fprintf(out, "%s%s%s: %s\n",
                     message.severity == LintSeverity::Warning ? "warning" : "hint",
                     message.layer.empty() ? "" : " ", message.layer.c_str(), message.text.c_str());
}

} // namespace mantissa::cli
