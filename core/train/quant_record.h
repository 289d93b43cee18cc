// QuantRecord: what the frontier policies' quantise steps did at one step, per layer and role
// (amax, the scale in use, the share of values clipped and flushed to zero). Qt-free; the
// Trainer emits one every experiment.quant_every steps and the metrics JSONL writes a `quant` line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa {

struct QuantTensorRecord {
    std::string layer; // "dense_1"
    // "activation", "weight", "gradient" (the row-wise copies), or "activation_columnwise",
    // "weight_columnwise", "gradient_columnwise" (block-scaled recipes' copies for the GEMM that
    // reduces along the other dimension; under nvfp4's hadamard, amax is after the transform).
    std::string role;
    std::string format; // the quantise step's description ("mxfp8_e4m3 1×32 blocks, ...")
    double amax = 0;    // of the tensor before quantisation (gradients carry the loss scale)
    double scale = 0;   // the decode factor in use (per-tensor scale_inv, or the largest block's)
    double clipped = 0; // share of values saturated, 0..1
    double flushed = 0; // share of values (non-zero before) decoded as zero, 0..1
    std::int64_t count = 0;  // values quantised
    std::int64_t blocks = 0; // scales in use
};

struct QuantRecord {
    std::int64_t step = 0; // 1-based global step
    std::vector<QuantTensorRecord> tensors;
};

} // namespace mantissa
