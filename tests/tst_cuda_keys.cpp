// The CUDA engine's host-side logic that runs without a GPU: the cuBLASLt plan key and fusion
// decision, the cuDNN padding test, and the factory's fallback when no GPU is usable.
#include <QtTest>

#include <string>

#include "core/backend/cuda/conv_key.h"
#include "core/backend/cuda/gemm_key.h"
#include "core/backend/factory/backend_factory.h"
#include "core/error.h"

using namespace mantissa;
using namespace mantissa::cuda;

Q_DECLARE_METATYPE(mantissa::DType)
Q_DECLARE_METATYPE(mantissa::Activation)
Q_DECLARE_METATYPE(mantissa::cuda::LtEpilogue)

namespace {

GemmKey key(DType ab, DType c, bool bias, Activation act, bool pre, std::int64_t n = 64) {
    GemmKey k;
    k.m = 128;
    k.n = n;
    k.k = 256;
    k.ab_dtype = ab;
    k.c_dtype = c;
    k.has_bias = bias;
    k.bias_dtype = c;
    k.epilogue = act;
    k.has_pre = pre;
    k.pre_dtype = c;
    return k;
}

bool has_gpu() {
    return available_devices().size() > 1;
}

} // namespace

class TestCudaKeys : public QObject {
    Q_OBJECT

private slots:
    void fusion_data() {
        QTest::addColumn<DType>("ab");
        QTest::addColumn<DType>("c");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<Activation>("act");
        QTest::addColumn<bool>("pre");
        QTest::addColumn<qint64>("n");
        QTest::addColumn<LtEpilogue>("epilogue");
        QTest::addColumn<bool>("kernel");
        QTest::addColumn<bool>("acc_in_workspace");
        using A = Activation;
        using E = LtEpilogue;
        const auto F16 = DType::Float16, F32 = DType::Float32, F64 = DType::Float64;
        QTest::newRow("fp16 bias+relu fused")
            << F16 << F16 << true << A::Relu << false << 64ll << E::ReluBias << false << false;
        QTest::newRow("bf16 bias fused") << DType::BFloat16 << DType::BFloat16 << true << A::Linear
                                         << false << 64ll << E::Bias << false << false;
        QTest::newRow("fp32 plain")
            << F32 << F32 << false << A::Linear << false << 64ll << E::Default << false << false;
        QTest::newRow("fp16 gelu with pre: aux")
            << F16 << F16 << true << A::Gelu << true << 64ll << E::GeluAuxBias << false << false;
        QTest::newRow("fp16 gelu with pre, n=10: kernel via accumulator")
            << F16 << F16 << true << A::Gelu << true << 10ll << E::Default << true << true;
        QTest::newRow("fp16 tanh: kernel via accumulator")
            << F16 << F16 << true << A::Tanh << false << 64ll << E::Default << true << true;
        QTest::newRow("fp32 sigmoid: kernel in place")
            << F32 << F32 << true << A::Sigmoid << false << 64ll << E::Default << true << false;
        QTest::newRow("fp64 bias: kernel in place (no fp64 epilogues)")
            << F64 << F64 << true << A::Relu << false << 64ll << E::Default << true << false;
        QTest::newRow("fp64 plain product")
            << F64 << F64 << false << A::Linear << false << 64ll << E::Default << false << false;
        QTest::newRow("fp16 in, fp32 out, fused")
            << F16 << F32 << true << A::Relu << false << 64ll << E::ReluBias << false << false;
        QTest::newRow("fp32 in, fp16 out: accumulator")
            << F32 << F16 << false << A::Linear << false << 64ll << E::Default << true << true;
        QTest::newRow("softmax epilogue: kernel")
            << F32 << F32 << true << A::Softmax << false << 64ll << E::Default << true << false;
    }
    void fusion() {
        QFETCH(DType, ab);
        QFETCH(DType, c);
        QFETCH(bool, bias);
        QFETCH(Activation, act);
        QFETCH(bool, pre);
        QFETCH(qint64, n);
        QFETCH(LtEpilogue, epilogue);
        QFETCH(bool, kernel);
        QFETCH(bool, acc_in_workspace);
        const GemmFusion f = gemm_fusion(key(ab, c, bias, act, pre, n));
        QCOMPARE(lt_epilogue_name(f.lt_epilogue), lt_epilogue_name(epilogue));
        QCOMPARE(f.kernel_epilogue, kernel);
        QCOMPARE(f.acc_in_workspace, acc_in_workspace);
        QCOMPARE(f.acc_bytes > 0, acc_in_workspace);
        QCOMPARE(f.softmax_after, act == Activation::Softmax);
    }

    // The retry without cuBLASLt's epilogue always ends in the kernel epilogue.
    void retry_without_lt_epilogue() {
        GemmKey k = key(DType::Float16, DType::Float16, true, Activation::Relu, false);
        k.allow_lt_epilogue = false;
        const GemmFusion f = gemm_fusion(k);
        QCOMPARE(f.lt_epilogue, LtEpilogue::Default);
        QVERIFY(f.kernel_epilogue);
        QVERIFY(f.acc_in_workspace); // a 16-bit C: the float32 product waits in the workspace
        QCOMPARE(f.acc_bytes, std::size_t(128 * 64 * 4));
    }

