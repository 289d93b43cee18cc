// PLACEHOLDER (to be replaced by its owner): throws until implemented.
// Exists only so that CpuBackend links while its op files are written in parallel.
#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"

namespace mantissa {

std::size_t CpuBackend::gemm_workspace_bytes(const GemmArgs&) const { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::gemm_workspace_bytes"); }
void CpuBackend::gemm(const GemmArgs&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::gemm"); }
void CpuBackend::bias_grad(const Tensor&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::bias_grad"); }

} // namespace mantissa
