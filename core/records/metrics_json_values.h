// JSON values the metrics writer (JSONL) and the metrics exporter (JSON) spell the same way: a
// double as a number or null (JSON has no NaN), and memory by category with its total.
#pragma once

#include <cmath>
#include <cstddef>

#include "core/tensor/memory_category.h"

namespace mantissa {

// Json is nlohmann::json or nlohmann::ordered_json: the writer keeps keys sorted, the export
// keeps them in the order a reader expects.
template <typename Json>
Json json_number(double value) {
    return std::isfinite(value) ? Json(value) : Json(nullptr);
}

template <typename Json>
Json memory_json(const MemoryByCategory& memory) {
    Json out = Json::object();
    for (std::size_t i = 0; i < kMemCategoryCount; ++i)
        out[mem_category_name(static_cast<MemCategory>(i))] = memory.bytes[i];
    out["total"] = memory.total();
    return out;
}

} // namespace mantissa
