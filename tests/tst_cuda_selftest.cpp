// The GPU self-test's op-parity harness (core/check's op table), run where no GPU exists:
// `selftest --self-parity` puts a second CPU engine in the GPU's place, so every op x dtype must
// run and agree exactly. A broken
// shape or a missing tensor in the harness fails here instead of on a borrowed GPU.
#include <QtTest>

#include "tests/cli_runner.h"

using mantissa::test::run_cli;

class TestCudaSelftest : public QObject {
    Q_OBJECT

private slots:
    void harness_runs_every_op_and_agrees_with_itself() {
        const auto run = run_cli({"selftest", "--self-parity"});
        QVERIFY2(run.status == 0, qPrintable(run.out + run.err));
        QVERIFY2(!run.out.contains("FAIL"), qPrintable(run.out));
        for (const char* op :
             {"gemm+bias+gelu", "gemm dW", "gemm dX", "bias_grad", "activation softmax",
              "softmax_cross_entropy", "maxpool", "conv2d", "dropout", "exponent_histogram",
              "unscale+adam", "unscale+rmsprop", "mlp step"})
            QVERIFY2(run.out.contains(op), op);
        for (const char* dtype : {"float64", "float32", "float16", "bfloat16"})
            QVERIFY2(run.out.contains(dtype), dtype);
        // Two instances of one engine: every error is exactly zero. The error is the column
        // after the dtype (op lines) or the policy (training lines).
        const QStringList lines = run.out.split('\n');
        const QStringList dtypes = {"float64",  "float32",       "float16",
                                    "bfloat16", "mixed_float16", "mixed_bfloat16"};
        int rows = 0;
        for (const QString& line : lines) {
            if (!line.endsWith(" ok")) continue;
            const QStringList cols = line.split(' ', Qt::SkipEmptyParts);
            qsizetype at = -1;
            for (qsizetype i = 0; i < cols.size(); ++i)
                if (dtypes.contains(cols[i])) at = i;
            QVERIFY2(at >= 0 && at + 1 < cols.size(), qPrintable(line));
            bool number = false;
            QCOMPARE(cols[at + 1].toDouble(&number), 0.0);
            QVERIFY2(number, qPrintable(line));
            ++rows;
        }
        QVERIFY2(rows >= 4 * 20, qPrintable(QString::number(rows)));
    }
};

QTEST_APPLESS_MAIN(TestCudaSelftest)
#include "tst_cuda_selftest.moc"
