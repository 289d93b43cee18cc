// Tests of the dtype policy table (Keras names) and of dtype name parsing.
// Unknown names must fail with a message that lists every valid name, since users read it.
#include <QTest>

#include "core/error.h"
#include "core/numeric/dtype.h"
#include "core/numeric/policy.h"

using namespace mantissa;

Q_DECLARE_METATYPE(mantissa::DType)

class TestPolicy : public QObject {
    Q_OBJECT

private slots:
    void policyDtypes_data();
    void policyDtypes();
    void tableIsComplete();
    void unknownPolicyListsValidNames_data();
    void unknownPolicyListsValidNames();
    void dtypeAliases_data();
    void dtypeAliases();
    void unknownDtype_data();
    void unknownDtype();
    void dtypeProperties();
};

void TestPolicy::policyDtypes_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<DType>("compute");
    QTest::addColumn<DType>("variable");
    QTest::addColumn<bool>("mixed");
    QTest::addColumn<bool>("lossScaling");
    QTest::newRow("float32") << "float32" << DType::Float32 << DType::Float32 << false << false;
    QTest::newRow("float64") << "float64" << DType::Float64 << DType::Float64 << false << false;
    QTest::newRow("float16") << "float16" << DType::Float16 << DType::Float16 << false << true;
    QTest::newRow("bfloat16") << "bfloat16" << DType::BFloat16 << DType::BFloat16 << false << false;
    QTest::newRow("mixed_float16")
        << "mixed_float16" << DType::Float16 << DType::Float32 << true << true;
    QTest::newRow("mixed_bfloat16")
        << "mixed_bfloat16" << DType::BFloat16 << DType::Float32 << true << false;
}

void TestPolicy::policyDtypes() {
    QFETCH(QString, name);
    QFETCH(DType, compute);
    QFETCH(DType, variable);
    QFETCH(bool, mixed);
    QFETCH(bool, lossScaling);
    const Policy p = policy_from_name(name.toStdString());
    QCOMPARE(QString::fromStdString(p.name), name);
    QCOMPARE(p.compute, compute);
    QCOMPARE(p.variable, variable);
    QCOMPARE(p.is_mixed(), mixed);
    QCOMPARE(loss_scaling_recommended(p), lossScaling);
    QVERIFY(!policy_description(p).empty());
}

void TestPolicy::tableIsComplete() {
    QCOMPARE(all_policies().size(), std::size_t(13)); // 6 Keras policies + 7 quantised (issue 18)
    for (const Policy& p : all_policies()) QCOMPARE(policy_from_name(p.name), p);
}

void TestPolicy::unknownPolicyListsValidNames_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("typo") << "mixed_float61";
    QTest::newRow("empty") << "";
    QTest::newRow("case") << "Float32";
    QTest::newRow("dtype alias is not a policy") << "fp16";
}

void TestPolicy::unknownPolicyListsValidNames() {
    QFETCH(QString, name);
    try {
        policy_from_name(name.toStdString());
        QFAIL("accepted an unknown policy");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::Config);
        const QString message = e.what();
        QVERIFY2(message.contains("'" + name + "'"), qPrintable(message));
        for (const Policy& p : all_policies())
            QVERIFY2(message.contains(QString::fromStdString(p.name)), qPrintable(message));
    }
}

void TestPolicy::dtypeAliases_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<DType>("dtype");
    const auto row = [](const char* name, DType d) { QTest::newRow(name) << QString(name) << d; };
    row("float64", DType::Float64);
    row("double", DType::Float64);
    row("fp64", DType::Float64);
    row("float32", DType::Float32);
    row("f32", DType::Float32);
    row("float16", DType::Float16);
    row("fp16", DType::Float16);
    row("half", DType::Float16);
    row("bfloat16", DType::BFloat16);
    row("bf16", DType::BFloat16);
    row("float8_e4m3", DType::Float8E4M3);
    row("e4m3", DType::Float8E4M3);
    row("float8_e4m3fn", DType::Float8E4M3);
    row("float8_e5m2", DType::Float8E5M2);
    row("e5m2", DType::Float8E5M2);
    row("uint8", DType::UInt8);
    row("int32", DType::Int32);
}

void TestPolicy::dtypeAliases() {
    QFETCH(QString, name);
    QFETCH(DType, dtype);
    QCOMPARE(dtype_from_name(name.toStdString()), dtype);
    // Canonical names round-trip.
    QCOMPARE(dtype_from_name(dtype_name(dtype)), dtype);
}

void TestPolicy::unknownDtype_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("typo") << "float61";
    QTest::newRow("empty") << "";
    QTest::newRow("upper case") << "FP16";
    QTest::newRow("tf32") << "tf32";
}

void TestPolicy::unknownDtype() {
    QFETCH(QString, name);
    try {
        dtype_from_name(name.toStdString());
        QFAIL("accepted an unknown dtype");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::Config);
        const QString message = e.what();
        QVERIFY2(message.contains("'" + name + "'"), qPrintable(message));
        for (DType d : floating_dtypes())
            QVERIFY2(message.contains(QString::fromUtf8(dtype_name(d).data())),
                     qPrintable(message));
    }
}

void TestPolicy::dtypeProperties() {
    QCOMPARE(dtype_size(DType::Float64), std::size_t(8));
    QCOMPARE(dtype_size(DType::BFloat16), std::size_t(2));
    QCOMPARE(dtype_size(DType::Float8E5M2), std::size_t(1));
    QVERIFY(is_emulated_float(DType::Float16));
    QVERIFY(!is_emulated_float(DType::Float32));
    QVERIFY(!is_floating(DType::Int32));
    QCOMPARE(floating_dtypes().size(), std::size_t(6));
    QCOMPARE(floating_dtypes().front(), DType::Float64);
}

QTEST_APPLESS_MAIN(TestPolicy)
#include "tst_policy.moc"
