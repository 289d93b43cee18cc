// parity_qualifier(): the op-case table and a training check, counted into a QualificationRecord.
#include "core/device/parity_qualifier.h"

#include <cstdio>

#include "core/backend/factory/backend_factory.h"
#include "core/check/op_cases.h"
#include "core/check/parity.h"
#include "core/data/synthetic_mnist.h"
#include "core/numeric/dtype.h"

namespace mantissa {

namespace {

constexpr int kTrainingSteps = 50;

std::string case_failure(const CaseResult& r) {
    if (!r.failure.empty())
        return r.name + " " + std::string(dtype_name(r.dtype)) + ": " + r.failure;
    char text[96];
    std::snprintf(text, sizeof text, ": max error %.3g > %.3g", r.error, r.tolerance);
    return r.name + " " + std::string(dtype_name(r.dtype)) + text +
           (r.worst.empty() ? "" : " at " + r.worst);
}

} // namespace

Qualifier parity_qualifier() {
    return [](Backend& gpu, const QualificationProgressFn& progress) {
        QualificationRecord record;
        BackendChoice cpu = create_backend("cpu");
        const std::vector<OpCase> cases = op_cases();
        const char* policies[] = {"float32", "mixed_float16"};
        const int total = static_cast<int>(cases.size()) + 2;
        const std::string title = "Checking the CUDA engine on " + gpu.info().name + "…";
        auto fail = [&](const std::string& what) {
            if (record.failures++ == 0) record.first_failure = what;
        };
        for (const OpCase& op : cases) {
            if (progress) progress({title + " " + describe(op), record.cases, total});
            const CaseResult r = run_case(op, *cpu.backend, gpu);
            ++record.cases;
            if (!r.ok()) fail(case_failure(r));
        }
        const Mnist data = synthetic_mnist(512, 256);
        for (const char* policy : policies) {
            if (progress)
                progress(
                    {title + " training " + std::to_string(kTrainingSteps) + " steps, " + policy,
                     record.cases, total});
            const TrainingParity t =
                training_parity(*cpu.backend, gpu, data, policy, kTrainingSteps);
            ++record.cases;
            if (!t.ok()) {
                char text[160];
                std::snprintf(text, sizeof text,
                              "training %d steps under %s: loss differs by %.3g (tolerance %.3g)",
                              t.steps, policy, t.max_loss_rel_error, t.tolerance);
                fail(t.failure.empty()
                         ? std::string(text)
                         : "training under " + std::string(policy) + ": " + t.failure);
            }
        }
        record.passed = record.failures == 0;
        if (progress) progress({title + (record.passed ? " passed" : " failed"), total, total});
        return record;
    };
}

} // namespace mantissa
