// libFuzzer target for the safetensors importer (core/io/safetensors.*): any bytes must load or
// throw mantissa::Error(Config); every tensor that loads must hold exactly numel × dtype bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/error.h"
#include "core/io/safetensors.h"
#include "core/records/trained_model.h"
#include "fuzz/fuzz_input_file.h"

namespace {

// The bytes a tensor must hold, or false when numel × dtype size does not fit in 64 bits.
bool tensor_bytes(const mantissa::WeightTensor& t, std::uint64_t& bytes) {
    std::uint64_t n = mantissa::dtype_size(t.dtype);
    for (std::int64_t d : t.shape)
        if (d < 0 || __builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n)) return false;
    bytes = n;
    return true;
}

void check(const mantissa::ModelWeights& weights) {
    for (const mantissa::WeightTensor& t : weights.tensors) {
        std::uint64_t bytes = 0;
        if (!tensor_bytes(t, bytes) || bytes != t.data.size()) std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static mantissa::fuzz::InputFile file;
    const std::string& path = file.write(data, size);
    try {
        check(mantissa::read_safetensors(path).weights);
    } catch (const mantissa::Error& e) {
        if (e.kind() != mantissa::ErrorKind::Config) std::abort();
    }
    // The import the CLI's eval/export and the GUI use: the weights plus the experiment JSON in the
    // metadata, so experiment_from_json is reached through this path too.
    try {
        check(mantissa::load_trained_model(path).weights);
    } catch (const mantissa::Error& e) {
        if (e.kind() != mantissa::ErrorKind::Config) std::abort();
    }
    return 0;
}
