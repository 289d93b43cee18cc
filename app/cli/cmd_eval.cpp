// `mantissa-cli eval`: loads trained weights into the experiment's model and prints loss and
// accuracy on the 10,000 MNIST test images, as Keras's model.evaluate() does (an EvalSession:
// no optimizer state, only the test images on the device).
#include <cmath>
#include <cstdio>

#include "app/cli/args.h"
#include "app/cli/cli_device.h"
#include "app/cli/commands.h"
#include "app/cli/weights_input.h"
#include "core/run/eval_session.h"

namespace mantissa::cli {

int run_eval(const Args& args) {
    ArgParser parser("eval", "Evaluate trained weights on the 10,000 MNIST test images.");
    parser.add_option("--config", "FILE",
                      "experiment JSON (default: the one stored in the weights file)");
    add_weights_input_options(parser);
    parser.add_option("--policy", "P", "evaluate under another dtype policy (e.g. float16)");
    parser.add_option("--device", "D", "auto (default), cpu, cuda or cuda:N");
    parser.add_option("--batch", "N", "evaluation batch size");
    parser.add_option("--data", "DIR", "MNIST folder (default: $MANTISSA_DATA, then data/mnist)");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    const TrainedModel model = read_weights_input(parser);
    const std::string weights_path = parser.value("--weights");

    EvalSessionOptions options;
    options.experiment = model.experiment;
    options.engine.device = open_cli_device(model.experiment.device);
    options.data.dir = parser.value("--data");
    options.weights = model.weights;
    options.source = weights_path;
    options.load.allow_rounding = parser.has("--allow-rounding");
    EvalSession session(std::move(options));
    const EvalResult result = session.run();

    const std::string& note = session.device_choice()->note;
    if (!note.empty()) std::fprintf(stderr, "note: %s\n", note.c_str());
    std::printf("%s (%s, %s): %lld test images - loss: %.4f - accuracy: %.4f\n",
                model.experiment.name.c_str(), session.plan().policy.name.c_str(),
                session.backend().info().id.c_str(), static_cast<long long>(result.examples),
                result.loss, result.accuracy);
    if (std::isfinite(model.test_accuracy))
        std::printf("recorded in %s: accuracy %.4f\n", weights_path.c_str(), model.test_accuracy);
    return 0;
}

} // namespace mantissa::cli