    void key_identity() {
        const GemmKey a = key(DType::Float16, DType::Float16, true, Activation::Relu, false);
        GemmKey b = a;
        QVERIFY(a == b);
        QCOMPARE(GemmKeyHash{}(a), GemmKeyHash{}(b));
        b.m = 129;
        QVERIFY(!(a == b));
        QVERIFY(GemmKeyHash{}(a) != GemmKeyHash{}(b));
        b = a;
        b.c_dtype = DType::Float32;
        QVERIFY(!(a == b));
        b = a;
        b.tf32 = true;
        QVERIFY(!(a == b));
    }

    // gemm_key reads shapes as the CPU engine does and keeps TF32 only for float32 operands.
    void key_from_args() {
        Tensor x{"x", DType::Float16, {32, 100}}, w{"w", DType::Float16, {10, 100}};
        Tensor y{"y", DType::Float16, {32, 10}};
        GemmArgs args;
        args.a = &x;
        args.b = &w;
        args.transpose_b = true;
        args.c = &y;
        const GemmKey k = gemm_key(args, true);
        QCOMPARE(k.m, 32);
        QCOMPARE(k.k, 100);
        QCOMPARE(k.n, 10);
        QVERIFY(!k.tf32);
        x.dtype = w.dtype = y.dtype = DType::Float32;
        QVERIFY(gemm_key(args, true).tf32);
    }

    void cudnn_padding_data() {
        QTest::addColumn<qint64>("in");
        QTest::addColumn<qint64>("kernel");
        QTest::addColumn<qint64>("stride");
        QTest::addColumn<qint64>("pad_top");
        QTest::addColumn<qint64>("out");
        QTest::addColumn<bool>("fits");
        QTest::newRow("valid 3x3") << 28ll << 3ll << 1ll << 0ll << 26ll << true;
        QTest::newRow("same 3x3 (symmetric)") << 28ll << 3ll << 1ll << 1ll << 28ll << true;
        QTest::newRow("same 4x4 (one more row below)")
            << 28ll << 4ll << 1ll << 1ll << 28ll << false;
        QTest::newRow("same 3x3 stride 2 (pad below only)")
            << 28ll << 3ll << 2ll << 0ll << 14ll << false;
        QTest::newRow("valid 2x2 stride 2") << 28ll << 2ll << 2ll << 0ll << 14ll << true;
    }
    void cudnn_padding() {
        QFETCH(qint64, in);
        QFETCH(qint64, kernel);
        QFETCH(qint64, stride);
        QFETCH(qint64, pad_top);
        QFETCH(qint64, out);
        QFETCH(bool, fits);
        Conv2dArgs g;
        g.batch = 2;
        g.in_h = g.in_w = in;
        g.in_c = 1;
        g.out_h = g.out_w = out;
        g.out_c = 8;
        g.kernel_h = g.kernel_w = kernel;
        g.stride_h = g.stride_w = stride;
        g.pad_top = g.pad_left = pad_top;
        QCOMPARE(cudnn_padding_fits(g), fits);
    }

    void conv_key_identity() {
        Conv2dArgs g;
        g.batch = 4;
        g.in_h = g.in_w = 28;
        g.out_h = g.out_w = 26;
        const ConvKey a = conv_key(g, DType::Float32, true);
        QVERIFY(a.tf32);
        QVERIFY(!conv_key(g, DType::Float16, true).tf32); // TF32 means nothing for 16-bit data
        ConvKey b = a;
        QVERIFY(a == b);
        QCOMPARE(ConvKeyHash{}(a), ConvKeyHash{}(b));
        b.geometry.batch = 5;
        QVERIFY(!(a == b));
    }

    // Without a usable GPU: auto falls back to the CPU and says so; cuda fails clearly.
    void factory_without_gpu() {
        if (has_gpu()) QSKIP("a GPU is present: the fallback cannot be observed here");
        BackendChoice choice = create_backend("auto");
        QVERIFY(choice.backend);
        QCOMPARE(QString::fromStdString(choice.backend->info().id), QString("cpu"));
        QVERIFY2(choice.note.find("no usable GPU") != std::string::npos, choice.note.c_str());
        QVERIFY2(choice.note.find("using the CPU engine") != std::string::npos,
                 choice.note.c_str());
        for (const char* device : {"cuda", "cuda:0", "cuda:3"}) {
            try {
                create_backend(device);
                QFAIL("create_backend(cuda) succeeded without a GPU");
            } catch (const Error& err) {
                QCOMPARE(err.kind(), ErrorKind::Device);
                const std::string message = err.what();
                QVERIFY2(message.find(device) != std::string::npos, err.what());
                QVERIFY2(message.find("--device cpu") != std::string::npos, err.what());
            }
        }
    }

    void factory_rejects_bad_device_strings() {
        for (const char* device : {"gpu", "cuda:", "cuda:x", "cuda:-1", "CPU"}) {
            try {
                create_backend(device);
                QFAIL(device);
            } catch (const Error& err) {
                QCOMPARE(err.kind(), ErrorKind::InvalidArgument);
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaKeys)
#include "tst_cuda_keys.moc"
