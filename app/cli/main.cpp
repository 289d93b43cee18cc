// mantissa-cli: the Qt-free front end (`mantissa-cli <command> [args]`) and its exit statuses.
// Every error becomes a message and a status here (2 bad arguments, 1 failed run): none escapes.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "core/error.h"

#ifndef MANTISSA_VERSION
#define MANTISSA_VERSION "unknown"
#endif

namespace {

using mantissa::cli::Args;

struct Command {
    const char* name;
    int (*run)(const Args&);
    const char* summary;
};

const Command kCommands[] = {
    {"train", mantissa::cli::run_train, "train an experiment and write its metrics (JSONL)"},
    {"eval", mantissa::cli::run_eval, "loss and accuracy of saved weights on the 10k test images"},
    {"export", mantissa::cli::run_export,
     "convert saved weights to safetensors, ONNX or NPZ (by extension)"},
    {"metrics", mantissa::cli::run_metrics, "export a run's metrics JSONL as CSV and JSON"},
    {"bench", mantissa::cli::run_bench, "measure ms/step and samples/s per dtype policy"},
    {"profile", mantissa::cli::run_profile,
     "time a training step plan step by plan step against the device's roof"},
    {"cast", mantissa::cli::run_cast,
     "the float lab: a value's nearest neighbour, bits and error in each dtype"},
    {"quantize", mantissa::cli::run_quantize,
     "block-scaled encoding (MXFP8/6/4, NVFP4): scales, codes, clipping per block"},
    {"policies", mantissa::cli::run_policies, "list the dtype policies and what they mean"},
    {"selftest", mantissa::cli::run_selftest, "check the engines (CPU always, CUDA when present)"},
};

void print_usage(std::FILE* out) {
    std::fprintf(out, "Usage: mantissa-cli <command> [args]\n\n"
                      "Mantissa's command line: learn and compare mixed-precision training.\n\n"
                      "Commands:\n");
    for (const Command& c : kCommands) std::fprintf(out, "  %-10s%s\n", c.name, c.summary);
    std::fprintf(out, "\nOptions:\n"
                      "  -h, --help  show this help and exit\n"
                      "  --version   print the version and exit\n\n"
                      "Run 'mantissa-cli <command> --help' for a command's arguments.\n");
}

int run_command(const Command& command, const Args& args) {
    const std::string name = command.name;
    try {
        return command.run(args);
    } catch (const mantissa::cli::UsageError& e) {
        std::fprintf(stderr, "mantissa-cli %s: %s\nTry 'mantissa-cli %s --help'.\n", name.c_str(),
                     e.what(), name.c_str());
        return 2;
    } catch (const mantissa::Error& e) {
        // A layer stack whose shapes do not fit is a mistake in the experiment file, like a
        // wrong field: bad input (2), not a failed run (1).
        const bool bad_input = e.kind() == mantissa::ErrorKind::Config ||
                               e.kind() == mantissa::ErrorKind::InvalidArgument ||
                               e.kind() == mantissa::ErrorKind::Shape;
        std::fprintf(stderr, "mantissa-cli %s: %s: %s\n", name.c_str(),
                     mantissa::error_kind_name(e.kind()), e.what());
        return bad_input ? 2 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mantissa-cli %s: error: %s\n", name.c_str(), e.what());
        return 1;
    } catch (...) {
        std::fprintf(stderr, "mantissa-cli %s: unknown error\n", name.c_str());
        return 1;
    }
}

} // namespace

int main(int argc, char** argv) {
    try {
        if (argc < 2) {
            print_usage(stderr);
            return 2;
        }
        const std::string first = argv[1];
        if (first == "--help" || first == "-h" || first == "help") {
            print_usage(stdout);
            return 0;
        }
        if (first == "--version") {
            std::printf("mantissa-cli %s\n", MANTISSA_VERSION);
            return 0;
        }
        const Args args(argv + 2, argv + argc);
        for (const Command& command : kCommands)
            if (first == command.name) return run_command(command, args);
        std::fprintf(stderr, "mantissa-cli: unknown command '%s'\nTry 'mantissa-cli --help'.\n",
                     first.c_str());
        return 2;
    } catch (...) { // only allocation can throw out here
        std::fputs("mantissa-cli: out of memory\n", stderr);
        return 1;
    }
}
