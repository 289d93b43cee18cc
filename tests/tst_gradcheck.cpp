// Float64 finite-difference gradient checks for every layer type, through the real Plan.
// Each model puts the layer under test between trainable layers, so input gradients are checked
// too.

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/nn/model.h"
#include "core/plan/compile.h"
#include "tests/test_support.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {

// A number with 10 significant digits, for the failure message.
std::string g10(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", value);
    return text;
}

} // namespace

class TestGradcheck {
public:
    void layers_data();
    void layers();
    void paddingRowsGetNoGradient_data();
    void paddingRowsGetNoGradient();
};

void TestGradcheck::layers_data() {
    add_column<ModelSpec>("spec");
    auto model = [](std::vector<LayerSpec> layers) {
        ModelSpec m;
        m.layers = std::move(layers);
        return m;
    };
    new_row("dense linear") << model({flatten(), dense(5), dense(10)});
    new_row("dense relu") << model({flatten(), dense(6, Activation::Relu), dense(10)});
    new_row("dense gelu") << model({flatten(), dense(6, Activation::Gelu), dense(10)});
    new_row("dense tanh") << model({flatten(), dense(6, Activation::Tanh), dense(10)});
    new_row("dense sigmoid") << model({flatten(), dense(6, Activation::Sigmoid), dense(10)});
    new_row("dense softmax (fused into the loss)")
        << model({flatten(), dense(7), dense(10, Activation::Softmax)});
    new_row("activation relu") << model(
        {flatten(), dense(6), activation(Activation::Relu), dense(10)});
    new_row("activation gelu") << model(
        {flatten(), dense(6), activation(Activation::Gelu), dense(10)});
    new_row("activation tanh") << model(
        {flatten(), dense(6), activation(Activation::Tanh), dense(10)});
    new_row("activation sigmoid") << model(
        {flatten(), dense(6), activation(Activation::Sigmoid), dense(10)});
    new_row("activation softmax (inside)")
        << model({flatten(), dense(6), activation(Activation::Softmax), dense(10)});
    new_row("activation softmax (final)")
        << model({flatten(), dense(10), activation(Activation::Softmax)});
    new_row("dropout") << model({flatten(), dense(8), dropout(0.3), dense(10)});
    new_row("conv2d valid relu") << model({conv(3, 3, Activation::Relu), flatten(), dense(10)});
    new_row("conv2d same stride 2 tanh")
        << model({conv(2, 3, Activation::Tanh, 2, "same"), flatten(), dense(10)});
    new_row("conv2d into conv2d") << model(
        {conv(2, 3), conv(3, 5, Activation::Gelu, 2), flatten(), dense(10)});
    new_row("maxpool2d") << model({conv(2, 3), maxpool(2), flatten(), dense(10)});
    new_row("maxpool2d 3x3") << model({conv(2, 1), maxpool(3), flatten(), dense(10)});
    // Between two trainable layers, so dX reaches the first one; gamma and beta are checked too.
    new_row("batch normalization (dense)")
        << model({flatten(), dense(6), batchnorm(), activation(Activation::Tanh), dense(10)});
    new_row("batch normalization (conv2d, per channel over N·H·W)")
        << model({conv(3, 3), batchnorm(0.9, 1e-2), flatten(), dense(10)});
    new_row("batch normalization first (no dX)") << model({flatten(), batchnorm(), dense(10)});
    new_row("layer normalization (dense)")
        << model({flatten(), dense(6), layernorm(), activation(Activation::Tanh), dense(10)});
    new_row("layer normalization (conv2d, over channels)")
        << model({conv(4, 3), layernorm(1e-2), flatten(), dense(10)});
}

