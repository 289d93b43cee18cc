// ONNX export: the whole model (graph + weights) for onnxruntime and friends. Input `input`:
// float32 (N, 1, 28, 28), pixel/255; output `probabilities`: float32 (N, 10), softmax included.
#pragma once

#include <string>

#include "core/records/trained_model.h"

namespace mantissa {

// False when this build was configured without libonnx-dev / libprotobuf-dev.
bool onnx_export_available();

// Writes opset 13 (IR version 7) with the weights as initializers in `dtype` (float32 or float16;
// the float16 graph casts its input down and its logits back up so the softmax runs in float32,
// as the Keras guide advises). Convolutions run in ONNX's NCHW with OIHW filters; a Flatten first
// transposes to Keras's NHWC so the Dense weights that follow keep their meaning. Dense layers are
// Gemm with transB = 1 and (out, in) kernels, as PyTorch's exporter writes them: the layout
// OpenCV's DNN importer requires. Initializers keep the weight names (`dense_1.kernel`).
// Throws Error(Config) naming the layer or tensor the graph cannot be built from,
// Error(InvalidArgument) for another dtype or when ONNX support is not built in, Error(Io).
void write_onnx(const TrainedModel& model, const std::string& path, DType dtype = DType::Float32);

} // namespace mantissa
