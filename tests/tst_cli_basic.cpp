// Runs the real mantissa-cli binary: the float lab (`cast`), `policies`, help and exit statuses,
// and selftest's contract with scripts (--list, --require-gpu). These are the commands a learner
// types first, so their output and errors are a contract.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "core/backend/factory/backend_factory.h"
#include "tests/cli_runner.h"

using mantissa::test::CliRun;
using mantissa::test::run_cli;

namespace {

// The JSON object of one dtype among `cast --json` lines.
QJsonObject json_for(const QString& out, const QString& dtype) {
    for (const QString& line : out.split('\n', Qt::SkipEmptyParts)) {
        const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
        if (o.value("dtype").toString() == dtype) return o;
    }
    return {};
}

} // namespace

class TestCliBasic : public QObject {
    Q_OBJECT

private slots:
    void castSquareOverflowsFloat16();
    void castSquareUnderflowsFloat16Json();
    void castMaxFloat16IsExact();
    void castNegativeAndSpecialValues();
    void badArgumentsExit2_data();
    void badArgumentsExit2();
    void policiesListsAll();
    void policiesJson();
    void help_data();
    void help();
    void version();
    void selftestListsTheOpTable();
    void selftestRequireGpuExits3WithTheReason();
};

void TestCliBasic::castSquareOverflowsFloat16() {
    const CliRun r = run_cli({"cast", "256", "--square"});
    QCOMPARE(r.status, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    // The x² table's float16 row says overflow.
    const int square_table = r.out.indexOf("x²");
    QVERIFY(square_table > 0);
    bool found = false;
    for (const QString& line : r.out.mid(square_table).split('\n'))
        if (line.trimmed().startsWith("float16 "))
            found = line.contains("overflow") && line.contains("inf");
    QVERIFY2(found, qPrintable(r.out));
}

void TestCliBasic::castSquareUnderflowsFloat16Json() {
    const CliRun r = run_cli({"cast", "1e-5", "--square", "--json"});
    QCOMPARE(r.status, 0);
    const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 5); // the five default dtypes
    for (const QString& line : lines) {
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(line.toUtf8(), &error);
        QVERIFY2(error.error == QJsonParseError::NoError && doc.isObject(), qPrintable(line));
        for (const char* key : {"input", "dtype", "value", "hex", "bits", "class", "rel_error",
                                "square", "square_class"})
            QVERIFY2(doc.object().contains(key), qPrintable(line));
    }
    const QJsonObject f16 = json_for(r.out, "float16");
    QVERIFY(f16.value("square_class").toString().contains("underflow"));
    QCOMPARE(f16.value("square").toDouble(), 0.0);
    QCOMPARE(f16.value("class").toString(), QString("subnormal"));
    QCOMPARE(json_for(r.out, "float32").value("square_class").toString(), QString("normal"));
}

void TestCliBasic::castMaxFloat16IsExact() {
    const CliRun r = run_cli({"cast", "65504", "--dtype", "float16"});
    QCOMPARE(r.status, 0);
    QVERIFY(r.out.contains("0x7BFF"));
    QVERIFY(r.out.contains("0|11110|1111111111"));
    const CliRun j = run_cli({"cast", "65504", "--dtype=float16", "--json"});
    const QJsonObject o = json_for(j.out, "float16");
    QCOMPARE(o.value("value").toDouble(), 65504.0);
    QCOMPARE(o.value("rel_error").toDouble(), 0.0);
    QCOMPARE(o.value("class").toString(), QString("normal"));
    // One more and it still rounds down; 65520 is the overflow threshold.
    const CliRun t = run_cli({"cast", "65519.99", "65520", "--dtype", "fp16", "--json"});
    const QStringList lines = t.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    QCOMPARE(QJsonDocument::fromJson(lines[0].toUtf8()).object().value("hex").toString(),
             QString("0x7BFF"));
    QCOMPARE(QJsonDocument::fromJson(lines[1].toUtf8()).object().value("class").toString(),
             QString("overflow_to_inf"));
}

void TestCliBasic::castNegativeAndSpecialValues() {
    const CliRun r =
        run_cli({"cast", "-3.5", "-inf", "nan", "0x1p-24", "--dtype", "float16", "--json"});
    QCOMPARE(r.status, 0);
    const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 4);
    const auto obj = [&](int i) { return QJsonDocument::fromJson(lines[i].toUtf8()).object(); };
    QCOMPARE(obj(0).value("value").toDouble(), -3.5);
    QCOMPARE(obj(1).value("value").toString(), QString("-inf"));
    QCOMPARE(obj(2).value("class").toString(), QString("nan"));
    QCOMPARE(obj(3).value("hex").toString(), QString("0x0001"));
    QCOMPARE(obj(3).value("class").toString(), QString("subnormal"));
    // e4m3: 464 ties to 448, 465 overflows to NaN (no infinity).
    const CliRun e = run_cli({"cast", "464", "465", "--dtype", "float8_e4m3", "--json"});
    QVERIFY(e.out.contains("\"hex\":\"0x7E\""));
    QVERIFY(e.out.contains("overflow_to_nan"));
}

