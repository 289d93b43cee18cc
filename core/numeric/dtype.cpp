// DType names, sizes and classes.
// Aliases ("fp16", "bf16", "half") are accepted on input; output always uses the canonical names.
#include "core/numeric/dtype.h"

#include "core/error.h"

namespace mantissa {

std::string_view dtype_name(DType dtype) {
    switch (dtype) {
    case DType::Float64:
        return "float64";
    case DType::Float32:
        return "float32";
    case DType::Float16:
        return "float16";
    case DType::BFloat16:
        return "bfloat16";
    case DType::Float8E4M3:
        return "float8_e4m3";
    case DType::Float8E5M2:
        return "float8_e5m2";
    case DType::UInt8:
        return "uint8";
    case DType::Int32:
        return "int32";
    }
    return "?";
}

DType dtype_from_name(std::string_view name) {
    struct Alias {
        std::string_view name;
        DType dtype;
    };
    static const Alias aliases[] = {
        {"float64", DType::Float64},
        {"f64", DType::Float64},
        {"fp64", DType::Float64},
        {"double", DType::Float64},
        {"float32", DType::Float32},
        {"f32", DType::Float32},
        {"fp32", DType::Float32},
        {"float", DType::Float32},
        {"float16", DType::Float16},
        {"f16", DType::Float16},
        {"fp16", DType::Float16},
        {"half", DType::Float16},
        {"bfloat16", DType::BFloat16},
        {"bf16", DType::BFloat16},
        {"float8_e4m3", DType::Float8E4M3},
        {"e4m3", DType::Float8E4M3},
        {"fp8_e4m3", DType::Float8E4M3},
        {"float8_e4m3fn", DType::Float8E4M3},
        {"float8_e5m2", DType::Float8E5M2},
        {"e5m2", DType::Float8E5M2},
        {"fp8_e5m2", DType::Float8E5M2},
        {"uint8", DType::UInt8},
        {"int32", DType::Int32},
    };
    for (const Alias& alias : aliases)
        if (alias.name == name) return alias.dtype;
    throw Error(ErrorKind::Config, "unknown dtype '" + std::string(name) +
                                       "'; valid dtypes: float64, float32, float16, bfloat16, "
                                       "float8_e4m3, float8_e5m2");
}

std::size_t dtype_size(DType dtype) {
    switch (dtype) {
    case DType::Float64:
        return 8;
    case DType::Float32:
        return 4;
    case DType::Float16:
    case DType::BFloat16:
        return 2;
    case DType::Float8E4M3:
    case DType::Float8E5M2:
    case DType::UInt8:
        return 1;
    case DType::Int32:
        return 4;
    }
    return 0;
}

bool is_floating(DType dtype) {
    return dtype != DType::UInt8 && dtype != DType::Int32;
}

bool is_emulated_float(DType dtype) {
    return dtype == DType::Float16 || dtype == DType::BFloat16 || dtype == DType::Float8E4M3 ||
           dtype == DType::Float8E5M2;
}

const std::vector<DType>& floating_dtypes() {
    static const std::vector<DType> all = {DType::Float64,  DType::Float32,    DType::Float16,
                                           DType::BFloat16, DType::Float8E4M3, DType::Float8E5M2};
    return all;
}

} // namespace mantissa
