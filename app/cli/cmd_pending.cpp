// PLACEHOLDER (to be replaced): the subcommands and main() not yet written.
// Exists only so that mantissa-cli links while its parts are written in parallel.
#include <cstdio>

#include "app/cli/commands.h"

namespace mantissa::cli {
int run_train(const Args&) { std::puts("train: not implemented yet"); return 1; }
int run_bench(const Args&) { std::puts("bench: not implemented yet"); return 1; }
int run_cast(const Args&) { std::puts("cast: not implemented yet"); return 1; }
int run_policies(const Args&) { std::puts("policies: not implemented yet"); return 1; }
int run_selftest(const Args&) { std::puts("selftest: not implemented yet"); return 1; }
} // namespace mantissa::cli

int main() { return 1; }
