// PLACEHOLDER (to be replaced by its owner): throws until implemented.
// Exists only so that CpuBackend links while its op files are written in parallel.
#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"

namespace mantissa {

void CpuBackend::dropout_forward(double, std::uint64_t, const Tensor&, Tensor&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::dropout_forward"); }
void CpuBackend::dropout_backward(double, const Tensor&, const Tensor&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::dropout_backward"); }

} // namespace mantissa
