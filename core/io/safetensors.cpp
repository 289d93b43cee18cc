// safetensors writer and strict reader. The header is padded with spaces to a multiple of 8 bytes
// (as the reference implementation does) so every tensor's data starts 8-byte aligned.
#include "core/io/safetensors.h"

#include <cstdint>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/io/json_depth.h"

namespace mantissa {

namespace {

using ojson = nlohmann::ordered_json;

struct DtypeName {
    DType dtype;
    const char* name;
};
constexpr DtypeName kDtypeNames[] = {
    {DType::Float64, "F64"},   {DType::Float32, "F32"},        {DType::Float16, "F16"},
    {DType::BFloat16, "BF16"}, {DType::Float8E4M3, "F8_E4M3"}, {DType::Float8E5M2, "F8_E5M2"},
    {DType::UInt8, "U8"},      {DType::Int32, "I32"},
};

} // namespace

std::string safetensors_dtype_name(DType dtype) {
    for (const DtypeName& d : kDtypeNames)
        if (d.dtype == dtype) return d.name;
    throw Error(ErrorKind::Internal,
                "no safetensors name for dtype " + std::string(dtype_name(dtype)));
}

void write_safetensors(const ModelWeights& weights,
                       const std::map<std::string, std::string>& metadata, const std::string& path,
                       std::optional<DType> dtype) {
    std::vector<WeightTensor> converted_tensors;
    const std::vector<WeightTensor>* tensors = &weights.tensors;
    if (dtype) {
        for (const WeightTensor& t : weights.tensors)
            converted_tensors.push_back(converted(t, *dtype));
        tensors = &converted_tensors;
    }
    ojson header = ojson::object();
    ojson meta = ojson::object();
    for (const auto& [key, value] : metadata) meta[key] = value;
    header["__metadata__"] = meta;
    std::uint64_t offset = 0;
    for (const WeightTensor& t : *tensors) {
        header[t.name] = {{"dtype", safetensors_dtype_name(t.dtype)},
                          {"shape", t.shape},
                          {"data_offsets", {offset, offset + t.data.size()}}};
        offset += t.data.size();
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(text.size() >> (8 * i));

    write_file_atomic(path, [&](const ByteSink& sink) {
        sink(std::string_view(reinterpret_cast<const char*>(length), 8));
        sink(text);
        for (const WeightTensor& t : *tensors)
            sink(std::string_view(reinterpret_cast<const char*>(t.data.data()), t.data.size()));
    });
}

SafetensorsFile read_safetensors(const std::string& path) {
    const std::string bytes = read_file(path);
    auto fail = [&](const std::string& what) -> void {
        throw Error(ErrorKind::Config, path + ": " + what);
    };
    if (bytes.size() < 8)
        fail("the file is " + std::to_string(bytes.size()) +
             " bytes; a safetensors file starts with an 8-byte header length (truncated?)");
    std::uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i)
        header_len =
            (header_len << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    if (header_len > bytes.size() - 8)
        fail("the header length says " + std::to_string(header_len) + " bytes but only " +
             std::to_string(bytes.size() - 8) +
             " follow: the file is truncated or not a safetensors file");
    const std::string_view header_text(bytes.data() + 8, static_cast<std::size_t>(header_len));
    if (json_nesting_depth(header_text) > kMaxJsonDepth)
        fail("the header nests deeper than " + std::to_string(kMaxJsonDepth) +
             " levels; a safetensors header is a flat object of tensors");
    ojson header;
    try {
        header = ojson::parse(header_text);
    } catch (const nlohmann::json::exception& e) {
        fail(std::string("the header is not valid JSON: ") + e.what());
    }
    if (!header.is_object()) fail("the header is not a JSON object");

    SafetensorsFile out;
    const std::size_t data_start = 8 + static_cast<std::size_t>(header_len);
    const std::uint64_t data_size = bytes.size() - data_start;
    for (const auto& [key, value] : header.items()) {
        if (key == "__metadata__") {
            if (!value.is_object()) fail("__metadata__ must be an object of strings");
            for (const auto& [mk, mv] : value.items()) {
                if (!mv.is_string()) fail("__metadata__." + mk + " must be a string");
                out.metadata[mk] = mv.get<std::string>();
            }
            continue;
        }
        const std::string where = "tensor '" + key + "': ";
        if (!value.is_object()) fail(where + "expected an object with dtype, shape, data_offsets");
        if (!value.contains("dtype") || !value["dtype"].is_string())
            fail(where + "missing the string field 'dtype'");
        const std::string dname = value["dtype"].get<std::string>();
        WeightTensor t;
        t.name = key;
        bool known = false;
        for (const DtypeName& d : kDtypeNames)
            if (dname == d.name) {
                t.dtype = d.dtype;
                known = true;
            }
        if (!known)
            fail(where + "dtype '" + dname +
                 "' is not one Mantissa reads (F64, F32, F16, BF16, F8_E4M3, F8_E5M2, U8, I32)");
        if (!value.contains("shape") || !value["shape"].is_array())
            fail(where + "missing the array field 'shape'");
        for (const auto& dim : value["shape"]) {
            if (!dim.is_number_integer() || dim.get<std::int64_t>() < 0)
                fail(where + "shape " + value["shape"].dump() + " must hold non-negative integers");
            t.shape.push_back(dim.get<std::int64_t>());
        }
        const auto& offsets = value.contains("data_offsets") ? value["data_offsets"] : ojson();
        if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
            !offsets[1].is_number_unsigned())
            fail(where + "'data_offsets' must be [begin, end]");
        const std::uint64_t begin = offsets[0].get<std::uint64_t>();
        const std::uint64_t end = offsets[1].get<std::uint64_t>();
        // Multiplied with a bound (int64, what numel() and every consumer use): a crafted shape
        // must not overflow numel() (undefined behaviour) or wrap the byte count to match a tiny
        // data_offsets span, which would load a tensor with far fewer bytes than its shape says.
        std::uint64_t want = dtype_size(t.dtype);
        for (const std::int64_t dim : t.shape) {
            const auto d = static_cast<std::uint64_t>(dim); // >= 0, checked above
            if (d != 0 && want > static_cast<std::uint64_t>(INT64_MAX) / d)
                fail(where + "shape " + value["shape"].dump() + " of " + dname +
                     " has more bytes than a 64-bit size can count");
            want *= d;
        }
        if (end < begin || end - begin != want)
            fail(where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                 "] span " + std::to_string(end >= begin ? end - begin : 0) + " bytes, but " +
                 dname + " " + value["shape"].dump() + " needs " + std::to_string(want));
        if (end > data_size)
            fail(where + "its data ends at byte " + std::to_string(end) +
                 " of the data, but the "
                 "file holds only " +
                 std::to_string(data_size) + " data bytes: the file is truncated");
        t.data.resize(static_cast<std::size_t>(want));
        if (want) std::memcpy(t.data.data(), bytes.data() + data_start + begin, want);
        out.weights.tensors.push_back(std::move(t));
    }
    return out;
}

} // namespace mantissa
