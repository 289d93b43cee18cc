// Loss-scaler tests: exact scale sequences for synthetic finite/non-finite steps, through both the
// pure state machine and CpuBackend's finish_step, plus unscale_and_check_finite across dtypes.

#include "tests/host_tensor.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/numeric/half.h"
#include "core/numeric/policy.h"
#include "core/optim/loss_scale.h"
#include "core/optim/loss_scale_rule.h"
#include "core/optim/optimizer_config.h"
#include "tests/unit/check_throws.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

using mantissa::test::HostScalars;
using mantissa::test::HostTensor;

namespace {

LossScaleConfig dynamic(double initial, int interval, double factor = 2.0, double min = 1.0) {
    return {LossScaleMode::Dynamic, initial, interval, factor, min};
}

// The scale the state starts from, as the trainer sets it (none: 1).
double initial_scale(const LossScaleConfig& config) {
    return config.mode == LossScaleMode::None ? 1.0 : config.initial;
}

// One step through the backend: begin, unscale a few gradients (one holds an inf when
// `nonfinite`), finish. Returns the scalars after finish_step.
StepScalars backend_step(CpuBackend& backend, HostScalars& scalars, const LossScaleConfig& config,
                         bool nonfinite) {
    HostTensor g1(DType::Float32, {1.0, -2.0, 0.5});
    HostTensor g2(DType::Float16, {4.0, nonfinite ? INFINITY : 8.0});
    Tensor* grads[] = {&g1.tensor, &g2.tensor};
    backend.begin_step(scalars.tensor);
    backend.unscale_and_check_finite(grads, scalars.tensor);
    backend.finish_step(config, scalars.tensor);
    return backend.read_scalars(scalars.tensor);
}

std::string g17(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

// QCOMPARE on doubles is fuzzy (1e-12 relative); loss scales must match exactly.
#define COMPARE_EXACT(actual, expected)                                                            \
    CHECK_MSG(double(actual) == double(expected),                                                  \
              std::string(#actual) + " is " + g17(double(actual)) + ", expected exactly " +        \
                  g17(double(expected)))

const double kTwo126 = std::ldexp(1.0, 126);
const double kTwo127 = std::ldexp(1.0, 127);

} // namespace

class TestLossScaler {
public:
    void presets() {
        const LossScaleConfig keras = keras_loss_scale();
        CHECK_EQ(keras.mode, LossScaleMode::Dynamic);
        CHECK_EQ(keras.initial, 32768.0);
        CHECK_EQ(keras.growth_interval, 2000);
        CHECK_EQ(keras.factor, 2.0);
        CHECK_EQ(keras.min, 1.0);
        const LossScaleConfig torch = pytorch_loss_scale();
        CHECK_EQ(torch.mode, LossScaleMode::Dynamic);
        CHECK_EQ(torch.initial, 65536.0);
        CHECK_EQ(torch.growth_interval, 2000);
        CHECK_EQ(torch.factor, 2.0);
        CHECK_EQ(torch.min, 0.0);
        validate_loss_scale(keras);
        validate_loss_scale(torch);
    }

    void names() {
        for (LossScaleMode mode : {LossScaleMode::Auto, LossScaleMode::None, LossScaleMode::Fixed,
                                   LossScaleMode::Dynamic})
            CHECK_EQ(loss_scale_mode_from_name(loss_scale_mode_name(mode)), mode);
        CHECK_EQ(loss_scale_mode_from_name("Dynamic"), LossScaleMode::Dynamic);
        CHECK_EQ(loss_scale_mode_name(LossScaleMode::Fixed), "fixed");
        try {
            loss_scale_mode_from_name("static");
            FAIL_TEST("no error");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Config);
            CHECK_MSG(std::strstr(e.what(), "static") && std::strstr(e.what(), "dynamic"),
                      e.what());
        }
    }

    // Auto: dynamic (with the config's own values) for float16 compute, none otherwise.
    void resolveAuto_data() {
        add_column<std::string>("policy");
        add_column<bool>("dynamic");
        new_row("float32") << "float32" << false;
        new_row("float64") << "float64" << false;
        new_row("float16") << "float16" << true;
        new_row("mixed_float16") << "mixed_float16" << true;
        new_row("bfloat16") << "bfloat16" << false;
        new_row("mixed_bfloat16") << "mixed_bfloat16" << false;
    }
    void resolveAuto() {
        FETCH(std::string, policy);
        FETCH(bool, dynamic);
        LossScaleConfig config;
        config.initial = 1024.0;
        config.growth_interval = 7;
        const LossScaleConfig resolved = resolve_loss_scale(config, policy_from_name(policy));
        CHECK_EQ(resolved.mode, dynamic ? LossScaleMode::Dynamic : LossScaleMode::None);
        CHECK_EQ(resolved.initial, 1024.0);
        CHECK_EQ(resolved.growth_interval, 7);
        // An explicit mode is kept whatever the policy.
        config.mode = LossScaleMode::Fixed;
        CHECK_EQ(resolve_loss_scale(config, policy_from_name(policy)).mode, LossScaleMode::Fixed);
    }

    void validation_data() {
        add_column<LossScaleConfig>("config");
        add_column<std::string>("field");
        new_row("initial 0") << dynamic(0.0, 2000) << "loss_scale.initial";
        new_row("initial nan") << dynamic(std::nan(""), 2000) << "loss_scale.initial";
        new_row("initial 1e39") << dynamic(1e39, 2000) << "loss_scale.initial";
        new_row("interval 0") << dynamic(1024, 0) << "loss_scale.growth_interval";
        new_row("factor 1") << dynamic(1024, 10, 1.0) << "loss_scale.factor";
        new_row("min -1") << dynamic(1024, 10, 2.0, -1.0) << "loss_scale.min";
        new_row("min > initial") << dynamic(1024, 10, 2.0, 4096.0) << "loss_scale.min";
        new_row("fixed 0") << LossScaleConfig{LossScaleMode::Fixed, 0.0, 2000, 2.0, 1.0}
                           << "loss_scale.initial";
    }
    void validation() {
        FETCH(LossScaleConfig, config);
        FETCH(std::string, field);
        try {
            validate_loss_scale(config);
            FAIL_TEST("no error");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Config);
            CHECK_MSG(std::string_view(e.what()).starts_with(field), e.what());
        }
        // none uses none of the fields
        config.mode = LossScaleMode::None;
        validate_loss_scale(config);
    }

