// Bulk conversions between a dtype's storage and float32 / float64 working arrays.
// The CPU backend loads operands with these, computes in float32 (float64 for float64), and stores
// back.
#pragma once

#include <cstddef>

#include "core/numeric/dtype.h"

namespace mantissa {

// dst[i] = exact value of src[i] (src stored as `src_dtype`; uint8/int32 convert by value).
void convert_to_float(const void* src, DType src_dtype, float* dst, std::size_t count);
void convert_to_double(const void* src, DType src_dtype, double* dst, std::size_t count);
// dst[i] = src[i] rounded once to `dst_dtype` (nearest even; IEEE overflow), stored as its bits.
void convert_from_float(const float* src, void* dst, DType dst_dtype, std::size_t count);
void convert_from_double(const double* src, void* dst, DType dst_dtype, std::size_t count);
// Any dtype to any dtype with a single rounding (via float64, which holds every narrower value).
void convert(const void* src, DType src_dtype, void* dst, DType dst_dtype, std::size_t count);
// data[i] = round_to_dtype(data[i], dtype) in place, staying in float32: emulates a float32
// result being stored in `dtype`. A no-op for float32 and float64.
void round_in_place(float* data, std::size_t count, DType dtype);

} // namespace mantissa
