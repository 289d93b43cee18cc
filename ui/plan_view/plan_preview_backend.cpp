// PlanPreviewBackend: address-space reservation with mmap (no pages are ever touched, so nothing
// is committed) and the CPU engine's workspace sizes.
#include "ui/plan_view/plan_preview_backend.h"

#include <sys/mman.h>

#include <cstdint>
#include <string>

#include "core/error.h"

namespace mantissa::ui {

PlanPreviewBackend::PlanPreviewBackend() {
    m_info.id = "preview";
    m_info.name = "plan preview (no memory)";
}

Buffer PlanPreviewBackend::allocate(std::size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        throw Error(ErrorKind::OutOfMemory, "cannot even reserve " + std::to_string(bytes) +
                                                " bytes of address space for this plan");
    auto release = [](void* ptr, void* size) {
        munmap(ptr, static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(size)));
    };
    return Buffer(p, bytes, release, reinterpret_cast<void*>(static_cast<std::uintptr_t>(bytes)));
}

std::size_t PlanPreviewBackend::gemm_workspace_bytes(const GemmArgs& args) const {
    return m_cpu.gemm_workspace_bytes(args);
}

std::size_t PlanPreviewBackend::conv2d_workspace_bytes(const Conv2dArgs& args, DType dtype) const {
    return m_cpu.conv2d_workspace_bytes(args, dtype);
}

void PlanPreviewBackend::refuse() {
    throw Error(ErrorKind::Internal, "a plan compiled for preview cannot run");
}

} // namespace mantissa::ui
