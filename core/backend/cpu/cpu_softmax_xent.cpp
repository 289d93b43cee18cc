// PLACEHOLDER (to be replaced by its owner): throws until implemented.
// Exists only so that CpuBackend links while its op files are written in parallel.
#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"

namespace mantissa {

void CpuBackend::softmax_cross_entropy(const SoftmaxXentArgs&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::softmax_cross_entropy"); }

} // namespace mantissa
