// time_square_gemm (gemm_timing.h).
#include "core/backend/gemm_timing.h"

#include <algorithm>
#include <chrono>

namespace mantissa {

std::vector<double> time_square_gemm(Backend& backend, DType dtype, std::int64_t n, int repeats) {
    Tensor a{"a", dtype, {n, n}, MemCategory::Workspace, nullptr};
    Tensor b{"b", dtype, {n, n}, MemCategory::Workspace, nullptr};
    Tensor c{"c", dtype, {n, n}, MemCategory::Workspace, nullptr};
    GemmArgs args;
    args.a = &a;
    args.b = &b;
    args.c = &c;
    const std::size_t ws_bytes = backend.gemm_workspace_bytes(args);
    Buffer ba = backend.allocate(a.bytes()), bb = backend.allocate(b.bytes()),
           bc = backend.allocate(c.bytes()),
           bw = backend.allocate(std::max<std::size_t>(ws_bytes, 64));
    a.data = ba.data();
    b.data = bb.data();
    c.data = bc.data();
    backend.fill(a, 0.5);
    backend.fill(b, 0.25);
    args.workspace = {bw.data(), bw.size()};
    backend.gemm(args); // warm-up: the engine picks and caches its algorithm
    backend.synchronize();
    std::vector<double> ms;
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        backend.gemm(args);
        backend.synchronize();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
    return ms;
}

} // namespace mantissa
