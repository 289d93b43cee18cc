// The weights-file arguments shared by `eval` and `export`: --weights (a .safetensors file) and
// an optional --config (else the experiment the file's metadata carries).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/cli/args.h"
#include "core/records/trained_model.h"

namespace mantissa::cli {

// --weights FILE, --allow-rounding (and --config via add_experiment_options or by the caller).
void add_weights_input_options(ArgParser& parser);

// Reads --weights and the experiment (--config with its overrides, else the file's metadata).
// The test metrics come from the file's metadata. Names, shapes and dtypes are not checked here
// (load_model_weights does that against a compiled plan). UsageError names the argument.
TrainedModel read_weights_input(const ArgParser& parser);

// The dtype an export option names (--dtype, --export-dtype): a floating dtype or UsageError.
std::optional<DType> export_dtype_option(const ArgParser& parser, const std::string& name);
// UsageError naming `option` unless every path ends in .safetensors, .onnx or .npz.
void check_export_paths(const std::vector<std::string>& paths, const std::string& option);

} // namespace mantissa::cli
