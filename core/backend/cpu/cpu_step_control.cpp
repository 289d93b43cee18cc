// PLACEHOLDER (to be replaced by its owner): throws until implemented.
// Exists only so that CpuBackend links while its op files are written in parallel.
#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"

namespace mantissa {

void CpuBackend::begin_step(Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::begin_step"); }
void CpuBackend::unscale_and_check_finite(std::span<Tensor* const>, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::unscale_and_check_finite"); }
void CpuBackend::optimizer_update(const OptimizerConfig&, Tensor&, const Tensor&, std::span<Tensor* const>, const Tensor&, bool) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::optimizer_update"); }
void CpuBackend::finish_step(const LossScaleConfig&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::finish_step"); }
StepScalars CpuBackend::read_scalars(const Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::read_scalars"); }
void CpuBackend::write_scalars(const StepScalars&, Tensor&) { throw Error(ErrorKind::Internal, "not implemented: CpuBackend::write_scalars"); }

} // namespace mantissa
