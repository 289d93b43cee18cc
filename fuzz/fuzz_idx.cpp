// libFuzzer target for the IDX reader (core/data/idx.*): any bytes must either load or throw
// mantissa::Error(Data); never crash, hang, leak or allocate more than the file could hold.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/data/idx.h"
#include "core/error.h"
#include "fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static mantissa::fuzz::InputFile file;
    const std::string& path = file.write(data, size);
    // MNIST uses rank 3 (images) and rank 1 (labels); rank 2 covers the general case.
    for (int rank : {1, 2, 3}) {
        try {
            const mantissa::IdxArray a = mantissa::read_idx_u8(path, rank);
            // A successful read must describe exactly the bytes after the header.
            std::size_t elements = 1;
            for (std::int64_t d : a.dims) elements *= static_cast<std::size_t>(d);
            if (a.dims.size() != static_cast<std::size_t>(rank) || a.data.size() != elements ||
                4 + 4 * static_cast<std::size_t>(rank) + elements != size)
                std::abort();
        } catch (const mantissa::Error& e) {
            if (e.kind() != mantissa::ErrorKind::Data) std::abort();
        }
    }
    return 0;
}
