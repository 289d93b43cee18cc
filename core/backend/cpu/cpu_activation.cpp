// PLACEHOLDER (to be replaced by its owner): throws until implemented.
// Exists only so that CpuBackend links while its op files are written in parallel.
#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"

namespace mantissa {

void CpuBackend::activation_forward(Activation, const Tensor&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::activation_forward"); }
void CpuBackend::activation_backward(Activation, const Tensor&, const Tensor&, const Tensor&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::activation_backward"); }

} // namespace mantissa
