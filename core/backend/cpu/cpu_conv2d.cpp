// PLACEHOLDER (to be replaced by its owner): throws until implemented.
// Exists only so that CpuBackend links while its op files are written in parallel.
#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"

namespace mantissa {

std::size_t CpuBackend::conv2d_workspace_bytes(const Conv2dArgs&, DType) const { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::conv2d_workspace_bytes"); }
void CpuBackend::conv2d_forward(const Conv2dArgs&, const Tensor&, const Tensor&, const Tensor*, Activation, Tensor&, Tensor*, Workspace) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::conv2d_forward"); }
void CpuBackend::conv2d_backward_data(const Conv2dArgs&, const Tensor&, const Tensor&, Tensor&, Workspace) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::conv2d_backward_data"); }
void CpuBackend::conv2d_backward_filter(const Conv2dArgs&, const Tensor&, const Tensor&, Tensor&, Tensor*, Workspace) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::conv2d_backward_filter"); }

} // namespace mantissa
