// softmax_cross_entropy: probabilities, loss, accuracy and the scaled logit gradient in one
// pass over the rows; the loss sum and counts go to the step scalars on the device (no host round
// trip).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "core/backend/step_scalars.h"
#include "core/numeric/dtype.h"

namespace mantissa::cuda {

// Bytes of device scratch the loss keeps for its per-block partial sums (one engine's, reused in
// stream order; allocated once so a captured step allocates nothing): 512 blocks of 256 rows.
inline constexpr std::size_t kXentScratchBytes = 512 * (sizeof(double) + sizeof(long long));

struct XentArgs {
    const void* logits = nullptr; // (rows, classes)
    DType logits_dtype = DType::Float32;
    const std::int32_t* labels = nullptr; // (rows)
    std::int64_t rows = 0, classes = 0, valid_rows = 0;
    void* probs = nullptr; // optional (rows, classes)
    DType probs_dtype = DType::Float32;
    void* dlogits = nullptr; // optional (rows, classes)
    DType dlogits_dtype = DType::Float32;
    StepScalars* scalars = nullptr; // adds loss_sum, correct, examples; reads loss_scale
    void* scratch = nullptr;        // kXentScratchBytes on the device
};

void launch_softmax_xent(const XentArgs& args, cudaStream_t stream);

} // namespace mantissa::cuda
