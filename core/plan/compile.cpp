// compile(): the one-call path, describe() and bind(); nothing here decides anything itself.
// Kept so a caller needing only a runnable Plan does not spell out the two stages.
#include "core/plan/compile.h"

namespace mantissa {

std::unique_ptr<Plan> compile(const Model& model, const CompileOptions& options, Backend& backend) {
    return bind(describe(model, options), backend);
}

} // namespace mantissa