void TestGradcheck::layers() {
    FETCH(ModelSpec, spec);
    CpuBackend backend;
    const Policy policy = policy_from_name("float64");
    Model model(spec, policy);
    CompileOptions options;
    options.policy = policy;
    options.batch_size = 3;
    options.optimizer = optimizer_defaults(OptimizerType::SGD);
    std::unique_ptr<Plan> plan = compile(model, options, backend);
    plan->initialize(backend, 7);

    const MnistSplit split = synthetic_mnist_split(4, 3);
    DeviceSplit data(backend, split);
    RunContext ctx;
    ctx.training = true;
    ctx.step = 5;
    ctx.seed = 9;
    ctx.batch = data.batch(0, 3);

    Tensor& scalars = plan->tensor(plan->scalars);
    auto loss = [&] {
        plan->forward_backward(backend, ctx);
        StepScalars s = backend.read_scalars(scalars);
        return s.loss_sum / static_cast<double>(s.examples);
    };
    // Analytic gradients at the unperturbed point, all read before any finite difference runs.
    loss();
    std::vector<std::vector<double>> analytic_grads;
    for (const PlanParam& param : plan->params) {
        const Tensor& grad = plan->tensor(param.grad);
        analytic_grads.emplace_back(static_cast<std::size_t>(grad.numel()));
        backend.download(grad, analytic_grads.back().data());
    }
    int checked = 0;
    for (std::size_t p = 0; p < plan->params.size(); ++p) {
        const PlanParam& param = plan->params[p];
        Tensor& var = plan->tensor(param.variable);
        const std::vector<double>& analytic = analytic_grads[p];
        std::vector<double> values(static_cast<std::size_t>(var.numel()));
        backend.download(var, values.data());
        // A spread of elements per tensor keeps the test fast and still touches every row.
        const std::size_t stride = std::max<std::size_t>(1, values.size() / 23);
        for (std::size_t i = 0; i < values.size(); i += stride) {
            const double h = 1e-5, saved = values[i];
            values[i] = saved + h;
            backend.upload(values.data(), var);
            const double up = loss();
            values[i] = saved - h;
            backend.upload(values.data(), var);
            const double down = loss();
            values[i] = saved;
            backend.upload(values.data(), var);
            const double numeric = (up - down) / (2 * h);
            const double error = std::abs(numeric - analytic[i]) /
                                 std::max(1e-3, std::abs(numeric) + std::abs(analytic[i]));
            if (error > 1e-6)
                FAIL_TEST(param.name + "[" + std::to_string(i) + "]: analytic " + g10(analytic[i]) +
                          ", numeric " + g10(numeric));
            ++checked;
        }
    }
    CHECK(checked > 20);
}

void TestGradcheck::paddingRowsGetNoGradient_data() {
    add_column<ModelSpec>("spec");
    ModelSpec m;
    m.layers = {flatten(), dense(4, Activation::Tanh), dense(10)};
    new_row("dense") << m;
    // BatchNormalization mixes rows: padding must stay out of its statistics and sums.
    m.layers = {flatten(), dense(4), batchnorm(), activation(Activation::Tanh), dense(10)};
    new_row("batch normalization") << m;
    m.layers = {conv(2, 3), batchnorm(), flatten(), dense(10)};
    new_row("batch normalization after conv2d") << m;
}

void TestGradcheck::paddingRowsGetNoGradient() {
    // A last, partial batch is padded; padded rows must not change the gradient.
    FETCH(ModelSpec, spec);
    CpuBackend backend;
    const Policy policy = policy_from_name("float64");
    Model model(spec, policy);
    CompileOptions options;
    options.policy = policy;
    options.optimizer = optimizer_defaults(OptimizerType::SGD);
    options.batch_size = 2;
    auto small = compile(model, options, backend);
    options.batch_size = 5;
    auto padded = compile(model, options, backend);
    small->initialize(backend, 1);
    padded->initialize(backend, 1);
    DeviceSplit data(backend, synthetic_mnist_split(6, 4));
    RunContext ctx;
    ctx.batch = data.batch(0, 2);
    small->forward_backward(backend, ctx);
    padded->forward_backward(backend, ctx);
    for (std::size_t p = 0; p < small->params.size(); ++p) {
        const Tensor& a = small->tensor(small->params[p].grad);
        const Tensor& b = padded->tensor(padded->params[p].grad);
        for (std::int64_t i = 0; i < a.numel(); ++i)
            CHECK(std::abs(a.as<double>()[i] - b.as<double>()[i]) <=
                  1e-14 * (1 + std::abs(a.as<double>()[i])));
    }
}

MANTISSA_TEST_MAIN(TestGradcheck, layers, paddingRowsGetNoGradient)
