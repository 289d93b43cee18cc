// DType: the element types Mantissa knows, their names, sizes and classes.
// 16- and 8-bit floats are stored as their bit patterns (uint16_t / uint8_t) on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mantissa {

enum class DType : std::uint8_t {
    Float64,
    Float32,
    Float16,
    BFloat16,
    Float8E4M3, // OCP FP8 E4M3 ("e4m3fn"): max 448, no infinity, NaN = S.1111.111
    Float8E5M2, // OCP FP8 E5M2: max 57344, IEEE-like infinities and NaNs
    UInt8,      // data (MNIST pixels)
    Int32,      // labels and indices
};

// "float64", "float32", "float16", "bfloat16", "float8_e4m3", "float8_e5m2", "uint8", "int32"
std::string_view dtype_name(DType dtype);
// Parses a name (also accepts "fp16", "bf16", "e4m3", ...); throws Error(Config) listing valid
// names.
DType dtype_from_name(std::string_view name);
std::size_t dtype_size(DType dtype);
bool is_floating(DType dtype);
// The float formats narrower than float32 that the CPU engine emulates bit for bit.
bool is_emulated_float(DType dtype);
// The floating dtypes in display order: float64, float32, float16, bfloat16, e4m3, e5m2.
const std::vector<DType>& floating_dtypes();

} // namespace mantissa
