// The subcommands of mantissa-cli. Each takes the arguments after its name and returns the exit
// status: 0 success, 1 a run that failed, 2 bad arguments or configuration.
#pragma once

#include <string>
#include <vector>

namespace mantissa::cli {

using Args = std::vector<std::string>;

int run_train(const Args& args);    // train an experiment, write metrics JSONL
int run_eval(const Args& args);     // loss and accuracy of saved weights on the test set
int run_export(const Args& args);   // saved weights to safetensors / ONNX / NPZ
int run_metrics(const Args& args);  // a metrics JSONL to CSV / JSON
int run_bench(const Args& args);    // ms/step and samples/s per policy
int run_profile(const Args& args);  // one step, plan step by plan step, against the device's roof
int run_cast(const Args& args);     // the float lab: a value in every dtype
int run_quantize(const Args& args); // block-scaled (MX / NVFP4) encoding of values
int run_policies(const Args& args); // list the dtype policies
int run_selftest(const Args& args); // check the engines (CPU always; CUDA when present)

} // namespace mantissa::cli
