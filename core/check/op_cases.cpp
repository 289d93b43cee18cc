// The op-case table. Each case builds its inputs from seeded host values, so both engines see the
// same bits; backward inputs come from the host too, so a case measures one op's error, not the
// previous op's difference as well.
#include "core/check/op_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>

#include "core/backend/histogram.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/numeric/half.h"
#include "core/numeric/tensor_quant.h"

namespace mantissa {

// --- CaseContext ---

CaseContext::CaseContext(Backend& reference, Backend& candidate)
    : m_engines{&reference, &candidate} {}

CaseContext::~CaseContext() = default;

Twin& CaseContext::make(const std::string& name, DType dtype, Shape shape,
                        const std::vector<double>& values) {
    auto t = std::make_unique<Twin>();
    std::vector<unsigned char> host;
    for (int side = 0; side < 2; ++side) {
        Tensor& tensor = t->tensor[side];
        tensor.name = name;
        tensor.dtype = dtype;
        tensor.shape = shape;
        // Room for a StepScalars too, so a scalars tensor is just a UInt8 twin.
        t->buffer[side] = engine(side).allocate(std::max<std::size_t>(tensor.bytes(), 8));
        tensor.data = t->buffer[side].data();
        if (side == 0) {
            std::vector<double> v(static_cast<std::size_t>(tensor.numel()), 0.0);
            for (std::size_t i = 0; i < v.size() && !values.empty(); ++i)
                v[i] = values[i % values.size()];
            host.resize(tensor.bytes());
            convert_from_double(v.data(), host.data(), dtype, v.size());
        }
        engine(side).upload(host.data(), tensor);
    }
    m_twins.push_back(std::move(t));
    return *m_twins.back();
}

Workspace CaseContext::workspace(int side, std::size_t bytes) {
    if (bytes == 0) return {};
    m_scratch.push_back(engine(side).allocate(bytes));
    return {m_scratch.back().data(), bytes};
}

void CaseContext::both(const std::function<void(Backend&, int)>& op) {
    for (int side = 0; side < 2; ++side) op(engine(side), side);
}

// --- values ---

namespace {

std::vector<double> random_values(std::size_t n, std::uint64_t seed, double scale) {
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        out[i] = scale * (static_cast<double>(seed >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    }
    return out;
}

// Second moments (RMSprop's and Adam's v) must be >= 0, or the update takes sqrt of a negative.
std::vector<double> positive(std::vector<double> values) {
    for (double& v : values) v = std::fabs(v);
    return values;
}

// Random values with signed zeros and NaNs mixed in (the length is coprime with typical rows).
std::vector<double> with_specials(std::vector<double> values) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double specials[] = {0.0, -0.0, nan, -0.0, 0.0};
    for (std::size_t i = 0; i < values.size(); i += 7) values[i] = specials[(i / 7) % 5];
    return values;
}

// Small integers: many equal values in a pooling window (ties), and +0 beside -0.
std::vector<double> tie_values(std::size_t n, std::uint64_t seed) {
    std::vector<double> out = random_values(n, seed, 1.0);
    for (double& v : out) v = v < -0.5 ? -1.0 : v < 0.0 ? -0.0 : v < 0.5 ? 0.0 : 1.0;
    return out;
}

std::string dims(std::initializer_list<std::int64_t> sizes) {
    std::string out;
    for (std::int64_t s : sizes) out += (out.empty() ? "" : "x") + std::to_string(s);
    return out;
}

const DType kDTypes[] = {DType::Float64, DType::Float32, DType::Float16, DType::BFloat16};

using Body = std::function<std::vector<Twin*>(CaseContext&)>;

struct Table {
    std::vector<OpCase> cases;
    void add(std::string name, DType dt, std::string geometry, double tol, double f64_tol,
             Body body) {
        cases.push_back({std::move(name), dt, std::move(geometry), tol, f64_tol, std::move(body)});
    }
    // The usual rule: the dtype's tolerance both against an engine and the float64 reference.
    void add(std::string name, DType dt, std::string geometry, Body body) {
        const double tol = dtype_tolerance(dt);
        add(std::move(name), dt, std::move(geometry), tol, tol, std::move(body));
    }
};

void add_cast_and_fill(Table& t, DType dt) {
    // float16 overflows at 65504, float32 subnormals below 1.2e-38; NaN, inf and -0 stay.
    std::vector<double> src = with_specials(random_values(1000, 4, 100.0));
    src[1] = 70000.0;
    src[2] = -1e-6;
    src[3] = 1e-40;
    src[5] = std::numeric_limits<double>::infinity();
    t.add("cast float32->dtype", dt, "1000 (inf, NaN, -0, overflow, subnormal)",
          [dt, src](CaseContext& c) {
              Twin& s = c.make("src", DType::Float32, {1000}, src);
              Twin& d = c.make("dst", dt, {1000});
              c.both([&](Backend& be, int i) { be.cast(s.on(i), d.on(i)); });
              return std::vector<Twin*>{&d};
          });
    t.add("cast dtype->float32", dt, "999 (NaN, -0)", 0.0, 0.0, [dt](CaseContext& c) {
        Twin& s = c.make("src", dt, {999}, with_specials(random_values(999, 16, 30.0)));
        Twin& d = c.make("dst", DType::Float32, {999});
        c.both([&](Backend& be, int i) { be.cast(s.on(i), d.on(i)); });
        return std::vector<Twin*>{&d};
    });
    t.add("fill", dt, "37x11", 0.0, 0.0, [dt](CaseContext& c) {
        Twin& y = c.make("y", dt, {37, 11});
        c.both([&](Backend& be, int i) { be.fill(y.on(i), 0.1); });
        return std::vector<Twin*>{&y};
    });
}

// C (m, n) = epilogue(op(A) op(B) + bias) on both sides, each with the workspace it asks for.
void run_gemm(CaseContext& c, GemmArgs g, Twin& a, Twin& b, Twin& out, Twin* bias, Twin* pre) {
    c.both([&](Backend& be, int i) {
        g.a = &a.on(i);
        g.b = &b.on(i);
        g.c = &out.on(i);
        g.bias = bias ? &bias->on(i) : nullptr;
        g.pre_activation = pre ? &pre->on(i) : nullptr;
        g.workspace = Workspace{};
        g.workspace = c.workspace(i, be.gemm_workspace_bytes(g));
        be.gemm(g);
    });
}

void add_gemm(Table& t, DType dt) {
    struct Geometry {
        std::int64_t m, k, n;
    };
    const Geometry shapes[] = {{64, 96, 40}, {33, 17, 9}};
    for (const Geometry& s : shapes) {
        const bool main = s.m == 64;
        for (Activation act : {Activation::Linear, Activation::Relu, Activation::Gelu,
                               Activation::Tanh, Activation::Sigmoid}) {
            if (!main && act != Activation::Linear && act != Activation::Relu) continue;
            t.add(std::string("gemm+bias+") + activation_name(act), dt, dims({s.m, s.k, s.n}),
                  [dt, s, act](CaseContext& c) {
                      Twin& x = c.make("x", dt, {s.m, s.k}, random_values(s.m * s.k, 1, 1.0));
                      Twin& w = c.make("w", dt, {s.k, s.n}, random_values(s.k * s.n, 2, 0.2));
                      Twin& b = c.make("bias", dt, {s.n}, random_values(s.n, 3, 0.5));
                      Twin& y = c.make("y", dt, {s.m, s.n});
                      const bool gelu = act == Activation::Gelu;
                      Twin* pre = gelu ? &c.make("pre", dt, {s.m, s.n}) : nullptr;
                      GemmArgs g;
                      g.epilogue = act;
                      run_gemm(c, g, x, w, y, &b, pre);
                      std::vector<Twin*> outs{&y};
                      if (pre) outs.push_back(pre);
                      return outs;
                  });
        }
        t.add("gemm dW = x^T dy", dt, dims({s.m, s.k, s.n}), [dt, s](CaseContext& c) {
            Twin& x = c.make("x", dt, {s.m, s.k}, random_values(s.m * s.k, 1, 1.0));
            Twin& dy = c.make("dy", dt, {s.m, s.n}, random_values(s.m * s.n, 14, 1.0));
            Twin& dw = c.make("dw", dt, {s.k, s.n});
            GemmArgs g;
            g.transpose_a = true;
            run_gemm(c, g, x, dy, dw, nullptr, nullptr);
            return std::vector<Twin*>{&dw};
        });
        t.add("gemm dX = dy W^T", dt, dims({s.m, s.k, s.n}), [dt, s](CaseContext& c) {
            Twin& dy = c.make("dy", dt, {s.m, s.n}, random_values(s.m * s.n, 14, 1.0));
            Twin& w = c.make("w", dt, {s.k, s.n}, random_values(s.k * s.n, 2, 0.2));
            Twin& dx = c.make("dx", dt, {s.m, s.k});
            GemmArgs g;
            g.transpose_b = true;
            run_gemm(c, g, dy, w, dx, nullptr, nullptr);
            return std::vector<Twin*>{&dx};
        });
    }
    // A 10-unit layer's three products at a size where the CUDA engine pads 16-bit operands
    // (issue 26, gemm_key.h's gemm_padding: rows of 20 bytes leave cuBLASLt its slow "align2"
    // kernels), a transposed B and a transposed A whose rows miss 8: each padded operand and the
    // padded C's epilogue (m x k x n above kPadMinWork multiply-adds; C starts as NaN, which
    // nothing may read). Float32 and float64 run the same sizes unpadded.
    {
        constexpr std::int64_t m = 256, k = 2048, n = 10;
        struct Padded {
            const char* name;
            Shape a, b; // as stored
            bool transpose_a, transpose_b, bias;
        };
        const Padded padded[] = {
            {"gemm+bias (10 units)", {m, k}, {k, n}, false, false, true},
            {"gemm dW = x^T dy (10 units)", {m, k}, {m, n}, true, false, false},
            {"gemm dX = dy W^T (10 units)", {m, n}, {k, n}, false, true, false},
            {"gemm+bias (10 units, W^T)", {m, k}, {n, k}, false, true, true}, // zero rows of B
            {"gemm dW = x^T dy (10 inputs)", {m, n}, {m, k}, true, false, false},
        };
        std::uint64_t seed = 51;
        for (const Padded& v : padded) {
            const std::int64_t rows = v.transpose_a ? v.a[1] : v.a[0];
            const std::int64_t inner = v.transpose_a ? v.a[0] : v.a[1];
            const std::int64_t cols = v.transpose_b ? v.b[0] : v.b[1];
            t.add(v.name, dt, dims({rows, inner, cols}), [dt, v, rows, cols, seed](CaseContext& c) {
                Twin& a = c.make("a", dt, v.a, random_values(v.a[0] * v.a[1], seed, 1.0));
                Twin& b = c.make("b", dt, v.b, random_values(v.b[0] * v.b[1], seed + 1, 0.5));
                Twin* bias = v.bias
                                 ? &c.make("bias", dt, {cols}, random_values(cols, seed + 2, 0.5))
                                 : nullptr;
                Twin& y = c.make("c", dt, {rows, cols}, {std::numeric_limits<double>::quiet_NaN()});
                GemmArgs g;
                g.transpose_a = v.transpose_a;
                g.transpose_b = v.transpose_b;
                run_gemm(c, g, a, b, y, bias, nullptr);
                return std::vector<Twin*>{&y};
            });
            seed += 3;
        }
    }
    // MX policies' GEMMs (issue 26): operands that hold bfloat16 values only, flagged so, which
    // the CUDA engine multiplies on bfloat16 tensor cores when they are stored as float32.
    t.add("gemm+bias+relu (operands exact in bfloat16)", dt, "64x96x40", [dt](CaseContext& c) {
        const auto bf16_values = [](std::vector<double> v) {
            for (double& x : v)
                x = bfloat16_bits_to_float(float_to_bfloat16_bits(static_cast<float>(x)));
            return v;
        };
        Twin& x = c.make("x", dt, {64, 96}, bf16_values(random_values(64 * 96, 31, 1.0)));
        Twin& w = c.make("w", dt, {96, 40}, bf16_values(random_values(96 * 40, 32, 0.2)));
        Twin& b = c.make("bias", dt, {40}, random_values(40, 33, 0.5));
        Twin& y = c.make("y", dt, {64, 40});
        GemmArgs g;
        g.epilogue = Activation::Relu;
        g.exact_in_bfloat16 = true;
        run_gemm(c, g, x, w, y, &b, nullptr);
        return std::vector<Twin*>{&y};
    });
    // NVFP4's GEMMs (issue 26): copies without their tensor scales, which multiply the float32
    // sum (GemmArgs::a_scale / b_scale on 16/32-bit operands; the CUDA engine passes their
    // product to cuBLASLt as a device alpha) before the bias and the epilogue. Each of the three
    // products of a Dense layer, and the GELU epilogue with its pre-activation.
    if (dt == DType::Float32 || dt == DType::BFloat16 || dt == DType::Float16) {
        struct Scaled {
            const char* op;
            Activation act;
            bool bias, transpose_a, transpose_b;
        };
        for (const Scaled v :
             {Scaled{"gemm+bias+relu", Activation::Relu, true, false, false},
              Scaled{"gemm+bias+gelu", Activation::Gelu, true, false, false},
              Scaled{"gemm dW = x^T dy", Activation::Linear, false, true, false},
              Scaled{"gemm dX = dy W^T", Activation::Linear, false, false, true}}) {
            t.add(std::string(v.op) + " (tensor scales 0.3 x 1.7)", dt, "64x96x40",
                  [dt, v](CaseContext& c) {
                      const std::int64_t m = 64, k = 96, n = 40;
                      const Shape a_shape = v.transpose_a ? Shape{k, m} : Shape{m, k};
                      const Shape b_shape = v.transpose_b ? Shape{n, k} : Shape{k, n};
                      Twin& a = c.make("a", dt, a_shape, random_values(m * k, 41, 1.0));
                      Twin& b = c.make("b", dt, b_shape, random_values(k * n, 42, 0.2));
                      Twin& sa = c.make("a_scale", DType::Float32, {1}, {0.3});
                      Twin& sb = c.make("b_scale", DType::Float32, {1}, {1.7});
                      Twin* bias =
                          v.bias ? &c.make("bias", dt, {n}, random_values(n, 43, 0.5)) : nullptr;
                      // C and the pre-activation start as NaN: with beta 0 they must not be
                      // read (the CUDA engine's beta is in device memory here).
                      const std::vector<double> nan{std::numeric_limits<double>::quiet_NaN()};
                      Twin* pre =
                          v.act == Activation::Gelu ? &c.make("pre", dt, {m, n}, nan) : nullptr;
                      Twin& y = c.make("y", dt, {m, n}, nan);
                      c.both([&](Backend& be, int i) {
                          GemmArgs g;
                          g.a = &a.on(i);
                          g.b = &b.on(i);
                          g.transpose_a = v.transpose_a;
                          g.transpose_b = v.transpose_b;
                          g.c = &y.on(i);
                          g.bias = bias ? &bias->on(i) : nullptr;
                          g.pre_activation = pre ? &pre->on(i) : nullptr;
                          g.epilogue = v.act;
                          g.a_scale = &sa.on(i);
                          g.b_scale = &sb.on(i);
                          g.workspace = c.workspace(i, be.gemm_workspace_bytes(g));
                          be.gemm(g);
                      });
                      std::vector<Twin*> outs{&y};
                      if (pre) outs.push_back(pre);
                      return outs;
                  });
        }
    }
    // The scaled GEMM on a padded C (256 x 2048 x 10, above kPadMinWork): the device alpha, the
    // zeroed accumulator, the padded W and the GELU epilogue writing C and the pre-activation
    // from the accumulator's strided rows.
    if (dt == DType::Float32 || dt == DType::BFloat16 || dt == DType::Float16) {
        t.add("gemm+bias+gelu (tensor scales 0.3 x 1.7, 10 units)", dt, "256x2048x10",
              [dt](CaseContext& c) {
                  const std::int64_t m = 256, k = 2048, n = 10;
                  const std::vector<double> nan{std::numeric_limits<double>::quiet_NaN()};
                  Twin& a = c.make("a", dt, {m, k}, random_values(m * k, 57, 1.0));
                  Twin& b = c.make("b", dt, {k, n}, random_values(k * n, 58, 0.05));
                  Twin& sa = c.make("a_scale", DType::Float32, {1}, {0.3});
                  Twin& sb = c.make("b_scale", DType::Float32, {1}, {1.7});
                  Twin& bias = c.make("bias", dt, {n}, random_values(n, 59, 0.5));
                  Twin& pre = c.make("pre", dt, {m, n}, nan);
                  Twin& y = c.make("y", dt, {m, n}, nan);
                  c.both([&](Backend& be, int i) {
                      GemmArgs g;
                      g.a = &a.on(i);
                      g.b = &b.on(i);
                      g.c = &y.on(i);
                      g.bias = &bias.on(i);
                      g.pre_activation = &pre.on(i);
                      g.epilogue = Activation::Gelu;
                      g.a_scale = &sa.on(i);
                      g.b_scale = &sb.on(i);
                      g.workspace = c.workspace(i, be.gemm_workspace_bytes(g));
                      be.gemm(g);
                  });
                  return std::vector<Twin*>{&y, &pre};
              });
    }
    // A NaN in x makes its row of x·W NaN before the ReLU: it must stay NaN (x < 0 ? 0 : x), as
    // it does unfused (cuBLASLt's RELU epilogue may map it to 0).
    t.add("gemm+bias+relu", dt, "16x24x8 (NaN, -0 in x)", [dt](CaseContext& c) {
        Twin& x = c.make("x", dt, {16, 24}, with_specials(random_values(16 * 24, 21, 1.0)));
        Twin& w = c.make("w", dt, {24, 8}, random_values(24 * 8, 22, 0.3));
        Twin& b = c.make("bias", dt, {8}, random_values(8, 23, 0.5));
        Twin& y = c.make("y", dt, {16, 8});
        GemmArgs g;
        g.epilogue = Activation::Relu;
        run_gemm(c, g, x, w, y, &b, nullptr);
        return std::vector<Twin*>{&y};
    });
    // 1000 rows: the CUDA kernel's row chunks (16 of at most 64 rows), 70 columns in three
    // 32-column strips, 72 in one 256-column strip of 16-byte loads. 700 x 10 (a 10-unit
    // layer): 11 chunks, which the total adds eight at a time and then three.
    struct BiasShape {
        std::int64_t rows, cols;
    };
    for (const BiasShape shape : {BiasShape{64, 40}, BiasShape{13, 7}, BiasShape{1000, 70},
                                  BiasShape{1000, 72}, BiasShape{700, 10}}) {
        const std::int64_t rows = shape.rows, cols = shape.cols;
        t.add("bias_grad", dt, dims({rows, cols}), [dt, rows, cols](CaseContext& c) {
            Twin& dy = c.make("dy", dt, {rows, cols}, random_values(rows * cols, 14, 1.0));
            Twin& db = c.make("db", dt, {cols});
            c.both([&](Backend& be, int i) { be.bias_grad(dy.on(i), db.on(i)); });
            return std::vector<Twin*>{&db};
        });
    }
}

void add_activations(Table& t, DType dt) {
    for (Activation act : {Activation::Relu, Activation::Gelu, Activation::Tanh,
                           Activation::Sigmoid, Activation::Softmax}) {
        // 64 x 96 and 8 x 32 are whole 8-element vectors (the CUDA engine's 16-byte fast
        // path), 9 x 31 is not (its generic kernel); both see NaN and -0.
        struct Variant {
            std::int64_t m, k;
            bool specials;
        };
        for (Variant v : {Variant{64, 96, false}, Variant{9, 31, true}, Variant{8, 32, true}}) {
            const bool specials = v.specials;
            if (specials && act == Activation::Softmax) continue; // a NaN fills its whole row
            const std::int64_t m = v.m, k = v.k;
            const std::string name = std::string("activation ") + activation_name(act) + " fwd+bwd";
            const std::string geometry = dims({m, k}) + (specials ? " (NaN, -0)" : "");
            t.add(name, dt, geometry, [dt, act, m, k, specials](CaseContext& c) {
                std::vector<double> xv = random_values(m * k, 1, 3.0);
                if (specials) xv = with_specials(xv);
                Twin& x = c.make("x", dt, {m, k}, xv);
                Twin& dy = c.make("dy", dt, {m, k}, random_values(m * k, 14, 1.0));
                Twin& y = c.make("y", dt, {m, k});
                Twin& dx = c.make("dx", dt, {m, k});
                c.both([&](Backend& be, int i) {
                    be.activation_forward(act, x.on(i), y.on(i));
                    be.activation_backward(act, x.on(i), y.on(i), dy.on(i), dx.on(i));
                });
                return std::vector<Twin*>{&y, &dx};
            });
        }
    }
    // A Dense layer's dZ and bias gradient in one step (Backend::activation_backward_bias_grad),
    // in place as the plan runs it: 1000 x 72 takes the CUDA engine's fused pass (row chunks, a
    // 256-column strip of 16-byte vectors), 13 x 7 its two separate kernels.
    // GELU's derivative reads the pre-activation x, the others the output y.
    for (Activation act :
         {Activation::Relu, Activation::Tanh, Activation::Sigmoid, Activation::Gelu}) {
        for (const auto& [m, k] : {std::pair<std::int64_t, std::int64_t>{1000, 72}, {13, 7}}) {
            const std::string name =
                std::string("d") + activation_name(act) + "+bias_grad (dZ in place)";
            t.add(name, dt, dims({m, k}), [dt, act, m = m, k = k](CaseContext& c) {
                Twin& x = c.make("x", dt, {m, k}, random_values(m * k, 1, 3.0));
                Twin& y = c.make("y", dt, {m, k});
                Twin& dz = c.make("dy then dz", dt, {m, k}, random_values(m * k, 14, 1.0));
                Twin& db = c.make("db", dt, {k});
                c.both([&](Backend& be, int i) {
                    be.activation_forward(act, x.on(i), y.on(i));
                    be.activation_backward_bias_grad(act, x.on(i), y.on(i), dz.on(i), dz.on(i),
                                                     db.on(i));
                });
                return std::vector<Twin*>{&dz, &db};
            });
        }
    }
}

void add_softmax_xent(Table& t, DType dt) {
    struct Geometry {
        std::int64_t rows, classes, valid;
    };
    // 600 rows: three of the CUDA kernel's 256-row blocks, summed in block order.
    for (Geometry s : {Geometry{64, 10, 61}, Geometry{5, 3, 5}, Geometry{600, 10, 590}}) {
        const std::string geometry =
            dims({s.rows, s.classes}) + " valid " + std::to_string(s.valid);
        t.add("softmax_cross_entropy", dt, geometry, [dt, s](CaseContext& c) {
            Twin& logits = c.make("logits", dt, {s.rows, s.classes},
                                  random_values(s.rows * s.classes, 5, 4.0));
            std::vector<double> label_values(static_cast<std::size_t>(s.rows));
            for (std::int64_t r = 0; r < s.rows; ++r)
                label_values[r] = static_cast<double>(r % s.classes);
            Twin& labels = c.make("labels", DType::Int32, {s.rows}, label_values);
            Twin& probs = c.make("probs", dt, {s.rows, s.classes});
            Twin& dlogits = c.make("dlogits", dt, {s.rows, s.classes});
            Twin& scalars = c.make("scalars", DType::UInt8, {sizeof(StepScalars)});
            StepScalars initial;
            initial.loss_scale = 1024.0;
            StepScalars after[2];
            c.both([&](Backend& be, int i) {
                be.write_scalars(initial, scalars.on(i));
                be.begin_step(scalars.on(i));
                SoftmaxXentArgs a;
                a.logits = &logits.on(i);
                a.labels = &labels.on(i);
                a.valid_rows = s.valid;
                a.probs = &probs.on(i);
                a.dlogits = &dlogits.on(i);
                a.scalars = &scalars.on(i);
                be.softmax_cross_entropy(a);
                after[i] = be.read_scalars(scalars.on(i));
            });
            if (after[0].correct != after[1].correct || after[0].examples != after[1].examples ||
                !(std::fabs(after[0].loss_sum - after[1].loss_sum) <=
                  1e-3 * std::fabs(after[0].loss_sum) + 1e-6))
                throw Error(ErrorKind::Internal, "loss sum / correct / examples differ");
            return std::vector<Twin*>{&probs, &dlogits};
        });
    }
}

void add_maxpool(Table& t, DType dt) {
    struct Geometry {
        std::int64_t batch, h, w, channels;
        bool ties;
    };
    for (Geometry s :
         {Geometry{4, 6, 6, 8, false}, Geometry{3, 7, 7, 1, false}, Geometry{2, 8, 8, 3, true}}) {
        Pool2dArgs p;
        p.batch = s.batch;
        p.in_h = s.h;
        p.in_w = s.w;
        p.channels = s.channels;
        p.out_h = s.h / 2; // "valid": a 7-wide row leaves its last column out
        p.out_w = s.w / 2;
        const std::string geometry =
            dims({s.batch, s.h, s.w, s.channels}) + " p2 s2" + (s.ties ? " (ties, +-0)" : "");
        t.add("maxpool fwd+bwd", dt, geometry, 0.0, 0.0, [dt, s, p](CaseContext& c) {
            const std::int64_t in_n = s.batch * s.h * s.w * s.channels;
            const std::int64_t out_n = s.batch * p.out_h * p.out_w * s.channels;
            Twin& x = c.make("x", dt, {s.batch, s.h, s.w, s.channels},
                             s.ties ? tie_values(in_n, 6) : random_values(in_n, 6, 1.0));
            Twin& y = c.make("y", dt, {s.batch, p.out_h, p.out_w, s.channels});
            Twin& arg = c.make("argmax", DType::Int32, {s.batch, p.out_h, p.out_w, s.channels});
            Twin& dy = c.make("dy", dt, {s.batch, p.out_h, p.out_w, s.channels},
                              random_values(out_n, 15, 1.0));
            Twin& dx = c.make("dx", dt, {s.batch, s.h, s.w, s.channels});
            c.both([&](Backend& be, int i) {
                be.maxpool_forward(p, x.on(i), y.on(i), arg.on(i));
                be.maxpool_backward(p, dy.on(i), arg.on(i), dx.on(i));
            });
            return std::vector<Twin*>{&y, &arg, &dx};
        });
    }
}

void add_conv2d(Table& t, DType dt) {
    struct Geometry {
        std::int64_t batch, size, in_c, out_c, kernel, stride, pad;
    };
    // 10x10x3 "valid"; C = 1 with stride 2 and padding 1; 5x5 "same" with an odd filter count.
    for (Geometry s : {Geometry{4, 10, 3, 8, 3, 1, 0}, Geometry{2, 9, 1, 4, 3, 2, 1},
                       Geometry{3, 7, 3, 5, 5, 1, 2}}) {
        Conv2dArgs a;
        a.batch = s.batch;
        a.in_h = a.in_w = s.size;
        a.in_c = s.in_c;
        a.out_c = s.out_c;
        a.kernel_h = a.kernel_w = s.kernel;
        a.stride_h = a.stride_w = s.stride;
        a.pad_top = a.pad_left = s.pad;
        a.out_h = a.out_w = (s.size + 2 * s.pad - s.kernel) / s.stride + 1;
        const std::string geometry = dims({s.batch, s.size, s.size, s.in_c}) + " k" +
                                     std::to_string(s.kernel) + " s" + std::to_string(s.stride) +
                                     " p" + std::to_string(s.pad) + " f" + std::to_string(s.out_c);
        const Shape x_shape{s.batch, s.size, s.size, s.in_c};
        const Shape w_shape{s.kernel, s.kernel, s.in_c, s.out_c};
        const Shape y_shape{s.batch, a.out_h, a.out_w, s.out_c};
        const std::int64_t x_n = shape_numel(x_shape), w_n = shape_numel(w_shape),
                           y_n = shape_numel(y_shape);
        // Sums of up to k*k*C (forward) or batch*out_h*out_w (filter) terms in another order.
        const double tol = dtype_tolerance(dt) * 4;
        // The three passes with operands in `op` and outputs in dt. op = dt; and a quantised
        // layer's passes (issue 26): float32 copies for operands, outputs in the compute dtype,
        // rounded once from float32 sums (the CUDA engine: cuDNN in float32 into a buffer, then
        // one rounding kernel). The workspace follows the plan's rule (conv2d_steps.cpp): the
        // larger of the two dtypes' needs.
        // `scaled`: NVFP4's copies (issue 26): operands holding bfloat16 values only
        // (Conv2dArgs::exact_in_bfloat16, TF32 tensor cores on the CUDA engine) and two tensor
        // scales multiplying each pass's sums; the filter pass then takes no bias gradient.
        const auto add_passes = [&](DType op, const std::string& suffix, bool scaled) {
            Conv2dArgs base = a;
            base.exact_in_bfloat16 = scaled;
            auto ws = [base, dt, op](CaseContext& c, int i) {
                return c.workspace(i, std::max(c.engine(i).conv2d_workspace_bytes(base, dt),
                                               c.engine(i).conv2d_workspace_bytes(base, op)));
            };
            // Operand values; for `scaled`, multiples of 2^-6 under 2 (at most 7 bits: bfloat16).
            auto values = [scaled](std::size_t n, std::uint64_t seed, double scale) {
                std::vector<double> v = random_values(n, seed, scale);
                if (scaled)
                    for (double& e : v) e = std::round(e * 64.0) / 64.0;
                return v;
            };
            // The two scales where `scaled`: not powers of two, so that each sum rounds when
            // scaled, and near 1, so that the outputs stay in float16's normal range.
            struct Scales {
                Twin* a = nullptr;
                Twin* b = nullptr;
            };
            auto make_scales = [scaled](CaseContext& c) {
                if (!scaled) return Scales{};
                return Scales{&c.make("a_scale", DType::Float32, {1}, {1.1 / 3.0}),
                              &c.make("b_scale", DType::Float32, {1}, {2.9})};
            };
            // The pass's arguments on side i.
            auto pass_args = [base](const Scales& sc, int i) {
                Conv2dArgs out = base;
                if (sc.a) out.a_scale = &sc.a->on(i);
                if (sc.b) out.b_scale = &sc.b->on(i);
                return out;
            };
            t.add("conv2d fwd+bias+relu" + suffix, dt, geometry, tol, tol, [=](CaseContext& c) {
                Twin& x = c.make("x", op, x_shape, values(x_n, 7, 1.0));
                Twin& w = c.make("w", op, w_shape, values(w_n, 8, 0.3));
                Twin& b = c.make("b", dt, {s.out_c}, random_values(s.out_c, 9, 0.2));
                Twin& y = c.make("y", dt, y_shape);
                Twin& pre = c.make("pre", dt, y_shape);
                const Scales sc = make_scales(c);
                c.both([&](Backend& be, int i) {
                    be.conv2d_forward(pass_args(sc, i), x.on(i), w.on(i), &b.on(i),
                                      Activation::Relu, y.on(i), &pre.on(i), ws(c, i));
                });
                return std::vector<Twin*>{&y, &pre};
            });
            t.add("conv2d bwd-data" + suffix, dt, geometry, tol, tol, [=](CaseContext& c) {
                Twin& dy = c.make("dy", op, y_shape, values(y_n, 15, 1.0));
                Twin& w = c.make("w", op, w_shape, values(w_n, 8, 0.3));
                Twin& dx = c.make("dx", dt, x_shape);
                const Scales sc = make_scales(c);
                c.both([&](Backend& be, int i) {
                    be.conv2d_backward_data(pass_args(sc, i), dy.on(i), w.on(i), dx.on(i),
                                            ws(c, i));
                });
                return std::vector<Twin*>{&dx};
            });
            t.add("conv2d bwd-filter" + suffix, dt, geometry, tol, tol, [=](CaseContext& c) {
                Twin& x = c.make("x", op, x_shape, values(x_n, 7, 1.0));
                Twin& dy = c.make("dy", op, y_shape, values(y_n, 15, 1.0));
                Twin& dw = c.make("dw", dt, w_shape);
                Twin& db = c.make("db", dt, {s.out_c});
                const Scales sc = make_scales(c);
                c.both([&](Backend& be, int i) {
                    be.conv2d_backward_filter(pass_args(sc, i), x.on(i), dy.on(i), dw.on(i),
                                              scaled ? nullptr : &db.on(i), ws(c, i));
                });
                return scaled ? std::vector<Twin*>{&dw} : std::vector<Twin*>{&dw, &db};
            });
        };
        add_passes(dt, "", false);
        // Not at float64, whose outputs keep float64 sums.
        if (dt != DType::Float64 && s.in_c == 3 && s.kernel == 3)
            add_passes(DType::Float32, " (float32 operands)", false);
        // The same from the other geometries too: C = 1 is the first MNIST convolution's.
        if (dt != DType::Float64 && s.kernel == 3)
            add_passes(DType::Float32, " (tensor scales, float32 operands)", true);
    }
}

// Batch and layer normalization (NormArgs): activations in dt with "wide" statistics (float32, or
// float64 for float64), as mixed policies run them, and with statistics in dt itself (a pure
// per-layer policy; at 16 bits every intermediate rounding the float64 reference skips).
// Inputs are centred away from 0 (3 + U(-1, 1)) so the centring matters; 61 of 64 and 990 of 1000
// rows valid (batch padding); 1000 x 70 and 9 x 784 cross the CUDA kernels' chunks.
// One normalization call's tensors on both sides; args(side) is the NormArgs over them (a tensor
// left out stays nullptr).
struct NormTwins {
    std::int64_t rows = 0, cols = 0, valid = 0;
    Twin *x = nullptr, *gamma = nullptr, *beta = nullptr, *y = nullptr;
    Twin *mean = nullptr, *inv_std = nullptr, *moving_mean = nullptr, *moving_variance = nullptr;