void TestCliBasic::badArgumentsExit2_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("named"); // what stderr must mention
    QTest::newRow("not a number") << QStringList{"cast", "12abc"} << "12abc";
    QTest::newRow("unknown dtype") << QStringList{"cast", "1", "--dtype", "float12"} << "float12";
    QTest::newRow("one bad dtype in a list")
        << QStringList{"cast", "1", "--dtype", "float16,bogus"} << "bogus";
    QTest::newRow("integer dtype") << QStringList{"cast", "1", "--dtype", "int32"} << "int32";
    QTest::newRow("no values") << QStringList{"cast"} << "VALUES";
    QTest::newRow("unknown option") << QStringList{"cast", "1", "--squared"} << "--squared";
    QTest::newRow("missing value") << QStringList{"cast", "1", "--dtype"} << "--dtype";
    QTest::newRow("policies extra") << QStringList{"policies", "extra"} << "extra";
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << "frobnicate";
    QTest::newRow("no command") << QStringList{} << "Usage";
}

void TestCliBasic::badArgumentsExit2() {
    QFETCH(QStringList, args);
    QFETCH(QString, named);
    const CliRun r = run_cli(args);
    QCOMPARE(r.status, 2);
    QVERIFY2(r.err.contains(named), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
}

void TestCliBasic::policiesListsAll() {
    const CliRun r = run_cli({"policies"});
    QCOMPARE(r.status, 0);
    for (const char* name :
         {"float32", "float64", "float16", "bfloat16", "mixed_float16", "mixed_bfloat16"})
        QVERIFY2(r.out.contains(QString(name) + " "), name);
    // mixed_float16: float16 compute, float32 variables, dynamic loss scaling.
    for (const QString& line : r.out.split('\n'))
        if (line.startsWith("mixed_float16 "))
            QCOMPARE(line.simplified().section(' ', 0, 3),
                     QString("mixed_float16 float16 float32 dynamic"));
}

void TestCliBasic::policiesJson() {
    const CliRun r = run_cli({"policies", "--json"});
    QCOMPARE(r.status, 0);
    const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 13); // 6 Keras policies + 7 quantised ones (issue 18)
    int recipes = 0;
    for (const QString& line : lines) {
        const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
        QVERIFY2(!o.value("name").toString().isEmpty(), qPrintable(line));
        QVERIFY(o.contains("compute") && o.contains("variable") && o.contains("loss_scaling"));
        if (o.contains("recipe")) ++recipes;
        if (o.value("name").toString() == "nvfp4")
            QVERIFY2(o["recipe"].toObject()["weight"].toString().contains("16×16"),
                     qPrintable(line));
    }
    QCOMPARE(recipes, 7);
}

void TestCliBasic::help_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("top level") << QStringList{"--help"} << "policies";
    QTest::newRow("top level -h") << QStringList{"-h"} << "cast";
    QTest::newRow("cast") << QStringList{"cast", "--help"} << "--square";
    QTest::newRow("cast with values") << QStringList{"cast", "1", "--help"} << "--dtype";
    QTest::newRow("policies") << QStringList{"policies", "--help"} << "--json";
    QTest::newRow("selftest") << QStringList{"selftest", "--help"} << "--require-gpu";
}

void TestCliBasic::help() {
    QFETCH(QStringList, args);
    QFETCH(QString, mentions);
    const CliRun r = run_cli(args);
    QCOMPARE(r.status, 0);
    QVERIFY(r.out.startsWith("Usage: mantissa-cli"));
    QVERIFY2(r.out.contains(mentions), qPrintable(r.out));
}

void TestCliBasic::version() {
    const CliRun r = run_cli({"--version"});
    QCOMPARE(r.status, 0);
    QVERIFY(r.out.startsWith("mantissa-cli "));
}

// One case a line, every op at every dtype (core/check/op_cases.h).
void TestCliBasic::selftestListsTheOpTable() {
    const CliRun r = run_cli({"selftest", "--list"});
    QCOMPARE(r.status, 0);
    const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
    QVERIFY2(lines.size() >= 60, qPrintable(QString::number(lines.size())));
    for (const QString& line : lines)
        QVERIFY2(line.endsWith(" float64") || line.endsWith(" float32") ||
                     line.endsWith(" float16") || line.endsWith(" bfloat16"),
                 qPrintable(line));
    QVERIFY(lines.contains("conv2d bwd-filter 4x10x10x3 k3 s1 p0 f8 bfloat16"));
}

// A GPU script must not pass where no GPU opened: exit 3, and the reason on stderr, before any
// CPU training (so this is quick).
void TestCliBasic::selftestRequireGpuExits3WithTheReason() {
    for (const mantissa::DeviceInfo& device : mantissa::available_devices())
        if (device.is_gpu) QSKIP("a CUDA device is present: --require-gpu would run the checks");
    const CliRun r = run_cli({"selftest", "--require-gpu"});
    QCOMPARE(r.status, 3);
    QVERIFY2(r.err.contains("no CUDA device was checked: "), qPrintable(r.err));
    // The reason: no CUDA engine in this build, no device, or the driver/runtime's own words.
    const QString reason = r.err.section("no CUDA device was checked: ", 1).trimmed();
    QVERIFY2(reason.contains("CUDA"), qPrintable(reason));
    QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
}

QTEST_GUILESS_MAIN(TestCliBasic)
#include "tst_cli_basic.moc"
