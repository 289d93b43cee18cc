// PLACEHOLDER (to be replaced by its owner): throws until implemented.
// Exists only so that CpuBackend links while its op files are written in parallel.
#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"

namespace mantissa {

CpuBackend::CpuBackend() { m_info = {"cpu", "CPU", false, 0}; }
CpuBackend::~CpuBackend() {}
Buffer CpuBackend::allocate(std::size_t) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::allocate"); }
void CpuBackend::upload(const void*, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::upload"); }
void CpuBackend::download(const Tensor&, void*) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::download"); }
void CpuBackend::gather_batch(const Tensor&, const Tensor&, const Tensor&, std::int64_t, std::int64_t, Tensor&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::gather_batch"); }
void CpuBackend::fill(Tensor&, double) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::fill"); }
void CpuBackend::cast(const Tensor&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::cast"); }

} // namespace mantissa
