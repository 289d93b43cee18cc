// `mantissa-cli export`: converts saved weights (.safetensors) to another format or dtype, after
// checking them against the experiment's model; the format comes from each --out extension.
#include <cstdio>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "app/cli/weights_input.h"
#include "core/backend/factory/backend_factory.h"
#include "core/error.h"
#include "core/export/weights_export.h"
#include "core/nn/model.h"
#include "core/numeric/policy.h"
#include "core/plan/compile.h"
#include "core/plan/plan_weights.h"

namespace mantissa::cli {

int run_export(const Args& args) {
    ArgParser parser("export",
                     "Convert saved weights to safetensors, ONNX or NPZ (chosen by --out's "
                     "extension), checked against the experiment's model.");
    parser.add_option("--config", "FILE",
                      "experiment JSON (default: the one stored in the weights file)");
    add_weights_input_options(parser);
    parser.add_option("--out", "FILE", "output file: .safetensors, .onnx or .npz", true);
    parser.add_option("--dtype", "D",
                      "convert the weights: float32, float16, bfloat16 or float64 (default: as "
                      "stored; ONNX: float32)");
    parser.add_option("--policy", "P",
                      "the policy whose variables the weights are (default: "
                      "the experiment's)");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    const std::vector<std::string> outs = parser.values("--out");
    if (outs.empty()) throw UsageError("--out: give at least one output file");
    check_export_paths(outs, "--out");
    ExportOptions options;
    options.dtype = export_dtype_option(parser, "--dtype");
    TrainedModel model = read_weights_input(parser);
    const std::string source = parser.value("--weights");

    // Check names, shapes and dtypes exactly as an import does: load them into a CPU plan of the
    // model (batch 1, so even large models cost little) and read them back in plan order.
    BackendChoice cpu = create_backend("cpu");
    const Model net(model.experiment.model, policy_from_name(model.experiment.policy));
    net.validate();
    CompileOptions compile_options;
    compile_options.policy = policy_from_name(model.experiment.policy);
    compile_options.batch_size = 1;
    compile_options.optimizer = model.experiment.optimizer;
    compile_options.loss_scale = model.experiment.loss_scale;
    const std::unique_ptr<Plan> plan = compile(net, compile_options, *cpu.backend);
    LoadWeightsOptions load;
    load.allow_rounding = parser.has("--allow-rounding");
    load_model_weights(*plan, *cpu.backend, model.weights, source, load);
    model.weights = read_model_weights(*plan, *cpu.backend);

    for (const std::string& out : outs) {
        export_weights(model, out, options);
        std::printf("wrote %s (%s)\n", out.c_str(),
                    weights_format_name(weights_format_for_path(out)));
    }
    return 0;
}

} // namespace mantissa::cli
