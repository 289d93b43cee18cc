// PLACEHOLDER (to be replaced by its owner): throws until implemented.
// Exists only so that CpuBackend links while its op files are written in parallel.
#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"

namespace mantissa {

void CpuBackend::maxpool_forward(const Pool2dArgs&, const Tensor&, Tensor&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::maxpool_forward"); }
void CpuBackend::maxpool_backward(const Pool2dArgs&, const Tensor&, const Tensor&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::maxpool_backward"); }

} // namespace mantissa
