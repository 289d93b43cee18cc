// The cuDNN plan cache's key: a convolution's geometry, dtype and TF32 switch.
// Pure host logic without CUDA types, so it is unit-tested where no GPU exists.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/backend/backend.h"

namespace mantissa::cuda {

struct ConvKey {
    Conv2dArgs geometry;
    DType dtype = DType::Float32;
    bool tf32 = false;
    // TF32 only because the operands are exact in it (Conv2dArgs::exact_in_bfloat16), the
    // engine's switch being off: no tensor-core transform algorithms (usable_conv_algos).
    bool tf32_exact_only = false;

    bool operator==(const ConvKey& other) const;
};

struct ConvKeyHash {
    std::size_t operator()(const ConvKey& key) const;
};

// tf32: the engine's switch; a call whose operands are exact in bfloat16
// (Conv2dArgs::exact_in_bfloat16) gets TF32 too. Only float32 data has a TF32 choice.
ConvKey conv_key(const Conv2dArgs& args, DType dtype, bool tf32);

// Whether cuDNN's symmetric padding reproduces this geometry: its output size from pad_top and
// pad_left must equal out_h and out_w (the rows it pads below are then never read, or are zeros
// exactly as Keras's extra bottom/right padding). Otherwise the direct kernels run.
bool cudnn_padding_fits(const Conv2dArgs& args);

} // namespace mantissa::cuda
