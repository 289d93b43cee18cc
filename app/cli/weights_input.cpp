// Reading --weights for eval/export: an unreadable file is a bad argument (exit 2) like a missing
// one; a file that is not valid safetensors is a Config error naming the file (also exit 2).
#include "app/cli/weights_input.h"

#include <cmath>

#include "app/cli/experiment_options.h"
#include "core/error.h"
#include "core/export/weights_export.h"
#include "core/io/safetensors.h"
#include "core/numeric/policy.h"

namespace mantissa::cli {

void add_weights_input_options(ArgParser& p) {
    p.add_option("--weights", "FILE", "trained weights (.safetensors, e.g. from train --export)");
    p.add_flag("--allow-rounding",
               "accept weights stored wider than the policy's variable dtype (rounds them)");
}

TrainedModel read_weights_input(const ArgParser& p) {
    if (!p.has("--weights")) throw UsageError("--weights: a .safetensors file is required");
    const std::string path = p.value("--weights");
    SafetensorsFile file;
    try {
        file = read_safetensors(path);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::Io) throw;
        throw UsageError(std::string("--weights: ") + e.what());
    }
    TrainedModel model;
    if (p.has("--config")) {
        // The architecture and policy come from --config; the file's metadata only adds the test
        // metrics, so metadata this version cannot read (another program's) must not stop us.
        try {
            apply_export_metadata(file.metadata, path, model);
        } catch (const Error&) {
            model.test_accuracy = model.test_loss = std::nan("");
        }
        model.experiment = experiment_from_options(p);
    } else {
        if (!file.metadata.count("experiment"))
            throw UsageError("--config: '" + path +
                             "' carries no experiment in its metadata; pass the experiment with "
                             "--config FILE");
        apply_export_metadata(file.metadata, path, model);
        // The overrides experiment_from_options() applies to a --config file.
        Experiment& e = model.experiment;
        if (p.has("--policy")) {
            try {
                e.policy = policy_from_name(p.value("--policy")).name;
            } catch (const Error& err) {
                throw UsageError(std::string("--policy: ") + err.what());
            }
        }
        if (p.has("--device")) e.device = p.value("--device");
        if (p.has("--batch")) e.batch_size = p.int_value("--batch", e.batch_size, 1, 1000000);
    }
    model.weights = std::move(file.weights);
    return model;
}

std::optional<DType> export_dtype_option(const ArgParser& parser, const std::string& name) {
    if (!parser.has(name)) return std::nullopt;
    try {
        const DType dtype = dtype_from_name(parser.value(name));
        if (!is_floating(dtype)) throw Error(ErrorKind::Config, "not a floating dtype");
        return dtype;
    } catch (const Error& e) {
        throw UsageError(name + ": '" + parser.value(name) + "': " + e.what());
    }
}

void check_export_paths(const std::vector<std::string>& paths, const std::string& option) {
    for (const std::string& path : paths) {
        try {
            weights_format_for_path(path);
        } catch (const Error& e) {
            throw UsageError(option + ": " + e.what());
        }
    }
}

} // namespace mantissa::cli