    NormArgs args(int side) const {
        const auto on = [side](Twin* t) { return t ? &t->on(side) : nullptr; };
        NormArgs a;
        a.rows = rows;
        a.cols = cols;
        a.valid_rows = valid;
        a.x = on(x);
        a.gamma = on(gamma);
        a.beta = on(beta);
        a.y = on(y);
        a.mean = on(mean);
        a.inv_std = on(inv_std);
        a.moving_mean = on(moving_mean);
        a.moving_variance = on(moving_variance);
        return a;
    }
};

void add_normalization(Table& t, DType dt) {
    struct Geometry {
        std::int64_t rows, cols, valid;
    };
    const DType wide = dt == DType::Float64 ? DType::Float64 : DType::Float32;
    const auto centred = [](std::int64_t n, std::uint64_t seed) {
        std::vector<double> v = random_values(static_cast<std::size_t>(n), seed, 1.0);
        for (double& x : v) x += 3.0;
        return v;
    };
    for (const bool own_dtype : {false, true}) {
        const DType st = own_dtype ? dt : wide;
        const std::string stats =
            own_dtype ? " (statistics in the dtype)" : " (float32 statistics, float64 at float64)";
        // Sums over up to 1000 terms in another order, which at 16-bit statistics can move a
        // rounded mean by an ulp (measured on the CPU against float64: at most 2.2e-5 for float32,
        // 7.7e-3 with float16 and 6.0e-2 with bfloat16 statistics, whose every intermediate
        // rounding the reference skips).
        const bool narrow_stats = own_dtype && (dt == DType::Float16 || dt == DType::BFloat16);
        const double tol = dtype_tolerance(dt) * 2;
        const double f64_tol = narrow_stats ? dtype_tolerance(dt) * 2 : dtype_tolerance(dt);
        for (Geometry g : {Geometry{64, 40, 61}, Geometry{72, 24, 72}, Geometry{1000, 70, 990}}) {
            const std::string geometry =
                dims({g.rows, g.cols}) + " valid " + std::to_string(g.valid) + stats;
            t.add("batch_norm fwd+bwd (training)", dt, geometry, tol, f64_tol, [=](CaseContext& c) {
                const std::int64_t n = g.rows * g.cols;
                Twin& x = c.make("x", dt, {g.rows, g.cols}, centred(n, 41));
                Twin& gamma = c.make("gamma", st, {g.cols}, random_values(g.cols, 42, 1.5));
                Twin& beta = c.make("beta", st, {g.cols}, random_values(g.cols, 43, 0.5));
                Twin& y = c.make("y", dt, {g.rows, g.cols});
                Twin& mean = c.make("mean", st, {g.cols});
                Twin& inv = c.make("inv_std", st, {g.cols});
                Twin& mm = c.make("moving_mean", st, {g.cols}, {0.25});
                Twin& mv = c.make("moving_variance", st, {g.cols}, {1.5});
                Twin& dy = c.make("dy", dt, {g.rows, g.cols}, random_values(n, 44, 1.0));
                Twin& dx = c.make("dx", dt, {g.rows, g.cols});
                Twin& dgamma = c.make("dgamma", st, {g.cols});
                Twin& dbeta = c.make("dbeta", st, {g.cols});
                const NormTwins twins{g.rows, g.cols, g.valid, &x,  &gamma, &beta,
                                      &y,     &mean,  &inv,    &mm, &mv};
                c.both([&](Backend& be, int i) {
                    const NormArgs a = twins.args(i);
                    be.batch_norm_forward(a);
                    be.batch_norm_backward(a, dy.on(i), dx.on(i), dgamma.on(i), dbeta.on(i));
                });
                return std::vector<Twin*>{&y, &mean, &inv, &mm, &mv, &dx, &dgamma, &dbeta};
            });
        }
        t.add("batch_norm fwd (inference)", dt, "64x40" + stats, tol, f64_tol, [=](CaseContext& c) {
            Twin& x = c.make("x", dt, {64, 40}, centred(64 * 40, 45));
            Twin& gamma = c.make("gamma", st, {40}, random_values(40, 42, 1.5));
            Twin& beta = c.make("beta", st, {40}, random_values(40, 43, 0.5));
            Twin& mm = c.make("moving_mean", st, {40}, centred(40, 46));
            std::vector<double> variances = random_values(40, 47, 1.0);
            for (double& v : variances) v = 1.25 + v;
            Twin& mv = c.make("moving_variance", st, {40}, variances);
            Twin& y = c.make("y", dt, {64, 40});
            const NormTwins twins{64, 40, 64, &x, &gamma, &beta, &y, nullptr, nullptr, &mm, &mv};
            c.both([&](Backend& be, int i) {
                NormArgs a = twins.args(i);
                a.training = false;
                be.batch_norm_forward(a);
            });
            return std::vector<Twin*>{&y, &mm, &mv};
        });
        for (Geometry g : {Geometry{64, 96, 64}, Geometry{9, 784, 9}, Geometry{300, 10, 300}}) {
            t.add("layer_norm fwd+bwd", dt, dims({g.rows, g.cols}) + stats, tol, f64_tol,
                  [=](CaseContext& c) {
                      const std::int64_t n = g.rows * g.cols;
                      Twin& x = c.make("x", dt, {g.rows, g.cols}, centred(n, 51));
                      Twin& gamma = c.make("gamma", st, {g.cols}, random_values(g.cols, 52, 1.5));
                      Twin& beta = c.make("beta", st, {g.cols}, random_values(g.cols, 53, 0.5));
                      Twin& y = c.make("y", dt, {g.rows, g.cols});
                      Twin& mean = c.make("mean", st, {g.rows});
                      Twin& inv = c.make("inv_std", st, {g.rows});
                      Twin& dy = c.make("dy", dt, {g.rows, g.cols}, random_values(n, 54, 1.0));
                      Twin& dx = c.make("dx", dt, {g.rows, g.cols});
                      Twin& dgamma = c.make("dgamma", st, {g.cols});
                      Twin& dbeta = c.make("dbeta", st, {g.cols});
                      const NormTwins twins{g.rows, g.cols, g.valid, &x,  &gamma,
                                            &beta,  &y,     &mean,   &inv};
                      c.both([&](Backend& be, int i) {
                          const NormArgs a = twins.args(i);
                          be.layer_norm_forward(a);
                          be.layer_norm_backward(a, dy.on(i), dx.on(i), dgamma.on(i), dbeta.on(i));
                      });
                      return std::vector<Twin*>{&y, &mean, &inv, &dx, &dgamma, &dbeta};
                  });
        }
    }
}

// The batch gather with its offset read from the step scalars (issue 26: one CUDA Graph for every
// batch position): 9 images, a permutation, position 4, 3 valid rows of 5 (rows 3 and 4 repeat
// the first). Exact: pixel / 255 is rounded once from the same table.
void add_gather(Table& t, DType dt) {
    t.add("gather_batch (position in the step scalars)", dt, "5 of 9 from 4, 3 valid", 0.0, 0.0,
          [dt](CaseContext& c) {
              std::vector<double> pixels(9 * 784);
              for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = double((i * 37) % 256);
              Twin& images = c.make("images", DType::UInt8, {9, 784}, pixels);
              Twin& labels = c.make("labels", DType::UInt8, {9}, {3, 1, 4, 1, 5, 9, 2, 6, 5});
              Twin& perm = c.make("perm", DType::Int32, {9}, {4, 2, 7, 0, 8, 1, 3, 6, 5});
              Twin& scalars = c.make("scalars", DType::UInt8, {sizeof(StepScalars)});
              Twin& batch = c.make("batch", dt, {5, 784});
              Twin& batch_labels = c.make("batch_labels", DType::Int32, {5});
              StepScalars at;
              at.batch_position = 4;
              c.both([&](Backend& be, int i) {
                  be.write_scalars(at, scalars.on(i));
                  // The host offset 0 must be ignored: the position says 4.
                  be.gather_batch(images.on(i), labels.on(i), perm.on(i), 0, 3, &scalars.on(i),
                                  batch.on(i), batch_labels.on(i));
              });
              return std::vector<Twin*>{&batch, &batch_labels};
          });
    // A row length that is no multiple of 4 (the CUDA kernel's one-element path) and more rows
    // than a thread block takes, from the host offset.
    t.add(
        "gather_batch (host offset)", dt, "9 of 11 from 2, 30 features", 0.0, 0.0,
        [dt](CaseContext& c) {
            std::vector<double> pixels(11 * 30);
            for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = double((i * 53) % 256);
            Twin& images = c.make("images", DType::UInt8, {11, 30}, pixels);
            Twin& labels = c.make("labels", DType::UInt8, {11}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5});
            Twin& perm = c.make("perm", DType::Int32, {11}, {10, 4, 2, 7, 0, 8, 1, 3, 6, 5, 9});
            Twin& batch = c.make("batch", dt, {9, 30});
            Twin& batch_labels = c.make("batch_labels", DType::Int32, {9});
            c.both([&](Backend& be, int i) {
                be.gather_batch(images.on(i), labels.on(i), perm.on(i), 2, 9, nullptr, batch.on(i),
                                batch_labels.on(i));
            });
            return std::vector<Twin*>{&batch, &batch_labels};
        });
}

void add_dropout_and_histogram(Table& t, DType dt) {
    t.add("dropout fwd+bwd (same mask)", dt, "64x96 rate 0.3", [dt](CaseContext& c) {
        Twin& x = c.make("x", dt, {64, 96}, random_values(64 * 96, 1, 1.0));
        Twin& y = c.make("y", dt, {64, 96});
        Twin& mask = c.make("mask", DType::UInt8, {64, 96});
        Twin& dx = c.make("dx", dt, {64, 96});
        c.both([&](Backend& be, int i) {
            be.dropout_forward(0.3, 77, x.on(i), y.on(i), mask.on(i));
            be.dropout_backward(0.3, y.on(i), mask.on(i), dx.on(i));
        });
        return std::vector<Twin*>{&mask, &y, &dx};
    });
    t.add("exponent_histogram", dt, "64x96 (NaN, -0)", 0.0, 0.0, [dt](CaseContext& c) {
        Twin& x = c.make("x", dt, {64, 96}, with_specials(random_values(64 * 96, 1, 1e3)));
        Twin& counts = c.make("counts", DType::Int32, {kHistogramBins});
        c.both([&](Backend& be, int i) { be.exponent_histogram(x.on(i), counts.on(i)); });
        return std::vector<Twin*>{&counts};
    });
}

// unscale + one optimizer update + finish_step, as a training step ends. `overflow` puts an inf
// in the gradient: the update is skipped and the loss scale halves. With `copy`, the update also
// writes the parameter's compute copy in that dtype (a mixed policy's; issue 26), which a skipped
// step leaves as it was; `dt` is then the float32 master's dtype.
Body step_end_body(DType dt, OptimizerType type, bool overflow, std::int64_t m = 64,
                   std::int64_t k = 96, OptimizerConvention convention = OptimizerConvention::Keras,
                   bool centered_momentum = false, LearningRateSchedule schedule = {},
                   std::optional<DType> copy = {}) {
    return [dt, type, overflow, m, k, convention, centered_momentum, schedule,
            copy](CaseContext& c) {
        OptimizerConfig config = optimizer_defaults(type, convention);
        config.schedule = schedule;
        if (type == OptimizerType::SGD) config.momentum = 0.9;
        if (centered_momentum) {
            config.momentum = 0.5;
            config.centered = true;
        }
        std::vector<double> g = random_values(m * k, 11, 50.0);
        if (overflow)
            g[static_cast<std::size_t>(m * k / 2)] = std::numeric_limits<double>::infinity();
        Twin& param = c.make("param", dt, {m, k}, random_values(m * k, 10, 1.0));
        Twin& grad = c.make("grad", dt, {m, k}, g);
        Twin* slots[3] = {&c.make("slot0", dt, {m, k}, positive(random_values(m * k, 12, 0.01))),
                          &c.make("slot1", dt, {m, k}, positive(random_values(m * k, 13, 0.01))),
                          &c.make("slot2", dt, {m, k})};
        Twin* copy_twin =
            copy ? &c.make("copy", *copy, {m, k}, random_values(m * k, 14, 1.0)) : nullptr;
        Twin& scalars = c.make("scalars", DType::UInt8, {sizeof(StepScalars)});
        StepScalars initial;
        initial.loss_scale = 1024.0;
        initial.iterations = 2; // Adam's bias correction at t = 3
        // A schedule's step: 2 under Keras (applied updates), 5 under PyTorch (every step).
        initial.skipped_total = 3;
        // The next batch's position moves on (issue 26): 128 -> 192, or 192 -> 0 (past 200).
        initial.batch_stride = 64;
        initial.epoch_examples = 200;
        initial.batch_position = overflow ? 192 : 128;
        StepScalars after[2];
        const auto slot_count = static_cast<std::size_t>(optimizer_slot_count(config));
        c.both([&](Backend& be, int i) {
            Tensor& sc = scalars.on(i);
            Tensor* grads[] = {&grad.on(i)};
            Tensor* slot_tensors[] = {&slots[0]->on(i), &slots[1]->on(i), &slots[2]->on(i)};
            be.write_scalars(initial, sc);
            be.begin_step(sc);
            be.unscale_and_check_finite(grads, sc);
            be.optimizer_update(config, param.on(i), grad.on(i),
                                std::span<Tensor* const>(slot_tensors, slot_count), sc, true,
                                copy_twin ? &copy_twin->on(i) : nullptr);
            be.finish_step(keras_loss_scale(), sc);
            after[i] = be.read_scalars(sc);
        });
        const StepScalars &a = after[0], &b = after[1];
        if (a.loss_scale != b.loss_scale || a.iterations != b.iterations ||
            a.skipped != b.skipped || a.found_inf != b.found_inf)
            throw Error(ErrorKind::Internal, "step scalars differ after finish_step");
        if (overflow && !a.found_inf) throw Error(ErrorKind::Internal, "the inf was not found");
        if (a.batch_position != (overflow ? 0 : 192) || b.batch_position != a.batch_position)
            throw Error(ErrorKind::Internal, "the batch position did not move as finish_step "
                                             "moves it (advance_batch_position)");
        std::vector<Twin*> outs{&param, slots[0], slots[1]};
        if (!overflow) outs.push_back(&grad); // an unscaled inf: NaN/inf positions still compared
        if (copy_twin) outs.push_back(copy_twin);
        return outs;
    };
}

// One parameter of an optimizer_update_all case, a twin per tensor.
struct UpdateTwins {
    Twin *param = nullptr, *grad = nullptr, *copy = nullptr; // copy: none, nullptr
    std::vector<Twin*> slots;
    bool unscale_grad = false;
};

// The parameters' gradients, and optimizer_update_all's list, on one side of the case.
std::vector<Tensor*> grads_on(const std::vector<UpdateTwins>& params, int side) {
    std::vector<Tensor*> grads;
    for (const UpdateTwins& p : params) grads.push_back(&p.grad->on(side));
    return grads;
}
std::vector<Backend::ParamUpdate> updates_on(const std::vector<UpdateTwins>& params, int side) {
    std::vector<Backend::ParamUpdate> all;
    for (const UpdateTwins& p : params) {
        Backend::ParamUpdate u;
        u.param = &p.param->on(side);
        u.grad = &p.grad->on(side);
        for (Twin* s : p.slots) u.slot_tensors.push_back(&s->on(side));
        u.compute_copy = p.copy ? &p.copy->on(side) : nullptr;
        u.unscale_grad = p.unscale_grad;
        all.push_back(std::move(u));
    }
    return all;
}

// optimizer_update_all over three parameters in `dt` (issue 26: the CUDA engine updates float32
// tensors of whole 8-element vectors in one launch): 64 x 96 and 8 x 16, with a bfloat16 and a
// float16 compute copy when `dt` is float32 (the launch's copies), and 7 x 13, which takes its own
// launch; unscale first and finish_step after, as a step ends. `overflow`: an inf in the second
// gradient skips the step, which leaves every parameter, slot and copy as it was.
Body multi_update_body(DType dt, bool overflow) {
    return [dt, overflow](CaseContext& c) {
        OptimizerConfig config = optimizer_defaults(OptimizerType::RMSprop);
        config.momentum = 0.5;
        config.centered = true; // three slots
        const std::pair<std::int64_t, std::int64_t> shapes[] = {{64, 96}, {8, 16}, {7, 13}};
        const DType copy_dtypes[] = {DType::BFloat16, DType::Float16};
        const auto slot_count = static_cast<std::size_t>(optimizer_slot_count(config));
        std::vector<Twin*> outs;
        std::vector<UpdateTwins> params;
        for (std::size_t i = 0; i < 3; ++i) {
            const auto [m, k] = shapes[i];
            const std::string n = std::to_string(i);
            std::vector<double> g = random_values(m * k, 40 + i, 50.0);
            if (overflow && i == 1) g[5] = std::numeric_limits<double>::infinity();
            UpdateTwins p;
            p.param = &c.make("param" + n, dt, {m, k}, random_values(m * k, 50 + i, 1.0));
            p.grad = &c.make("grad" + n, dt, {m, k}, g);
            for (std::size_t s = 0; s < slot_count; ++s)
                p.slots.push_back(&c.make("slot" + n + std::to_string(s), dt, {m, k},
                                          positive(random_values(m * k, 60 + 3 * i + s, 0.01))));
            // A copy where a mixed policy has one: of the first two float32 parameters.
            p.copy = dt == DType::Float32 && i < 2 ? &c.make("copy" + n, copy_dtypes[i], {m, k},
                                                             random_values(m * k, 70 + i, 1.0))
                                                   : nullptr;
            outs.push_back(p.param);
            outs.insert(outs.end(), p.slots.begin(), p.slots.end());
            if (p.copy) outs.push_back(p.copy);
            params.push_back(p);
        }
        Twin& scalars = c.make("scalars", DType::UInt8, {sizeof(StepScalars)});
        StepScalars initial;
        initial.loss_scale = 512.0;
        initial.iterations = 4;
        StepScalars after[2];
        c.both([&](Backend& be, int i) {
            Tensor& sc = scalars.on(i);
            be.write_scalars(initial, sc);
            be.begin_step(sc);
            be.unscale_and_check_finite(grads_on(params, i), sc);
            be.optimizer_update_all(config, updates_on(params, i), sc, true);
            be.finish_step(keras_loss_scale(), sc);
            after[i] = be.read_scalars(sc);
        });
        if (after[0].skipped != after[1].skipped || (after[0].skipped != 0) != overflow)
            throw Error(ErrorKind::Internal, "the step was not skipped exactly when it overflowed");
        return outs;
    };
}

// optimizer_update_all reading gradients as they are (issue 26: a mixed layer's 16-bit gradient
// is not cast back; the optimizer widens it, exactly, and unscales it): Adam or centered RMSprop
// with momentum over 64 x 96, 16 x 24 and 7 x 13 parameters whose gradients are `dt` (float32
// masters with `dt` compute copies for 16-bit dt, bfloat16 copies for float32; float64 masters
// without copies for float64), and an 8 x 16 one with a float32 gradient and no copy (a
// normalization layer's gamma), so the CUDA engine's multi-tensor launches take two gradient
// dtypes and 7 x 13 its generic kernel. With `scaled` the gradients carry a loss scale of 512:
// the unscale step unscales the 8 x 16 one and only checks the others (leave_scaled), which the
// update unscales as it reads them; `overflow` puts an inf into the third gradient, which must
// set its ledger bit and skip the step.
Body widened_grads_update_body(DType dt, OptimizerType type, bool scaled, bool overflow) {
    return [dt, type, scaled, overflow](CaseContext& c) {
        const DType param_dt = dt == DType::Float64 ? DType::Float64 : DType::Float32;
        const bool copies = dt != DType::Float64; // a float32 master's compute copy
        const DType copy_dt = dt == DType::Float32 ? DType::BFloat16 : dt;
        OptimizerConfig config = optimizer_defaults(type);
        if (type == OptimizerType::RMSprop) {
            config.momentum = 0.5;
            config.centered = true;
        }
        struct Shape2 {
            std::int64_t m, k;
            bool widened;
        };
        const Shape2 shapes[] = {{64, 96, true}, {8, 16, false}, {16, 24, true}, {7, 13, true}};
        const auto slot_count = static_cast<std::size_t>(optimizer_slot_count(config));
        const double gradient_scale = scaled ? 512.0 : 1.0;
        std::vector<Twin*> outs;
        std::vector<UpdateTwins> params;
        std::vector<std::uint8_t> leave_scaled;
        for (std::size_t i = 0; i < std::size(shapes); ++i) {
            const auto [m, k, widened] = shapes[i];
            const std::string n = std::to_string(i);
            std::vector<double> g = random_values(m * k, 140 + i, 0.5 * gradient_scale);
            if (overflow && i == 2) g[7] = std::numeric_limits<double>::infinity();
            UpdateTwins p;
            p.unscale_grad = scaled && widened;
            p.param = &c.make("param" + n, param_dt, {m, k}, random_values(m * k, 150 + i, 1.0));
            p.grad = &c.make("grad" + n, widened ? dt : DType::Float32, {m, k}, g);
            for (std::size_t s = 0; s < slot_count; ++s)
                p.slots.push_back(&c.make("slot" + n + std::to_string(s), param_dt, {m, k},
                                          positive(random_values(m * k, 160 + 3 * i + s, 0.01))));
            p.copy = widened && copies
                         ? &c.make("copy" + n, copy_dt, {m, k}, random_values(m * k, 170 + i, 1.0))
                         : nullptr;
            outs.push_back(p.param);
            outs.insert(outs.end(), p.slots.begin(), p.slots.end());
            if (p.copy) outs.push_back(p.copy);
            // A left-scaled gradient must come out as it went in; the float32 one unscaled.
            if (scaled && !overflow) outs.push_back(p.grad);
            params.push_back(p);
            leave_scaled.push_back(widened ? 1 : 0);
        }
        Twin& scalars = c.make("scalars", DType::UInt8, {sizeof(StepScalars)});
        StepScalars initial;
        initial.loss_scale = gradient_scale;
        initial.iterations = 4;
        LossScaleConfig loss_scale = keras_loss_scale();
        if (!scaled) loss_scale.mode = LossScaleMode::None;
        StepScalars after[2];
        c.both([&](Backend& be, int i) {
            Tensor& sc = scalars.on(i);
            be.write_scalars(initial, sc);
            be.begin_step(sc);
            if (scaled) be.unscale_and_check_finite(grads_on(params, i), sc, leave_scaled);
            be.optimizer_update_all(config, updates_on(params, i), sc, scaled);
            be.finish_step(loss_scale, sc);
            after[i] = be.read_scalars(sc);
        });
        for (const StepScalars& a : after) {
            if ((a.skipped != 0) != overflow || a.iterations != (overflow ? 4 : 5))
                throw Error(ErrorKind::Internal, "the step was not skipped exactly when it "
                                                 "overflowed");
            if (a.nonfinite_mask != (overflow ? nonfinite_bit(2) : 0))
                throw Error(ErrorKind::Internal,
                            "nonfinite_mask " + std::to_string(a.nonfinite_mask) +
                                ": the ledger must name the third gradient exactly when it held "
                                "the inf");
        }
        return outs;
    };
}

// The skipped-step ledger (issue 27): 40 gradients (the CUDA engine unscales 32 a launch), an inf
// or NaN in four of them; both engines must set exactly those four bits of nonfinite_mask, and
// leave the finite gradients unscaled alike.
Body ledger_body(DType dt) {
    return [dt](CaseContext& c) {
        constexpr int kGrads = 40;
        const std::vector<int> bad = {1, 5, 33, 39};
        std::vector<Twin*> grads;
        for (int g = 0; g < kGrads; ++g) {
            const std::int64_t n = 3 + (g * 37) % 300; // sizes off the 8-element vectors too
            std::vector<double> v = random_values(n, 100 + static_cast<std::uint64_t>(g), 20.0);
            if (std::find(bad.begin(), bad.end(), g) != bad.end())
                v[static_cast<std::size_t>(n / 2)] = g == 5
                                                         ? std::numeric_limits<double>::quiet_NaN()
                                                         : std::numeric_limits<double>::infinity();
            grads.push_back(&c.make("grad" + std::to_string(g), dt, {n}, v));
        }
        Twin& scalars = c.make("scalars", DType::UInt8, {sizeof(StepScalars)});
        StepScalars initial;
        initial.loss_scale = 256.0;
        initial.nonfinite_mask = ~std::uint64_t{0}; // begin_step must clear it
        std::uint64_t masks[2] = {};
        c.both([&](Backend& be, int i) {
            Tensor& sc = scalars.on(i);
            std::vector<Tensor*> list;
            for (Twin* g : grads) list.push_back(&g->on(i));
            be.write_scalars(initial, sc);
            be.begin_step(sc);
            be.unscale_and_check_finite(list, sc);
            masks[i] = be.read_scalars(sc).nonfinite_mask;
        });
        std::uint64_t expected = 0;
        for (int g : bad) expected |= nonfinite_bit(g);
        for (std::uint64_t mask : masks)
            if (mask != expected)
                throw Error(ErrorKind::Internal, "nonfinite_mask " + std::to_string(mask) +
                                                     ", expected " + std::to_string(expected));
        std::vector<Twin*> finite;
        for (int g = 0; g < kGrads; ++g)
            if (std::find(bad.begin(), bad.end(), g) == bad.end()) finite.push_back(grads[g]);
        return finite;
    };
}

void add_step_end(Table& t, DType dt) {
    // Unscaling by a power of two is exact on every engine.
    t.add("unscale ledger", dt, "40 gradients, 4 non-finite", 0.0, dtype_tolerance(dt),
          ledger_body(dt));
    // Against another engine the update is the same rounded arithmetic (update_rules.h), so only
    // a float32 reassociation is allowed; against float64 the dtype's own rounding.
    const double same = dt == DType::Float64 ? 1e-12 : 1e-6;
    for (OptimizerType type :
         {OptimizerType::SGD, OptimizerType::RMSprop, OptimizerType::Adam, OptimizerType::AdamW})
        t.add(std::string("unscale+") + optimizer_type_name(type) + "+finish_step", dt, "64x96",
              same, dtype_tolerance(dt), step_end_body(dt, type, false));
    t.add(std::string("unscale+") + optimizer_type_name(OptimizerType::Adam) + "+finish_step", dt,
          "64x96 (inf: skipped)", same, dtype_tolerance(dt),
          step_end_body(dt, OptimizerType::Adam, true));
    // 7 x 13 is not whole 8-element vectors: the CUDA engine's generic update kernel (64 x 96
    // takes its 16-byte fast path).
    t.add(std::string("unscale+") + optimizer_type_name(OptimizerType::RMSprop) + "+finish_step",
          dt, "7x13", same, dtype_tolerance(dt),
          step_end_body(dt, OptimizerType::RMSprop, false, 7, 13));
    // The other conventions' formulas (issue 27), on the fast path and the generic kernel.
    for (OptimizerConvention convention :
         {OptimizerConvention::TfKeras2, OptimizerConvention::PyTorch}) {
        const std::string tag = std::string("[") + optimizer_convention_name(convention) + "]";
        for (OptimizerType type : {OptimizerType::SGD, OptimizerType::RMSprop, OptimizerType::Adam,
                                   OptimizerType::AdamW}) {
            if (convention == OptimizerConvention::TfKeras2 && type == OptimizerType::AdamW)
                continue; // not in tf.keras 2.x
            t.add(std::string("unscale+") + optimizer_type_name(type) + tag + "+finish_step", dt,
                  "64x96", same, dtype_tolerance(dt),
                  step_end_body(dt, type, false, 64, 96, convention));
        }
        t.add(std::string("unscale+rmsprop") + tag + "+finish_step", dt, "7x13 centered, momentum",
              same, dtype_tolerance(dt),
              step_end_body(dt, OptimizerType::RMSprop, false, 7, 13, convention, true));
    }
    // A mixed policy's compute copy written by the update (issue 26), in this case's dtype, of a
    // float32 master: bfloat16 and float16 on the CUDA engine's 16-byte path at 64 x 96, the
    // generic kernel at 7 x 13 (and for float32 and float64 copies), and a skipped step, which
    // leaves the copy as it was. Engines compute the same master bits, so the same copy; against
    // float64 the copy may land a unit of its own dtype (or of the float32 master) away.
    const double copy_tol = std::max(dtype_tolerance(dt), dtype_tolerance(DType::Float32));
    t.add("unscale+rmsprop+copy+finish_step", dt, "64x96, float32 master", same, copy_tol,
          step_end_body(DType::Float32, OptimizerType::RMSprop, false, 64, 96,
                        OptimizerConvention::Keras, false, {}, dt));
    t.add("unscale+adam+copy+finish_step", dt, "7x13, float32 master", same, copy_tol,
          step_end_body(DType::Float32, OptimizerType::Adam, false, 7, 13,
                        OptimizerConvention::Keras, false, {}, dt));
    t.add("unscale+adam+copy+finish_step", dt, "64x96, float32 master (inf: skipped)", same,
          copy_tol,
          step_end_body(DType::Float32, OptimizerType::Adam, true, 64, 96,
                        OptimizerConvention::Keras, false, {}, dt));
    // Three parameters in one optimizer_update_all (the CUDA engine's multi-tensor launch),
    // applied and skipped; the copies are bfloat16 and float16, so against float64 their
    // tolerance.
    const double multi_tol =
        dt == DType::Float32 ? dtype_tolerance(DType::BFloat16) : dtype_tolerance(dt);
    t.add("unscale+rmsprop ×3+finish_step", dt, "64x96, 8x16, 7x13, centered, momentum", same,
          multi_tol, multi_update_body(dt, false));
    t.add("unscale+rmsprop ×3+finish_step", dt, "64x96, 8x16, 7x13 (inf: skipped)", same, multi_tol,
          multi_update_body(dt, true));
    // Masters reading this case's gradients as they are (16-bit ones widened), without loss
    // scaling and with it (the unscale step leaves them scaled, the update unscales them),
    // applied and skipped; against float64 the copies' tolerance.
    const double widened_tol =
        dt == DType::Float32 ? dtype_tolerance(DType::BFloat16) : dtype_tolerance(dt);
    const std::string shapes = "64x96, 8x16 float32, 16x24, 7x13";
    for (OptimizerType type : {OptimizerType::Adam, OptimizerType::RMSprop}) {
        const std::string opt = optimizer_type_name(type);
        t.add(opt + " ×4 (grads as they are)+finish_step", dt, shapes, same, widened_tol,
              widened_grads_update_body(dt, type, false, false));
        t.add("check_finite+" + opt + " ×4 (grads unscaled in the update)+finish_step", dt,
              shapes + ", loss scale 512", same, widened_tol,
              widened_grads_update_body(dt, type, true, false));
    }
    t.add("check_finite+adam ×4 (grads unscaled in the update)+finish_step", dt,
          shapes + ", loss scale 512 (inf: skipped)", same, widened_tol,
          widened_grads_update_body(dt, OptimizerType::Adam, true, true));
    // Learning-rate schedules (issue 29): the CUDA kernel computes the step's rate from its own
    // counters (lr_schedule.h), the CPU engine from the same scalars. OneCycle moves PyTorch
    // AdamW's rate and its decay factor; CosineDecay's warmup, Keras RMSprop's (a float32 rate).
    LearningRateSchedule one_cycle = default_schedule(ScheduleKind::OneCycle);
    one_cycle.total_steps = 40;
    LearningRateSchedule cosine = default_schedule(ScheduleKind::CosineDecay);
    cosine.decay_steps = 30;
    cosine.has_warmup_target = true;
    cosine.warmup_target = 0.003;
    cosine.warmup_steps = 7;
    LearningRateSchedule exponential = default_schedule(ScheduleKind::ExponentialDecay);
    exponential.decay_steps = 3;
    exponential.decay_rate = 0.7;
    for (auto [m, k] : {std::pair<std::int64_t, std::int64_t>{64, 96}, {7, 13}}) {
        const std::string shape = std::to_string(m) + "x" + std::to_string(k);
        t.add("unscale+adamw[pytorch]+finish_step", dt, shape + " OneCycle", same,
              dtype_tolerance(dt),
              step_end_body(dt, OptimizerType::AdamW, false, m, k, OptimizerConvention::PyTorch,
                            false, one_cycle));
        t.add("unscale+rmsprop+finish_step", dt, shape + " CosineDecay warmup", same,
              dtype_tolerance(dt),
              step_end_body(dt, OptimizerType::RMSprop, false, m, k, OptimizerConvention::Keras,
                            false, cosine));
        t.add("unscale+adam+finish_step", dt, shape + " ExponentialDecay", same,
              dtype_tolerance(dt),
              step_end_body(dt, OptimizerType::Adam, false, m, k, OptimizerConvention::Keras, false,
                            exponential));
    }
}

// Quantised GEMM inputs (issue 18): the input in `dt`, quantised into float32 with its stats (and
// delayed scaling's state). Exact on every engine (tolerance 0): each rounding is quant_math.h's,
// shared by the CPU engine and the CUDA kernels; against the float64 reference the CPU engine
// quantises the same bits (the quantiser is its own definition; tst_block_quant checks it against
// exact rational arithmetic). 7 x 80 leaves partial blocks at the right and bottom edges.
struct QuantCase {
    std::string geometry;
    QuantSpec spec;
    std::int64_t rows = 7, cols = 80;
    bool specials = false; // a NaN block and an all-zero block
    int steps = 1;         // delayed scaling: the state carries from step to step
    // > 0: the tensor is stored as {view_split, rows / view_split, cols} and quantised on the
    // rows x cols view FakeQuantArgs::rows names (a convolution's N·H·W x C).
    std::int64_t view_split = 0;
    DType copy = DType::Float32; // the copy's dtype: bfloat16 for a Dense layer's MX copies
};

// A Dense layer's NVFP4 copy: without its tensor scale, which the quantise step writes for the
// GEMM (FakeQuantArgs::gemm_scale), stored in `copy`.
QuantCase gemm_scaled(QuantCase q, DType copy) {
    q.spec.block.tensor_scale_in_gemm = true;
    q.geometry +=
        std::string(", tensor scale in the GEMM, ") + std::string(dtype_name(copy)) + " copy";
    q.copy = copy;
    return q;
}

// NVFP4's random Hadamard transform (recipe.hadamard) on a dW input's column-wise copy: 16x1
// blocks down the rows, the rows padded with zeros to a multiple of 16 in the output.
QuantCase hadamard_case(std::string geometry, std::int64_t rows, std::int64_t cols,
                        bool stochastic) {
    QuantCase q{std::move(geometry), {}, rows, cols};
    q.spec.scaling = QuantScaling::Block;
    q.spec.block.format = BlockFormat::NvFp4;
    q.spec.block.stochastic = stochastic;
    q.spec.block.seed = 1234;
    q.spec.block_rows = 16;
    q.spec.block_cols = 1;
    q.spec.hadamard = true;
    q.spec.hadamard_seed = 77;
    return q;
}

std::vector<double> quant_values(std::int64_t rows, std::int64_t cols, bool specials) {
    std::vector<double> v = random_values(static_cast<std::size_t>(rows * cols), 31, 3.0);
    v[5] = 500.0;       // E4M3 under the floor rule: the block's scale is 1, and 500 clips to 448
    v[cols + 7] = 1e-6; // far below its block's smallest subnormal: flushed to zero
    for (std::int64_t c = 0; c < cols; c += 9) v[static_cast<std::size_t>(3 * cols + c)] *= 1e-3;
    if (specials) {
        for (std::int64_t c = 0; c < 32 && c < cols; ++c)
            v[static_cast<std::size_t>(2 * cols + c)] = 0;
        v[static_cast<std::size_t>(4 * cols + 40)] = std::numeric_limits<double>::quiet_NaN();
    }
    return v;
}

// A quantise case's input shape: rows x cols, or {view_split, rows / view_split, cols}, which the
// case quantises on the rows x cols view (a convolution's N·H·W x C).
Shape quant_case_shape(std::int64_t rows, std::int64_t cols, std::int64_t view_split) {
    return view_split ? Shape{view_split, rows / view_split, cols} : Shape{rows, cols};
}

QuantSpec block_spec(BlockFormat format, std::optional<ScaleRule> rule, int rows, int cols,
                     bool stochastic = false) {
    QuantSpec q;
    q.scaling = QuantScaling::Block;
    q.block.format = format;
    q.block.rule = rule;
    q.block.stochastic = stochastic;
    q.block.seed = 1234;
    q.block_rows = rows;
    q.block_cols = cols;
    return q;
}

void add_fake_quantize(Table& t, DType dt) {
    std::vector<QuantCase> cases;
    for (BlockFormat f : block_formats()) {
        const std::string name(block_format_name(f));
        if (f == BlockFormat::NvFp4) {
            cases.push_back({"nvfp4 1x16", block_spec(f, std::nullopt, 1, 16)});
            cases.push_back({"nvfp4 16x16", block_spec(f, std::nullopt, 16, 16)});
            cases.push_back(
                {"nvfp4 1x16 stochastic seed 1234", block_spec(f, std::nullopt, 1, 16, true)});
            cases.push_back(
                {"nvfp4 1x16 (NaN, zero block)", block_spec(f, std::nullopt, 1, 16), 7, 80, true});
            continue;
        }
        for (ScaleRule rule : {ScaleRule::Floor, ScaleRule::Ceil})
            cases.push_back(
                {name + " 1x32 " + std::string(scale_rule_name(rule)) + " (NaN, zero block)",
                 block_spec(f, rule, 1, 32), 7, 80, true});
    }
    cases.push_back({"mxfp8_e4m3 32x1 floor",
                     block_spec(BlockFormat::MxFp8E4M3, ScaleRule::Floor, 32, 1), 40, 12});
    // The CUDA line kernels' thread shapes (launch_lines): an odd row length (two columns a
    // thread, the last alone, no pair loads); narrow tensors with one or two row blocks a row
    // (a 1- or 32-channel convolution's N·H·W x C view), many rows to a thread block, nearest and
    // stochastic, along rows and down columns; and MX FP8 under stochastic rounding, which the
    // line kernels leave to the in-place block kernel.
    cases.push_back({"mxfp8_e4m3 32x1 floor, odd row length",
                     block_spec(BlockFormat::MxFp8E4M3, ScaleRule::Floor, 32, 1), 40, 13});
    cases.push_back({"nvfp4 1x16, one block a row",
                     block_spec(BlockFormat::NvFp4, std::nullopt, 1, 16), 300, 16});
    cases.push_back({"nvfp4 1x16 stochastic seed 1234, two blocks a row",
                     block_spec(BlockFormat::NvFp4, std::nullopt, 1, 16, true), 300, 32});
    cases.push_back({"nvfp4 16x1 stochastic seed 1234, 32 columns",
                     block_spec(BlockFormat::NvFp4, std::nullopt, 16, 1, true), 300, 32});
    cases.push_back({"mxfp8_e5m2 1x32 stochastic seed 1234",
                     block_spec(BlockFormat::MxFp8E5M2, ScaleRule::Floor, 1, 32, true)});
    // Copies in bfloat16 (PlanBuilder::bfloat16_quant_copies): along rows with partial blocks, a
    // NaN and an all-zero block; down columns with a partial block; mxfp4 with stochastic
    // rounding (a path quantising in float32, then narrowing).
    for (BlockFormat f : {BlockFormat::MxFp8E4M3, BlockFormat::MxFp8E5M2, BlockFormat::MxFp4}) {
        const std::string name(block_format_name(f));
        cases.push_back({name + " 1x32 floor (NaN, zero block), bfloat16 copy",
                         block_spec(f, ScaleRule::Floor, 1, 32), 7, 80, true, 1, 0,
                         DType::BFloat16});
        cases.push_back({name + " 32x1 ceil, bfloat16 copy", block_spec(f, ScaleRule::Ceil, 32, 1),
                         40, 12, false, 1, 0, DType::BFloat16});
    }
    cases.push_back({"mxfp4 1x32 stochastic seed 1234, bfloat16 copy",
                     block_spec(BlockFormat::MxFp4, ScaleRule::Floor, 1, 32, true), 7, 80, false, 1,
                     0, DType::BFloat16});
    cases.push_back(
        {"mxfp8_e4m3 8x8 ceil", block_spec(BlockFormat::MxFp8E4M3, ScaleRule::Ceil, 8, 8)});
    cases.push_back({"mxfp4 1x32 stochastic seed 1234",
                     block_spec(BlockFormat::MxFp4, ScaleRule::Floor, 1, 32, true)});
    cases.push_back({"mxfp8_e4m3 1x32 floor, NHWxC view",
                     block_spec(BlockFormat::MxFp8E4M3, ScaleRule::Floor, 1, 32), 20, 40, false, 1,
                     4});
    cases.push_back({"nvfp4 16x16, conv kernel view",
                     block_spec(BlockFormat::NvFp4, std::nullopt, 16, 16), 36, 20, false, 1, 3});
    cases.push_back(hadamard_case("nvfp4 16x1 hadamard seed 77, rows padded 7->16", 7, 80, false));
    cases.push_back(hadamard_case("nvfp4 16x1 stochastic, hadamard seed 77, 40->48", 40, 12, true));
    // NVFP4 copies that leave the tensor scale to the GEMM (a Dense layer's): along rows (the
    // one-thread-per-block kernel), in 16x16 tiles (the one-warp-per-tile kernel), stochastic,
    // with a NaN (a NaN tensor scale: every value NaN, the GEMM's factor 1), each into bfloat16
    // and float32; and the Hadamard copy (float32).
    const BlockFormat nv = BlockFormat::NvFp4;
    for (DType copy : {DType::BFloat16, DType::Float32}) {
        cases.push_back(gemm_scaled({"nvfp4 1x16", block_spec(nv, std::nullopt, 1, 16)}, copy));
        cases.push_back(gemm_scaled({"nvfp4 16x16", block_spec(nv, std::nullopt, 16, 16)}, copy));
        cases.push_back(gemm_scaled(
            {"nvfp4 1x16 stochastic seed 1234", block_spec(nv, std::nullopt, 1, 16, true)}, copy));
        cases.push_back(gemm_scaled(
            {"nvfp4 16x1 stochastic seed 1234", block_spec(nv, std::nullopt, 16, 1, true), 40, 12},
            copy));
        cases.push_back(gemm_scaled({"nvfp4 16x16 (a NaN: every value NaN)",
                                     block_spec(nv, std::nullopt, 16, 16), 7, 80, true},
                                    copy));
        cases.push_back(gemm_scaled({"nvfp4 16x1 (a NaN: every value NaN)",
                                     block_spec(nv, std::nullopt, 16, 1), 40, 12, true},
                                    copy));
    }
    cases.push_back(
        gemm_scaled(hadamard_case("nvfp4 16x1 stochastic, hadamard seed 77, 40->48", 40, 12, true),
                    DType::Float32));
    // A convolution's NVFP4 copies (float32, the tensor scale left to the pass; issue 26): the
    // first MNIST convolution's input (one channel: a padded block per pixel), its 32-channel
    // gradient row- and column-wise (stochastic), and a kernel in 16x16 tiles on its view.
    cases.push_back(gemm_scaled({"nvfp4 1x16, one channel (NHWxC view)",
                                 block_spec(nv, std::nullopt, 1, 16), 300, 1, false, 1, 3},
                                DType::Float32));
    cases.push_back(gemm_scaled({"nvfp4 1x16 stochastic seed 1234, two blocks a row",
                                 block_spec(nv, std::nullopt, 1, 16, true), 300, 32},
                                DType::Float32));
    cases.push_back(gemm_scaled({"nvfp4 16x1 stochastic seed 1234, 32 columns",
                                 block_spec(nv, std::nullopt, 16, 1, true), 300, 32},
                                DType::Float32));
    cases.push_back(gemm_scaled({"nvfp4 16x16, conv kernel view",
                                 block_spec(nv, std::nullopt, 16, 16), 36, 20, false, 1, 3},
                                DType::Float32));
    for (ElementFormat e : {ElementFormat::Float8E4M3, ElementFormat::Float8E5M2}) {
        QuantSpec current;
        current.scaling = QuantScaling::Current;
        current.element = e;
        cases.push_back({"per-tensor current " + std::string(element_format_name(e)), current});
        QuantSpec delayed = current;
        delayed.scaling = QuantScaling::Delayed;
        delayed.history_len = 4;
        delayed.margin = 1;
        cases.push_back({"per-tensor delayed " + std::string(element_format_name(e)) + ", 2 steps",
                         delayed, 7, 80, false, 2});
    }
    for (const QuantCase& q : cases) {
        const std::string geometry = dims({q.rows, q.cols}) + " " + q.geometry;
        t.add("fake_quantize", dt, geometry, 0.0, 0.0, [dt, q](CaseContext& c) {
            const Shape shape = quant_case_shape(q.rows, q.cols, q.view_split);
            Twin& x = c.make("x", dt, shape, quant_values(q.rows, q.cols, q.specials));
            // Step 2 of a delayed case sees a spike the history has not: it clips.
            std::vector<double> spike = quant_values(q.rows, q.cols, false);
            for (double& v : spike) v *= 4.0;
            Twin& x2 = c.make("x step 2", dt, shape, spike);
            // Under the Hadamard transform the output's rows are padded to a multiple of 16.
            const Shape out_shape =
                q.spec.hadamard ? Shape{(q.rows + 15) / 16 * 16, q.cols} : shape;
            Twin& y = c.make("y", q.copy, out_shape);
            Twin& stats = c.make("stats", DType::Float64, {kQuantStatsValues});
            const auto state_floats = static_cast<std::int64_t>(quant_state_floats(q.spec));
            Twin* state = state_floats ? &c.make("state", DType::Float32, {state_floats}) : nullptr;
            Twin* gemm_scale =
                tensor_scale_in_gemm(q.spec) ? &c.make("gemm_scale", DType::Float32, {1}) : nullptr;
            for (int step = 0; step < q.steps; ++step) {
                c.both([&](Backend& be, int i) {
                    FakeQuantArgs a;
                    a.spec = &q.spec;
                    a.src = step == 0 ? &x.on(i) : &x2.on(i);
                    a.dst = &y.on(i);
                    a.state = state ? &state->on(i) : nullptr;
                    a.stats = &stats.on(i);
                    a.step = static_cast<std::uint64_t>(step + 3);
                    a.rows = q.view_split ? q.rows : 0;
                    a.gemm_scale = gemm_scale ? &gemm_scale->on(i) : nullptr;
                    be.fake_quantize(a);
                });
            }
            std::vector<Twin*> outs{&y, &stats};
            if (state) outs.push_back(state);
            if (gemm_scale) outs.push_back(gemm_scale);
            return outs;
        });
    }
}

// Both copies of one tensor in one call (Backend::fake_quantize_pair, issue 26: the CUDA engine
// reads the source once for MX's 1x32 and 32x1 copies): every output equal to the CPU engine's two
// fake_quantize calls. The CUDA kernel's tiles are 32 rows x 64 columns: 70 x 100 and 70 x 80
// leave partial tiles at both edges (a partial 1x32 block inside the last tile; the second's last
// tile holds a 1x32 block wholly past the last column, which has no scale), 64 x 128 is whole tiles
// in 16-byte loads, 45 x 37 an odd row length (no vector loads); with a NaN (its row block and its
// column block NaN) and an all-zero block; a weight's pair, whose "row-wise" copy runs down the
// columns; a convolution's view; and a 10-column tensor, which the kernel does not take (two calls
// on every engine). NVFP4's pairs (1x16 and 16x1, nearest or stochastic; the same kernel's tiles
// with 16-element blocks) on the same geometries, with the tensor scale left to the GEMM (each
// copy's gemm_scale an output too) or in the values, all-zero row and column blocks, and a NaN
// (the tensor scale NaN: every value NaN); and two NVFP4 pairs it does not take: 16 columns, and
// nearest beside stochastic.
struct QuantPairCase {
    std::string geometry;
    QuantSpec rowwise, columnwise;
    std::int64_t rows, cols;
    bool specials = false; // quant_values' NaN and all-zero row block
    DType copy = DType::BFloat16;
    std::int64_t view_split = 0; // as QuantCase's
    bool zero_blocks = false;    // instead: all-zero row and column blocks and no NaN
};

// A pair case's input: quant_values', or with zero_blocks its all-zero run of row 2 (two 1x16
// blocks, one 1x32) without the NaN, and rows 16 … 31 of column 3 zero (a 16x1 block).
std::vector<double> pair_values(const QuantPairCase& q) {
    std::vector<double> v = quant_values(q.rows, q.cols, q.specials || q.zero_blocks);
    if (q.zero_blocks) {
        v[static_cast<std::size_t>(4 * q.cols + 40)] = 1.5; // the NaN's place
        for (std::int64_t r = 16; r < 32 && r < q.rows; ++r)
            v[static_cast<std::size_t>(r * q.cols + 3)] = 0;
    }
    return v;
}

void add_fake_quantize_pair(Table& t, DType dt) {
    const auto mx = [](BlockFormat f, ScaleRule rule, bool weight = false) {
        const QuantSpec along = block_spec(f, rule, 1, 32), down = block_spec(f, rule, 32, 1);
        return weight ? std::pair{down, along} : std::pair{along, down};
    };
    std::vector<QuantPairCase> cases;
    const auto add = [&](std::string geometry, std::pair<QuantSpec, QuantSpec> specs,
                         std::int64_t rows, std::int64_t cols, bool specials, DType copy,
                         std::int64_t view_split = 0) {
        cases.push_back({std::move(geometry), specs.first, specs.second, rows, cols, specials, copy,
                         view_split});
    };
    const BlockFormat e4m3 = BlockFormat::MxFp8E4M3;
    add("mxfp8_e4m3 1x32 + 32x1 floor (NaN, zero block), bfloat16 copies",
        mx(e4m3, ScaleRule::Floor), 70, 100, true, DType::BFloat16);
    add("mxfp8_e4m3 1x32 + 32x1 ceil (NaN, zero block), float32 copies", mx(e4m3, ScaleRule::Ceil),
        70, 80, true, DType::Float32);
    add("mxfp8_e4m3 1x32 + 32x1 floor, whole tiles", mx(e4m3, ScaleRule::Floor), 64, 128, false,
        DType::BFloat16);
    add("mxfp8_e5m2 1x32 + 32x1 ceil, odd row length", mx(BlockFormat::MxFp8E5M2, ScaleRule::Ceil),
        45, 37, false, DType::BFloat16);
    add("mxfp8_e4m3 32x1 + 1x32 (a weight's pair) floor", mx(e4m3, ScaleRule::Floor, true), 40, 96,
        false, DType::BFloat16);
    add("mxfp6_e3m2 1x32 + 32x1 floor, float32 copies",
        mx(BlockFormat::MxFp6E3M2, ScaleRule::Floor), 33, 64, false, DType::Float32);
    add("mxfp4 1x32 + 32x1 floor (NaN, zero block)", mx(BlockFormat::MxFp4, ScaleRule::Floor), 70,
        100, true, DType::BFloat16);
    add("mxfp8_e4m3 1x32 + 32x1 floor, NHWxC view", mx(e4m3, ScaleRule::Floor), 40, 48, false,
        DType::Float32, 4);
    add("mxfp8_e4m3 1x32 + 32x1 floor, 10 columns (not fused: under one block a row)",
        mx(e4m3, ScaleRule::Floor), 40, 10, false, DType::BFloat16);
    // NVFP4: the tensor scale in the GEMM (a Dense layer's and a convolution's copies) or not;
    // the column-wise copy rounds stochastically on a stream of its own (seed 1237, as
    // QuantRecipe::columnwise offsets it), so a kernel that drew it from the row-wise copy's
    // stream would fail.
    const auto nv = [](bool stochastic, bool in_gemm, bool column_first = false) {
        QuantSpec along = block_spec(BlockFormat::NvFp4, std::nullopt, 1, 16, stochastic);
        QuantSpec down = block_spec(BlockFormat::NvFp4, std::nullopt, 16, 1, stochastic);
        down.block.seed += 3;
        along.block.tensor_scale_in_gemm = down.block.tensor_scale_in_gemm = in_gemm;
        return column_first ? std::pair{down, along} : std::pair{along, down};
    };
    const auto add_zero_blocks = [&](std::string geometry, std::pair<QuantSpec, QuantSpec> specs,
                                     std::int64_t rows, std::int64_t cols, DType copy) {
        cases.push_back(
            {std::move(geometry), specs.first, specs.second, rows, cols, false, copy, 0, true});
    };
    add_zero_blocks("nvfp4 1x16 + 16x1, tensor scale in the GEMM (zero blocks), bfloat16 copies",
                    nv(false, true), 70, 100, DType::BFloat16);
    add("nvfp4 1x16 + 16x1, tensor scale in the GEMM, whole tiles", nv(false, true), 64, 128, false,
        DType::BFloat16);
    add("nvfp4 1x16 + 16x1 (a NaN: every value NaN), float32 copies", nv(false, false), 70, 80,
        true, DType::Float32);
    add("nvfp4 16x1 + 1x16 (column-wise first), odd row length, float32 copies",
        nv(false, false, true), 45, 37, false, DType::Float32);
    add_zero_blocks("nvfp4 1x16 + 16x1 stochastic seeds 1234 and 1237, tensor scale in the GEMM "
                    "(zero blocks), bfloat16 copies",
                    nv(true, true), 70, 100, DType::BFloat16);
    add("nvfp4 1x16 + 16x1 stochastic seeds 1234 and 1237, tensor scale in the GEMM, whole tiles",
        nv(true, true), 64, 128, false, DType::BFloat16);
    add("nvfp4 1x16 + 16x1 stochastic seeds 1234 and 1237, tensor scale in the GEMM, NHWxC view, "
        "float32 copies",
        nv(true, true), 40, 48, false, DType::Float32, 4);
    add("nvfp4 1x16 + 16x1 stochastic seeds 1234 and 1237, 16 columns (not fused: under 32 a row)",
        nv(true, true), 40, 16, false, DType::BFloat16);
    add("nvfp4 1x16 nearest + 16x1 stochastic (not fused: the roundings differ)",
        {nv(false, true).first, nv(true, true).second}, 40, 48, false, DType::BFloat16);
    for (const QuantPairCase& q : cases) {
        const std::string geometry = dims({q.rows, q.cols}) + " " + q.geometry;
        t.add("fake_quantize_pair", dt, geometry, 0.0, 0.0, [dt, q](CaseContext& c) {
            const Shape shape = quant_case_shape(q.rows, q.cols, q.view_split);
            Twin& x = c.make("x", dt, shape, pair_values(q));
            Twin& row_copy = c.make("row-wise copy", q.copy, shape);
            Twin& col_copy = c.make("column-wise copy", q.copy, shape);
            Twin& row_stats = c.make("row-wise stats", DType::Float64, {kQuantStatsValues});
            Twin& col_stats = c.make("column-wise stats", DType::Float64, {kQuantStatsValues});
            std::vector<Twin*> outs{&row_copy, &col_copy, &row_stats, &col_stats};
            // NVFP4's tensor scale for the GEMM, one per copy where the spec leaves it there.
            const auto gemm_scale = [&](const QuantSpec& spec, const char* name) -> Twin* {
                if (!tensor_scale_in_gemm(spec)) return nullptr;
                outs.push_back(&c.make(name, DType::Float32, {1}));
                return outs.back();
            };
            Twin* row_gemm_scale = gemm_scale(q.rowwise, "row-wise gemm_scale");
            Twin* col_gemm_scale = gemm_scale(q.columnwise, "column-wise gemm_scale");
            c.both([&](Backend& be, int i) {
                const auto args = [&](const QuantSpec& spec, Twin& copy, Twin& stats, Twin* scale) {
                    FakeQuantArgs a;
                    a.spec = &spec;
                    a.src = &x.on(i);
                    a.dst = &copy.on(i);
                    a.stats = &stats.on(i);
                    a.step = 5;
                    a.rows = q.view_split ? q.rows : 0;
                    a.gemm_scale = scale ? &scale->on(i) : nullptr;
                    return a;
                };
                be.fake_quantize_pair(args(q.rowwise, row_copy, row_stats, row_gemm_scale),
                                      args(q.columnwise, col_copy, col_stats, col_gemm_scale));
            });
            return outs;
        });
    }
}

// The tolerance of an FP8 GEMM case. Hopper's FP8 tensor cores accumulate in a float with a
// 13-bit mantissa that truncates (Khattak & Mikaitis, "Accurate Models of NVIDIA Tensor Cores",
// arXiv:2512.07004), while the CPU engine adds the exact code products in float32: a float32 C
// differs by some units of 2^-13 (6.3e-4 at k = 96 on the H100 of 2026-11-27,
// bench/gpu/2026-11-27-h100-selftest.txt), so sixteen of them are allowed. bfloat16's own rounding
// (2^-8) is coarser than that and keeps its tolerance.
double fp8_gemm_tolerance(DType out) {
    return std::max(dtype_tolerance(out), 16 * 0x1p-13);
}

// C = A · Bᵀ on float8 codes with their decode scales, on one side of a case (the FP8 GEMM's TN
// layout); the caller adds an epilogue and the workspace.
GemmArgs fp8_tn_args(Twin& a, Twin& b, Twin& a_scale, Twin& b_scale, Twin& c, int side) {
    GemmArgs g;
    g.a = &a.on(side);
    g.b = &b.on(side);
    g.transpose_b = true;
    g.c = &c.on(side);
    g.a_scale = &a_scale.on(side);
    g.b_scale = &b_scale.on(side);
    return g;
}

// FP8 operands with per-tensor decode scales (GemmArgs::a_scale / b_scale), in the one layout
// every engine takes (cuBLASLt's "TN": C = A · Bᵀ), at sizes in multiples of 16 and at sizes the
// CUDA engine pads (the 10-unit output layer's three products, a batch of 100). The case's dtype is
// C's; the codes come from the same random values rounded once to float8.
void add_fp8_gemm(Table& t) {
    struct Fp8Case {
        DType a, b;
        float a_scale, b_scale;
    };
    const Fp8Case kinds[] = {{DType::Float8E4M3, DType::Float8E4M3, 0.3f, 1.7f},
                             {DType::Float8E5M2, DType::Float8E4M3, 2.5f, 0.0625f}};
    struct Size {
        std::int64_t m, k, n;
    };
    // 64x96x48 needs no padding; then a 10-unit layer's forward (n 10), its dX (k 10), its dW
    // (n 10 after a reduction over the batch) and a batch of 100 (m 100).
    const Size sizes[] = {{64, 96, 48}, {64, 96, 10}, {64, 10, 48}, {48, 64, 10}, {100, 32, 48}};
    for (const Size& s : sizes)
        for (DType out : {DType::Float32, DType::BFloat16})
            for (const Fp8Case& q : kinds) {
                char scales[64];
                std::snprintf(scales, sizeof scales, "scales %g x %g", double(q.a_scale),
                              double(q.b_scale));
                const std::string geometry = dims({s.m, s.k, s.n}) + " " +
                                             std::string(dtype_name(q.a)) + " x " +
                                             std::string(dtype_name(q.b)) + " " + scales;
                const double tol = fp8_gemm_tolerance(out);
                t.add("gemm fp8 C = A B^T", out, geometry, tol, tol, [q, out, s](CaseContext& c) {
                    Twin& a = c.make("a", q.a, {s.m, s.k}, random_values(s.m * s.k, 31, 2.0));
                    Twin& b = c.make("b", q.b, {s.n, s.k}, random_values(s.n * s.k, 32, 0.5));
                    Twin& sa = c.make("a_scale", DType::Float32, {1}, {double(q.a_scale)});
                    Twin& sb = c.make("b_scale", DType::Float32, {1}, {double(q.b_scale)});
                    Twin& y = c.make("y", out, {s.m, s.n});
                    c.both([&](Backend& be, int i) {
                        GemmArgs g = fp8_tn_args(a, b, sa, sb, y, i);
                        g.workspace = c.workspace(i, be.gemm_workspace_bytes(g));
                        be.gemm(g);
                    });
                    return std::vector<Twin*>{&y};
                });
                t.cases.back().needs_fp8_gemm = true;
            }
    // The epilogue after the scales (a Dense layer's forward under recipe.gemm "fp8"): bias in
    // bfloat16, the activation, and the pre-activation GELU's backward reads; also at 10 units
    // (the padded accumulator's row stride).
    for (const Size& s : {Size{64, 96, 48}, Size{100, 96, 10}})
        for (DType out : {DType::Float32, DType::BFloat16})
            for (Activation act : {Activation::Relu, Activation::Gelu}) {
                const std::string geometry = dims({s.m, s.k, s.n}) +
                                             " float8_e4m3 x float8_e4m3 + bias + " +
                                             std::string(activation_name(act)) + ", pre";
                const double tol = fp8_gemm_tolerance(out);
                t.add("gemm fp8 C = act(A B^T + bias)", out, geometry, tol, tol,
                      [act, out, s](CaseContext& c) {
                          Twin& a = c.make("a", DType::Float8E4M3, {s.m, s.k},
                                           random_values(s.m * s.k, 33, 2.0));
                          Twin& b = c.make("b", DType::Float8E4M3, {s.n, s.k},
                                           random_values(s.n * s.k, 34, 0.5));
                          Twin& sa = c.make("a_scale", DType::Float32, {1}, {0.75});
                          Twin& sb = c.make("b_scale", DType::Float32, {1}, {0.125});
                          Twin& bias =
                              c.make("bias", DType::BFloat16, {s.n}, random_values(s.n, 35, 1.0));
                          Twin& pre = c.make("pre", out, {s.m, s.n});
                          Twin& y = c.make("y", out, {s.m, s.n});
                          c.both([&](Backend& be, int i) {
                              GemmArgs g = fp8_tn_args(a, b, sa, sb, y, i);
                              g.bias = &bias.on(i);
                              g.epilogue = act;
                              g.pre_activation = &pre.on(i);
                              g.workspace = c.workspace(i, be.gemm_workspace_bytes(g));
                              be.gemm(g);
                          });
                          return std::vector<Twin*>{&y, &pre};
                      });
                t.cases.back().needs_fp8_gemm = true;
            }
    // A bias in C's dtype and no pre-activation, alone or before a ReLU whose NaN need not
    // propagate (set_propagate_nan(false), as the Trainer runs mixed policies): what the CUDA
    // engine hands to cuBLASLt's own FP8 epilogue (BIAS, RELU_BIAS) instead of its kernel.
    for (DType out : {DType::Float32, DType::BFloat16})
        for (Activation act : {Activation::Linear, Activation::Relu}) {
            const std::string geometry =
                std::string("64x96x48 float8_e4m3 x float8_e4m3 + bias in C's dtype") +
                (act == Activation::Relu ? " + relu, NaN may drop" : "");
            const double tol = fp8_gemm_tolerance(out);
            t.add("gemm fp8 C = act(A B^T + bias)", out, geometry, tol, tol,
                  [act, out](CaseContext& c) {
                      Twin& a =
                          c.make("a", DType::Float8E4M3, {64, 96}, random_values(64 * 96, 36, 2.0));
                      Twin& b =
                          c.make("b", DType::Float8E4M3, {48, 96}, random_values(48 * 96, 37, 0.5));
                      Twin& sa = c.make("a_scale", DType::Float32, {1}, {0.75});
                      Twin& sb = c.make("b_scale", DType::Float32, {1}, {0.125});
                      Twin& bias = c.make("bias", out, {48}, random_values(48, 38, 1.0));
                      Twin& y = c.make("y", out, {64, 48});
                      c.both([&](Backend& be, int i) {
                          GemmArgs g = fp8_tn_args(a, b, sa, sb, y, i);
                          g.bias = &bias.on(i);
                          g.epilogue = act;
                          g.workspace = c.workspace(i, be.gemm_workspace_bytes(g));
                          be.set_propagate_nan(false);
                          try {
                              be.gemm(g);
                          } catch (...) {
                              be.set_propagate_nan(true);
                              throw;
                          }
                          be.set_propagate_nan(true);
                      });
                      return std::vector<Twin*>{&y};
                  });
            t.cases.back().needs_fp8_gemm = true;
        }
}

// n values for quantize_fp8's ties case: the format's largest value first (the amax, so a current
// or first delayed scale is exactly 1), then for each positive value v below it, v, the midpoint
// to the next value and the float32 either side of that midpoint, each with both signs; zeros
// after.
std::vector<double> fp8_tie_values(ElementFormat f, std::int64_t n) {
    const ElementSpec& spec = element_spec(f);
    std::vector<double> v{spec.max_finite};
    for (std::uint32_t c = 0; c + 1 < (1u << (spec.width - 1)); ++c) {
        const double a = decode_element(c, f), b = decode_element(c + 1, f);
        if (!std::isfinite(b) || b > spec.max_finite) break;
        const auto mid = static_cast<float>((a + b) / 2); // a few bits: exact
        for (double x :
             {a, static_cast<double>(mid), static_cast<double>(std::nextafter(mid, 2 * mid + 1)),
              static_cast<double>(std::nextafter(mid, 0.0f))}) {
            v.push_back(x);
            v.push_back(-x);
        }
    }
    v.resize(static_cast<std::size_t>(n), 0.0);
    return v;
}

// Per-tensor FP8 into codes for the FP8 GEMM (Backend::quantize_fp8), both layouts, exact on every
// engine: the codes, the decode scale, the stats and delayed scaling's state (over two steps, the
// second a spike the history has not seen). In `dt`, two shapes.
void add_quantize_fp8(Table& t, DType dt) {
    struct Fp8QuantCase {
        std::string geometry;
        QuantSpec spec;
        int steps = 1;
    };
    std::vector<Fp8QuantCase> cases;
    for (ElementFormat e : {ElementFormat::Float8E4M3, ElementFormat::Float8E5M2}) {
        QuantSpec current;
        current.scaling = QuantScaling::Current;
        current.element = e;
        cases.push_back({"current " + std::string(element_format_name(e)), current});
        QuantSpec delayed = current;
        delayed.scaling = QuantScaling::Delayed;
        delayed.history_len = 4;
        delayed.margin = 1;
        cases.push_back(
            {"delayed " + std::string(element_format_name(e)) + ", 2 steps", delayed, 2});
    }
    // 48 x 80: one partial 64 x 64 tile of the CUDA kernel and a partial second column of tiles,
    // two-byte stores; 67 x 130: two rows of tiles and three columns, an odd row count (byte
    // stores for codes^T); 16 x 64 "ties": every value of the format, every midpoint between two
    // and the float32 either side of it, with the amax at the format's largest value so that the
    // scale is exactly 1 (the CUDA engine's hardware conversion on exact ties); 33 x 75: an odd
    // row length, so the kernel loads and stores one element at a time (the others two).
    struct Shape {
        std::int64_t rows, cols;
        bool ties;
    };
    for (const Shape shape :
         {Shape{48, 80, false}, Shape{67, 130, false}, Shape{16, 64, true}, Shape{33, 75, false}})
        for (const Fp8QuantCase& q : cases) {
            const std::int64_t rows = shape.rows, cols = shape.cols;
            const bool ties = shape.ties;
            if (rows != 48 && q.steps > 1) continue; // delayed scaling's state: once is enough
            const std::string geometry = dims({rows, cols}) + " " + q.geometry +
                                         (ties ? " (ties)" : "") + ", codes and codes^T";
            t.add(
                "quantize_fp8", dt, geometry, 0.0, 0.0, [dt, q, rows, cols, ties](CaseContext& c) {
                    const DType code = q.spec.element == ElementFormat::Float8E5M2
                                           ? DType::Float8E5M2
                                           : DType::Float8E4M3;
                    Twin& x = c.make("x", dt, {rows, cols},
                                     ties ? fp8_tie_values(q.spec.element, rows * cols)
                                          : quant_values(rows, cols, true));
                    std::vector<double> spike = quant_values(rows, cols, false);
                    for (double& v : spike) v *= 4.0;
                    Twin& x2 = c.make("x step 2", dt, {rows, cols}, spike);
                    Twin& codes = c.make("codes", code, {rows, cols});
                    Twin& codes_t = c.make("codes^T", code, {cols, rows});
                    Twin& scale_inv = c.make("scale_inv", DType::Float32, {1});
                    Twin& stats = c.make("stats", DType::Float64, {kQuantStatsValues});
                    const auto state_floats = static_cast<std::int64_t>(quant_state_floats(q.spec));
                    Twin* state =
                        state_floats ? &c.make("state", DType::Float32, {state_floats}) : nullptr;
                    for (int step = 0; step < q.steps; ++step)
                        c.both([&](Backend& be, int i) {
                            Fp8QuantArgs a;
                            a.spec = &q.spec;
                            a.src = step == 0 ? &x.on(i) : &x2.on(i);
                            a.codes = &codes.on(i);
                            a.codes_t = &codes_t.on(i);
                            a.scale_inv = &scale_inv.on(i);
                            a.state = state ? &state->on(i) : nullptr;
                            a.stats = &stats.on(i);
                            be.quantize_fp8(a);
                        });
                    std::vector<Twin*> outs{&codes, &codes_t, &scale_inv, &stats};
                    if (state) outs.push_back(state);
                    return outs;
                });
            t.cases.back().needs_fp8_gemm = true;
        }
}

// A ReLU layer's dZ, bias gradient and FP8 codes in one step
// (Backend::activation_backward_bias_grad_fp8), in place as the plan runs it, under delayed
// scaling: the CUDA engine's fused pass (dZ formed from dY and y as the tiles load, never stored)
// against the CPU engine's activation_backward_bias_grad then quantize_fp8. Two rows each: the
// codes, scale, stats and state exactly; the bias gradient at the dtype's tolerance (its partial
// sums run by row tile). 130 x 96: two chunks of the sums (two row tiles, then one partial tile),
// two column tiles, both layouts, two steps (the second a spike the history has not seen);
// 67 x 40: only the transposed codes (a first layer's dZ, which no dX reads), an odd row count
// (byte stores), one step; 45 x 37: odd rows and columns (one element a load and a store).
void add_relu_grad_fp8(Table& t, DType dt) {
    struct Shape {
        std::int64_t rows, cols;
        ElementFormat element;
        bool rowwise;
        int steps;
    };
    for (const Shape shape : {Shape{130, 96, ElementFormat::Float8E5M2, true, 2},
                              Shape{67, 40, ElementFormat::Float8E4M3, false, 1},
                              Shape{45, 37, ElementFormat::Float8E4M3, true, 1}}) {
        QuantSpec spec;
        spec.scaling = QuantScaling::Delayed;
        spec.element = shape.element;
        spec.history_len = 4;
        spec.margin = 1;
        const std::string layouts = shape.rowwise ? "codes and codes^T" : "codes^T only";
        const std::string geometry = dims({shape.rows, shape.cols}) + " delayed " +
                                     std::string(element_format_name(shape.element)) + ", " +
                                     std::to_string(shape.steps) +
                                     (shape.steps > 1 ? " steps, " : " step, ") + layouts;
        // Runs the steps on both engines; `codes_side`: return the codes' outputs, else db.
        auto body = [dt, spec, shape](bool codes_side) {
            return [dt, spec, shape, codes_side](CaseContext& c) {
                const std::int64_t rows = shape.rows, cols = shape.cols;
                const DType code = spec.element == ElementFormat::Float8E5M2 ? DType::Float8E5M2
                                                                             : DType::Float8E4M3;
                Twin& x = c.make("x", dt, {rows, cols}, random_values(rows * cols, 1, 3.0));
                Twin& y = c.make("y", dt, {rows, cols});
                std::vector<Twin*> dy{
                    &c.make("dy then dz", dt, {rows, cols}, quant_values(rows, cols, true))};
                if (shape.steps > 1) {
                    std::vector<double> spike = quant_values(rows, cols, false);
                    for (double& v : spike) v *= 4.0;
                    dy.push_back(&c.make("dy then dz, step 2", dt, {rows, cols}, spike));
                }
                Twin& db = c.make("db", dt, {cols});
                Twin* codes = shape.rowwise ? &c.make("codes", code, {rows, cols}) : nullptr;
                Twin& codes_t = c.make("codes^T", code, {cols, rows});
                Twin& scale_inv = c.make("scale_inv", DType::Float32, {1});
                Twin& stats = c.make("stats", DType::Float64, {kQuantStatsValues});
                Twin& state = c.make("state", DType::Float32,
                                     {static_cast<std::int64_t>(quant_state_floats(spec))});
                for (int step = 0; step < shape.steps; ++step)
                    c.both([&](Backend& be, int i) {
                        Fp8QuantArgs a;
                        a.spec = &spec;
                        a.codes = codes ? &codes->on(i) : nullptr;
                        a.codes_t = &codes_t.on(i);
                        a.scale_inv = &scale_inv.on(i);
                        a.state = &state.on(i);
                        a.stats = &stats.on(i);
                        Tensor& grad = dy[static_cast<std::size_t>(step)]->on(i);
                        be.activation_forward(Activation::Relu, x.on(i), y.on(i));
                        be.activation_backward_bias_grad_fp8(Activation::Relu, x.on(i), y.on(i),
                                                             grad, grad, db.on(i), a);
                    });
                if (!codes_side) return std::vector<Twin*>{&db};
                std::vector<Twin*> outs{&codes_t, &scale_inv, &stats, &state};
                if (codes) outs.insert(outs.begin(), codes);
                return outs;
            };
        };
        t.add("drelu+bias_grad+fp8 codes", dt, geometry + ": the codes", 0.0, 0.0, body(true));
        t.cases.back().needs_fp8_gemm = true;
        const double tol = dtype_tolerance(dt);
        t.add("drelu+bias_grad+fp8 codes", dt, geometry + ": the bias gradient", tol, tol,
              body(false));
        t.cases.back().needs_fp8_gemm = true;
    }
}

} // namespace

double dtype_tolerance(DType dtype) {
    switch (dtype) {
    case DType::Float64:
        return 1e-9;
    case DType::Float32:
        return 2e-4;
    case DType::Float16:
        return 1e-2;
    case DType::BFloat16:
        return 5e-2;
    default:
        return 0.0; // integers and masks: exact
    }
}

std::vector<OpCase> op_cases() {
    Table t;
    for (DType dt : kDTypes) {
        add_cast_and_fill(t, dt);
        add_gemm(t, dt);
        add_activations(t, dt);
        add_softmax_xent(t, dt);
        add_maxpool(t, dt);
        add_conv2d(t, dt);
        add_normalization(t, dt);
        add_gather(t, dt);
        add_dropout_and_histogram(t, dt);
        add_step_end(t, dt);
        add_fake_quantize(t, dt);
        add_fake_quantize_pair(t, dt);
        add_quantize_fp8(t, dt);
        if (dt == DType::Float32 || dt == DType::BFloat16) add_relu_grad_fp8(t, dt);
    }
    add_fp8_gemm(t);
    return std::move(t.cases);
}

std::string describe(const OpCase& c) {
    return c.name + " " + c.geometry + " " + std::string(dtype_name(c.dtype));
}

} // namespace mantissa
