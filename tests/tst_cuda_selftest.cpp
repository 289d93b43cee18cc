// The GPU self-test's op-parity harness (core/check's op table), run where no GPU exists:
// `selftest --self-parity` puts a second CPU engine in the GPU's place, so every op x dtype must
// run and agree exactly. A broken
// shape or a missing tensor in the harness fails here instead of on a borrowed GPU.
#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/cli.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa::unit;

class TestCudaSelftest {
public:
    void harness_runs_every_op_and_agrees_with_itself() {
        const auto run = run_cli({"selftest", "--self-parity"});
        CHECK_MSG(run.status == 0, run.out + run.err);
        CHECK_MSG(!contains(run.out, "FAIL"), run.out);
        for (const char* op :
             {"gemm+bias+gelu", "gemm dW", "gemm dX", "bias_grad", "activation softmax",
              "softmax_cross_entropy", "maxpool", "conv2d", "dropout", "exponent_histogram",
              "unscale+adam", "unscale+rmsprop", "mlp step"})
            CHECK_MSG(contains(run.out, op), op);
        for (const char* dtype : {"float64", "float32", "float16", "bfloat16"})
            CHECK_MSG(contains(run.out, dtype), dtype);
        // Two instances of one engine: every error is exactly zero. The error is the column
        // after the dtype (op lines) or the policy (training lines).
        const std::vector<std::string> lines = split_lines(run.out);
        const std::vector<std::string> dtypes = {"float64",      "float32",       "float16",
                                                 "bfloat16",     "mixed_float16", "mixed_bfloat16",
                                                 "mixed_float8", "mxfp8_e4m3",    "nvfp4"};
        int rows = 0;
        for (const std::string& line : lines) {
            if (!line.ends_with(" ok")) continue;
            std::vector<std::string> cols;
            std::istringstream words(line);
            for (std::string word; words >> word;) cols.push_back(word);
            std::ptrdiff_t at = -1;
            for (std::size_t i = 0; i < cols.size(); ++i)
                if (std::find(dtypes.begin(), dtypes.end(), cols[i]) != dtypes.end())
                    at = static_cast<std::ptrdiff_t>(i);
            CHECK_MSG(at >= 0 && static_cast<std::size_t>(at) + 1 < cols.size(), line);
            const std::string& error = cols[static_cast<std::size_t>(at) + 1];
            char* end = nullptr;
            const double value = std::strtod(error.c_str(), &end);
            const bool number = !error.empty() && end == error.c_str() + error.size();
            CHECK_EQ(number ? value : 0.0, 0.0);
            CHECK_MSG(number, line);
            ++rows;
        }
        CHECK_MSG(rows >= 4 * 20, std::to_string(rows));
        // The quantised policies' training steps are compared too (exactly, here).
        for (const char* policy : {"mixed_float8", "mxfp8_e4m3", "nvfp4"}) {
            const bool found = std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
                return l.starts_with("mlp step") && contains(l, policy) && l.ends_with(" ok");
            });
            CHECK_MSG(found, policy);
        }
    }
};

MANTISSA_TEST_MAIN(TestCudaSelftest, harness_runs_every_op_and_agrees_with_itself)
