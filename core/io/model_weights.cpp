// Host-side weights: lookup by name, the exported name of a plan parameter, and dtype conversion
// with one rounding (what every export and import uses).
#include "core/io/model_weights.h"

#include <algorithm>

#include "core/error.h"
#include "core/numeric/convert.h"

namespace mantissa {

const WeightTensor* ModelWeights::find(const std::string& name) const {
    for (const WeightTensor& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

std::int64_t ModelWeights::total_bytes() const {
    std::int64_t total = 0;
    for (const WeightTensor& t : tensors) total += static_cast<std::int64_t>(t.data.size());
    return total;
}

std::string exported_weight_name(const std::string& param_name) {
    std::string out = param_name;
    std::replace(out.begin(), out.end(), '/', '.');
    return out;
}

WeightTensor converted(const WeightTensor& tensor, DType dtype) {
    if (!is_floating(dtype))
        throw Error(ErrorKind::InvalidArgument, "cannot convert weights to " +
                                                    std::string(dtype_name(dtype)) +
                                                    ": choose a floating dtype");
    if (tensor.dtype == dtype) return tensor;
    WeightTensor out;
    out.name = tensor.name;
    out.dtype = dtype;
    out.shape = tensor.shape;
    const auto count = static_cast<std::size_t>(tensor.numel());
    out.data.resize(count * dtype_size(dtype));
    convert(tensor.data.data(), tensor.dtype, out.data.data(), dtype, count);
    return out;
}

std::vector<double> values_as_double(const WeightTensor& tensor) {
    std::vector<double> out(static_cast<std::size_t>(tensor.numel()));
    convert_to_double(tensor.data.data(), tensor.dtype, out.data(), out.size());
    return out;
}

} // namespace mantissa