    // `steps`: 'f' a finite step, 'x' a step with a non-finite gradient. `used` is the scale each
    // step multiplied the loss by; `skipped` a '1' per skipped step.
    void sequence_data() {
        add_column<LossScaleConfig>("config");
        add_column<std::string>("steps");
        add_column<std::vector<double>>("used");
        add_column<std::string>("skipped");
        add_column<double>("final_scale");
        add_column<std::int64_t>("final_good");

        new_row("keras 2^15, grow every 3")
            << dynamic(32768, 3) << "xxfffffxffff"
            << std::vector<double>{32768, 16384, 8192, 8192, 8192, 16384,
                                   16384, 16384, 8192, 8192, 8192, 16384}
            << "110000010000" << 16384.0 << std::int64_t(1);
        new_row("floor 1 holds") << dynamic(4, 3) << "xxxxf" << std::vector<double>{4, 2, 1, 1, 1}
                                 << "11110" << 1.0 << std::int64_t(1);
        new_row("no floor goes below 1")
            << dynamic(4, 3, 2.0, 0.0) << "xxxxx" << std::vector<double>{4, 2, 1, 0.5, 0.25}
            << "11111" << 0.125 << std::int64_t(0);
        new_row("overflow resets the good steps")
            << dynamic(64, 3) << "ffxfff" << std::vector<double>{64, 64, 64, 32, 32, 32} << "001000"
            << 64.0 << std::int64_t(0);
        new_row("factor 4, interval 2")
            << dynamic(16, 2, 4.0) << "ffxf" << std::vector<double>{16, 16, 64, 16} << "0010"
            << 16.0 << std::int64_t(1);
        new_row("interval 1 grows every finite step")
            << dynamic(1, 1) << "fffxf" << std::vector<double>{1, 2, 4, 8, 4} << "00010" << 8.0
            << std::int64_t(0);
        new_row("growth reaches 2^127") << dynamic(kTwo126, 2) << "ffff"
                                        << std::vector<double>{kTwo126, kTwo126, kTwo127, kTwo127}
                                        << "0000" << kTwo127 << std::int64_t(0);
        new_row("growth past float32 max is not applied")
            << dynamic(kTwo127, 1) << "fff" << std::vector<double>{kTwo127, kTwo127, kTwo127}
            << "000" << kTwo127 << std::int64_t(0);
        new_row("fixed never skips or changes")
            << LossScaleConfig{LossScaleMode::Fixed, 1024, 3, 2.0, 1.0} << "xfxfff"
            << std::vector<double>{1024, 1024, 1024, 1024, 1024, 1024} << "000000" << 1024.0
            << std::int64_t(0);
        new_row("none never skips or changes")
            << LossScaleConfig{LossScaleMode::None, 32768, 3, 2.0, 1.0} << "xxffff"
            << std::vector<double>{1, 1, 1, 1, 1, 1} << "000000" << 1.0 << std::int64_t(0);
    }

