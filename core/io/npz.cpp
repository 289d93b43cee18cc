// NPZ writer: .npy headers by hand (a Python-literal dict) inside a stored ZIP from zip_writer.
// Widening bfloat16 / float8 to float32 is exact, so NumPy users see the trained values unchanged.
#include "core/io/npz.h"

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/io/zip_writer.h"

namespace mantissa {

namespace {

bool numpy_has(DType dtype) {
    return dtype == DType::Float64 || dtype == DType::Float32 || dtype == DType::Float16 ||
           dtype == DType::UInt8 || dtype == DType::Int32;
}

const char* numpy_descr(DType dtype) {
    switch (dtype) {
    case DType::Float64:
        return "<f8";
    case DType::Float32:
        return "<f4";
    case DType::Float16:
        return "<f2";
    case DType::UInt8:
        return "|u1";
    case DType::Int32:
        return "<i4";
    default:
        break;
    }
    throw Error(ErrorKind::InvalidArgument,
                "NumPy has no " + std::string(dtype_name(dtype)) +
                    " dtype; export NPZ as float32, float16 or float64 (or use safetensors)");
}

} // namespace

std::string npy_header(DType dtype, const Shape& shape) {
    std::string dict =
        std::string("{'descr': '") + numpy_descr(dtype) + "', 'fortran_order': False, 'shape': (";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) dict += ", ";
        dict += std::to_string(shape[i]);
    }
    if (shape.size() == 1) dict += ",";
    dict += "), }";
    // magic (6) + version (2) + header length (2) + dict + padding + '\n' = a multiple of 64.
    const std::size_t unpadded = 10 + dict.size() + 1;
    dict.append((64 - unpadded % 64) % 64, ' ');
    dict += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    out.push_back(static_cast<char>(dict.size() & 0xFF));
    out.push_back(static_cast<char>((dict.size() >> 8) & 0xFF));
    return out + dict;
}

void write_npz(const ModelWeights& weights, const std::string& path, std::optional<DType> dtype) {
    if (dtype) numpy_descr(*dtype); // reject bfloat16 / float8 before writing anything
    std::vector<WeightTensor> tensors;
    for (const WeightTensor& t : weights.tensors) {
        const DType target = dtype ? *dtype : (numpy_has(t.dtype) ? t.dtype : DType::Float32);
        tensors.push_back(converted(t, target));
    }
    write_file_atomic(path, [&](const ByteSink& sink) {
        ZipWriter zip(sink);
        for (const WeightTensor& t : tensors) {
            const std::string header = npy_header(t.dtype, t.shape);
            zip.add(t.name + ".npy",
                    {header, std::string_view(reinterpret_cast<const char*>(t.data.data()),
                                              t.data.size())});
        }
        zip.finish();
    });
}

} // namespace mantissa