    void sequence() {
        FETCH(LossScaleConfig, config);
        FETCH(std::string, steps);
        FETCH(std::vector<double>, used);
        FETCH(std::string, skipped);
        FETCH(double, final_scale);
        FETCH(std::int64_t, final_good);
        CHECK_EQ(used.size(), steps.size());

        // The pure state machine.
        LossScaleState state{initial_scale(config), 0};
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const LossScaleStep step = next_loss_scale(state, steps[i] == 'x', config);
            COMPARE_EXACT(step.scale_used, used[i]);
            CHECK_EQ(step.skipped, skipped[i] == '1');
            state = step.next;
        }
        COMPARE_EXACT(state.scale, final_scale);
        CHECK_EQ(state.good_steps, std::int64_t(final_good));

        // The same through CpuBackend, with the found-inf flag raised by a real inf gradient.
        CpuBackend backend;
        HostScalars scalars;
        scalars.values.loss_scale = initial_scale(config);
        std::int64_t applied = 0, skips = 0;
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const StepScalars s = backend_step(backend, scalars, config, steps[i] == 'x');
            COMPARE_EXACT(s.scale_used, used[i]);
            CHECK_EQ(s.skipped, skipped[i] == '1' ? 1 : 0);
            (skipped[i] == '1' ? skips : applied) += 1;
            CHECK_EQ(s.iterations, applied);
            CHECK_EQ(s.skipped_total, skips);
        }
        COMPARE_EXACT(scalars.values.loss_scale, final_scale);
        CHECK_EQ(scalars.values.good_steps, std::int64_t(final_good));
    }

    // Keras's real interval: growth after exactly 2000 consecutive finite steps, not 1999.
    void kerasGrowsAfter2000() {
        const LossScaleConfig config = keras_loss_scale();
        CpuBackend backend;
        HostScalars scalars;
        scalars.values.loss_scale = config.initial;
        LossScaleState state{config.initial, 0};
        auto run = [&](int count, bool nonfinite) {
            for (int i = 0; i < count; ++i) {
                state = next_loss_scale(state, nonfinite, config).next;
                scalars.values.found_inf = nonfinite ? 1 : 0;
                backend.finish_step(config, scalars.tensor);
            }
        };
        run(1999, false);
        CHECK_EQ(state, (LossScaleState{32768.0, 1999}));
        run(1, false);
        CHECK_EQ(state, (LossScaleState{65536.0, 0}));
        run(1000, false);
        run(1, true); // resets the count: another full 2000 are needed
        CHECK_EQ(state, (LossScaleState{32768.0, 0}));
        run(1999, false);
        COMPARE_EXACT(state.scale, 32768.0);
        run(1, false);
        CHECK_EQ(state, (LossScaleState{65536.0, 0}));
        COMPARE_EXACT(scalars.values.loss_scale, state.scale);
        CHECK_EQ(scalars.values.good_steps, state.good_steps);
        CHECK_EQ(scalars.values.iterations, std::int64_t(5000));
        CHECK_EQ(scalars.values.skipped_total, std::int64_t(1));
    }

    // Growth stops below float32's largest value (2^127 * 2 = 2^128 is not a float32), on the CPU
    // engine too; the host/device rule (loss_scale_rule.h) is what next_loss_scale() returns.
    void growthStopsAtFloat32Max() {
        const LossScaleConfig config = dynamic(std::ldexp(1.0, 126), 1);
        LossScaleState state{config.initial, 0};
        state = next_loss_scale(state, false, config).next;
        CHECK_EQ(state, (LossScaleState{std::ldexp(1.0, 127), 0}));
        state = next_loss_scale(state, false, config).next;
        CHECK_EQ(state, (LossScaleState{std::ldexp(1.0, 127), 0}));
        CpuBackend backend;
        HostScalars scalars;
        scalars.values.loss_scale = std::ldexp(1.0, 127);
        backend.finish_step(config, scalars.tensor);
        COMPARE_EXACT(scalars.values.loss_scale, std::ldexp(1.0, 127));
        const DynamicScaleStep rule = dynamic_scale_step(3.0, 4, true, 2.0, 2.0, 10);
        CHECK(rule.skipped && rule.scale == 2.0 && rule.good_steps == 0); // max(1.5, min 2)
    }

    // PyTorch's GradScaler has no floor: 17 back-offs from 2^16 reach 0.5.
    void pytorchBacksOffBelowOne() {
        const LossScaleConfig config = pytorch_loss_scale();
        LossScaleState state{config.initial, 0};
        for (int i = 0; i < 17; ++i) state = next_loss_scale(state, true, config).next;
        COMPARE_EXACT(state.scale, 0.5);
    }

    void autoIsAnError() {
        LossScaleConfig config;
        CHECK_EQ(config.mode, LossScaleMode::Auto);
        CHECK_THROWS(Error, next_loss_scale(LossScaleState{}, false, config));
    }

    // An inf or NaN anywhere in any of several gradients raises found_inf, in every dtype.
    void unscaleDetectsNonFinite_data() {
        add_column<DType>("dtype");
        add_column<int>("tensor");
        add_column<double>("value");
        for (DType dtype : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16})
            for (int tensor = 0; tensor < 3; ++tensor) {
                const std::string name(dtype_name(dtype));
                const std::string in = " in #" + std::to_string(tensor);
                new_row(name + " +inf" + in) << dtype << tensor << double(INFINITY);
                new_row(name + " -inf" + in) << dtype << tensor << -double(INFINITY);
                new_row(name + " nan" + in) << dtype << tensor << std::nan("");
            }
        new_row("float16 overflows when unscaled by 1/0.5") << DType::Float16 << 1 << 40000.0;
    }
    void unscaleDetectsNonFinite() {
        FETCH(DType, dtype);
        FETCH(int, tensor);
        FETCH(double, value);
        std::vector<HostTensor> grads;
        grads.reserve(3);
        const int sizes[] = {5, 1100, 3}; // one spans several chunks
        for (int k = 0; k < 3; ++k) {
            std::vector<double> v(static_cast<std::size_t>(sizes[k]));
            for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.25 * double(i % 17) - 1.0;
            if (k == tensor) v[v.size() - 1 - v.size() / 3] = value;
            grads.emplace_back(dtype, v);
        }
        Tensor* ptrs[] = {&grads[0].tensor, &grads[1].tensor, &grads[2].tensor};
        CpuBackend backend;
        HostScalars scalars;
        scalars.values.loss_scale = std::isfinite(value) ? 0.5 : 1024.0;
        backend.begin_step(scalars.tensor);
        backend.unscale_and_check_finite(ptrs, scalars.tensor);
        CHECK_EQ(backend.read_scalars(scalars.tensor).found_inf, 1);
    }

    void unscaleCleanAndAccumulates() {
        CpuBackend backend;
        HostScalars scalars;
        scalars.values.loss_scale = 1024.0;
        HostTensor a(DType::Float16, {1.0, 2.0, -65504.0});
        HostTensor b(DType::Float32, {1e-30, -3.0});
        Tensor* both[] = {&a.tensor, &b.tensor};
        backend.begin_step(scalars.tensor);
        backend.unscale_and_check_finite(both, scalars.tensor);
        CHECK_EQ(scalars.values.found_inf, 0);
        // A later call with an inf sets the flag; a clean call after it does not clear it.
        HostTensor bad(DType::BFloat16, {1.0, std::nan("")});
        Tensor* one_bad[] = {&bad.tensor};
        backend.unscale_and_check_finite(one_bad, scalars.tensor);
        backend.unscale_and_check_finite(both, scalars.tensor);
        CHECK_EQ(scalars.values.found_inf, 1);
        // begin_step clears it (and the per-step sums) but nothing else.
        scalars.values.loss_sum = 3.0;
        scalars.values.correct = 7;
        scalars.values.examples = 9;
        scalars.values.iterations = 11;
        backend.begin_step(scalars.tensor);
        CHECK_EQ(scalars.values.found_inf, 0);
        CHECK_EQ(scalars.values.loss_sum, 0.0);
        CHECK_EQ(scalars.values.correct, std::int64_t(0));
        CHECK_EQ(scalars.values.examples, std::int64_t(0));
        CHECK_EQ(scalars.values.iterations, std::int64_t(11));
        COMPARE_EXACT(scalars.values.loss_scale, 1024.0);
    }

    // Dividing by a power of two is exact: scaled-then-unscaled gradients come back bit for bit.
    void unscaleExactForPowerOfTwo_data() {
        add_column<DType>("dtype");
        add_column<double>("scale");
        new_row("float32 2^16") << DType::Float32 << 65536.0;
        new_row("float64 2^15") << DType::Float64 << 32768.0;
        new_row("float16 2^10") << DType::Float16 << 1024.0;
        new_row("bfloat16 2^15") << DType::BFloat16 << 32768.0;
        new_row("float32 2^-3") << DType::Float32 << 0.125;
    }
    void unscaleExactForPowerOfTwo() {
        FETCH(DType, dtype);
        FETCH(double, scale);
        std::vector<double> raw(1300);
        for (std::size_t i = 0; i < raw.size(); ++i)
            raw[i] = std::ldexp(1.0 + std::sin(double(i)) * 0.999, int(i % 9) - 4) *
                     (i % 2 ? -1.0 : 1.0); // |x| in [2^-4, 2^5): normal and in range when scaled
        const HostTensor expected(dtype, raw); // the values in the dtype
        std::vector<double> scaled = expected.values();
        for (double& x : scaled) x *= scale;
        HostTensor grad(dtype, scaled);
        Tensor* grads[] = {&grad.tensor};
        CpuBackend backend;
        HostScalars scalars;
        scalars.values.loss_scale = scale;
        backend.begin_step(scalars.tensor);
        backend.unscale_and_check_finite(grads, scalars.tensor);
        CHECK_EQ(scalars.values.found_inf, 0);
        CHECK(grad.bytes() == expected.bytes());
    }

    // Any other scale: multiply by 1/scale rounded to float32, then round once to the dtype.
    void unscaleRoundsOnce() {
        const float inv = static_cast<float>(1.0 / 1000.0);
        const std::vector<double> raw = {1.0, 3.0, 1234.5, -0.0625, 77.0};
        HostTensor g32(DType::Float32, raw), g16(DType::Float16, raw);
        Tensor* grads[] = {&g32.tensor, &g16.tensor};
        CpuBackend backend;
        HostScalars scalars;
        scalars.values.loss_scale = 1000.0;
        backend.unscale_and_check_finite(grads, scalars.tensor);
        const std::vector<double> v32 = g32.values(), v16 = g16.values();
        for (std::size_t i = 0; i < raw.size(); ++i) {
            const float product = static_cast<float>(raw[i]) * inv;
            CHECK_EQ(v32[i], double(product));
            const float in16 = half_bits_to_float(float_to_half_bits(static_cast<float>(raw[i])));
            CHECK_EQ(v16[i], double(half_bits_to_float(float_to_half_bits(in16 * inv))));
        }
    }

    // A gradient the optimizer unscales (issue 26: a mixed layer's 16-bit gradient with no cast
    // back) is only checked: its bytes stay, and it counts as non-finite exactly when the float32
    // gradient a cast and the unscale would have made is, a finite bfloat16 value whose product
    // overflows float32 included. The ledger names it by its place in the list.
    void leftScaledGradientsAreOnlyChecked() {
        CpuBackend backend;
        HostScalars scalars;
        scalars.values.loss_scale = 1024.0;
        HostTensor h(DType::Float16, {1.0, -2.0, 65504.0, std::ldexp(1.0, -24)});
        HostTensor f(DType::Float32, {1.5, 3.0});
        HostTensor b(DType::BFloat16, {std::ldexp(1.0, 40), -0.5});
        const std::vector<unsigned char> h_bytes = h.bytes(), b_bytes = b.bytes();
        Tensor* grads[] = {&h.tensor, &f.tensor, &b.tensor};
        const std::vector<std::uint8_t> leave = {1, 0, 1};
        backend.begin_step(scalars.tensor);
        backend.unscale_and_check_finite(grads, scalars.tensor, leave);
        CHECK(h.bytes() == h_bytes);
        CHECK(b.bytes() == b_bytes);
        CHECK_EQ(f.values(), (std::vector<double>{1.5 / 1024, 3.0 / 1024}));
        CHECK_EQ(scalars.values.found_inf, 0);
        CHECK_EQ(scalars.values.nonfinite_mask, std::uint64_t(0));
        // 1 / 2^-100 = 2^100: 2^40 · 2^100 overflows float32 (the cast-and-unscale route's inf),
        // 65504 · 2^100 does not.
        scalars.values.loss_scale = std::ldexp(1.0, -100);
        backend.begin_step(scalars.tensor);
        Tensor* scaled_only[] = {&h.tensor, &b.tensor};
        const std::vector<std::uint8_t> both = {1, 1};
        backend.unscale_and_check_finite(scaled_only, scalars.tensor, both);
        CHECK_EQ(scalars.values.found_inf, 1);
        CHECK_EQ(scalars.values.nonfinite_mask, nonfinite_bit(1));
        CHECK(h.bytes() == h_bytes);
        CHECK(b.bytes() == b_bytes);
        // One flag per gradient, or none.
        const std::vector<std::uint8_t> short_list = {1};
        CHECK_THROWS(Error, backend.unscale_and_check_finite(grads, scalars.tensor, short_list));
    }

    // optimizer_update's unscale_grad: a float32 master updated from a float16 gradient that
    // still carries the loss scale gets the bits of the update from the float32 gradient a cast
    // and the unscale make (loss scale 1000: its reciprocal is not a power of two).
    void updateUnscalesWhatWasLeftScaled() {
        const std::vector<double> raw = {1.0, -3.0, 1234.5, -0.0625, 77.0, 6.0e-8, 0.0, 2.5};
        const std::vector<double> w0 = {0.5, -0.25, 1.0, 2.0, -1.5, 0.125, 3.0, -2.0};
        OptimizerConfig config = optimizer_defaults(OptimizerType::Adam);
        CpuBackend backend;
        HostScalars scalars;
        scalars.values.loss_scale = 1000.0;
        scalars.values.iterations = 3;
        // The route with a cast: float16 → float32 (exact), unscale in place, update.
        HostTensor g16(DType::Float16, raw);
        HostTensor g32(DType::Float32, g16.values());
        Tensor* cast_grads[] = {&g32.tensor};
        const std::vector<double> zeros(raw.size(), 0.0);
        HostTensor w_cast(DType::Float32, w0), m_cast(DType::Float32, w0);
        HostTensor v_cast(DType::Float32, zeros);
        Tensor* slots_cast[] = {&m_cast.tensor, &v_cast.tensor};
        backend.unscale_and_check_finite(cast_grads, scalars.tensor);
        backend.optimizer_update(config, w_cast.tensor, g32.tensor, slots_cast, scalars.tensor,
                                 true);
        // The widened route: the float16 gradient as it is, unscaled by the update.
        HostTensor w(DType::Float32, w0), m(DType::Float32, w0), v(DType::Float32, zeros);
        Tensor* slots[] = {&m.tensor, &v.tensor};
        backend.optimizer_update(config, w.tensor, g16.tensor, slots, scalars.tensor, true, nullptr,
                                 true);
        CHECK(w.bytes() == w_cast.bytes());
        CHECK(m.bytes() == m_cast.bytes());
        CHECK(v.bytes() == v_cast.bytes());
        // Only a float32 or float64 parameter may unscale its gradient.
        HostTensor w16(DType::Float16, w0), m16(DType::Float16, w0), v16(DType::Float16, zeros);
        Tensor* slots16[] = {&m16.tensor, &v16.tensor};
        CHECK_THROWS(Error, backend.optimizer_update(config, w16.tensor, g16.tensor, slots16,
                                                     scalars.tensor, true, nullptr, true));
    }

    void scalarsRoundTrip() {
        CpuBackend backend;
        HostScalars scalars;
        StepScalars v;
        v.loss_scale = 256.0;
        v.good_steps = 12;
        v.iterations = 99;
        v.found_inf = 1;
        backend.write_scalars(v, scalars.tensor);
        const StepScalars back = backend.read_scalars(scalars.tensor);
        CHECK(std::memcmp(&back, &v, sizeof v) == 0);
        Tensor tiny = scalars.tensor;
        tiny.shape = {4};
        CHECK_THROWS(Error, backend.read_scalars(tiny));
    }
};

MANTISSA_TEST_MAIN(TestLossScaler, presets, names, resolveAuto, validation, sequence,
                   kerasGrowsAfter2000, growthStopsAtFloat32Max, pytorchBacksOffBelowOne,
                   autoIsAnError, unscaleDetectsNonFinite, unscaleCleanAndAccumulates,
                   unscaleExactForPowerOfTwo, unscaleRoundsOnce, leftScaledGradientsAreOnlyChecked,
                   updateUnscalesWhatWasLeftScaled, scalarsRoundTrip)
