// Runs the real mantissa-cli binary: `quantize` (MX / NVFP4 block encoding, its JSON contract and
// its errors) and `cast` on the element formats that are not dtypes (float6, float4, e8m0).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "tests/cli_runner.h"

using mantissa::test::CliRun;
using mantissa::test::run_cli;

namespace {

QList<QJsonObject> json_lines(const QString& out) {
    QList<QJsonObject> objects;
    for (const QString& line : out.split('\n', Qt::SkipEmptyParts)) {
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(line.toUtf8(), &error);
        if (error.error != QJsonParseError::NoError || !doc.isObject()) return {};
        objects.append(doc.object());
    }
    return objects;
}

QStringList strings(const QJsonValue& v) {
    QStringList out;
    for (const QJsonValue& x : v.toArray()) out << x.toString();
    return out;
}

QList<double> numbers(const QJsonValue& v) {
    QList<double> out;
    for (const QJsonValue& x : v.toArray()) out << x.toDouble();
    return out;
}

} // namespace

class TestCliQuantize : public QObject {
    Q_OBJECT

private slots:
    // The clipping case: amax = 500 in MXFP8 E4M3 clips under floor, not under ceil.
    void floorClipsCeilDoesNot() {
        const CliRun f =
            run_cli({"quantize", "--format", "mxfp8_e4m3", "--json", "500", "1", "-3.25"});
        QCOMPARE(f.status, 0);
        QVERIFY2(f.err.isEmpty(), qPrintable(f.err));
        const QList<QJsonObject> fl = json_lines(f.out);
        QCOMPARE(fl.size(), 1);
        const QJsonObject b = fl[0];
        QCOMPARE(QStringList(b.keys()), (QStringList{"block", "clipped", "codes", "decoded",
                                                     "format", "scale", "scale_hex", "zeros"}));
        QCOMPARE(b.value("format").toString(), QString("mxfp8_e4m3"));
        QCOMPARE(b.value("block").toInt(), 0);
        QCOMPARE(b.value("scale").toDouble(), 1.0);
        QCOMPARE(b.value("scale_hex").toString(), QString("0x7F"));
        QCOMPARE(strings(b.value("codes")), (QStringList{"0x7E", "0x38", "0xC5"}));
        QCOMPARE(numbers(b.value("decoded")), (QList<double>{448, 1, -3.25}));
        QCOMPARE(b.value("clipped").toInt(), 1);
        QCOMPARE(b.value("zeros").toInt(), 0);

        const CliRun c = run_cli({"quantize", "--format", "mxfp8_e4m3", "--scale-rule", "ceil",
                                  "--json", "500", "1", "-3.25"});
        QCOMPARE(c.status, 0);
        const QJsonObject cb = json_lines(c.out).value(0);
        QCOMPARE(cb.value("scale").toDouble(), 2.0);
        QCOMPARE(cb.value("scale_hex").toString(), QString("0x80"));
        QCOMPARE(cb.value("clipped").toInt(), 0);
        QCOMPARE(numbers(cb.value("decoded")), (QList<double>{512, 1, -3.25}));

        // The human table marks the clipped value.
        const CliRun h = run_cli({"quantize", "--format", "mxfp8_e4m3", "500", "1"});
        QCOMPARE(h.status, 0);
        QVERIFY2(h.out.contains("clipped 1") && h.out.contains("448"), qPrintable(h.out));
    }

    // NVFP4: blocks of 16 (the last short), the E4M3 block scale and the float32 global scale.
    void nvfp4Json() {
        QStringList args{"quantize", "--format", "nvfp4", "--json", "2688",
                         "1344",     "224",      "100",   "-896",   "560"};
        for (int i = 0; i < 10; ++i) args << "0";
        args << "2.4"
             << "1"
             << "-0.3";
        const CliRun r = run_cli(args);
        QCOMPARE(r.status, 0);
        const QList<QJsonObject> blocks = json_lines(r.out);
        QCOMPARE(blocks.size(), 2);
        QCOMPARE(blocks[0].value("global_scale").toDouble(), 1.0);
        QCOMPARE(blocks[0].value("scale_hex").toString(), QString("0x7E"));
        QCOMPARE(blocks[0].value("zeros").toInt(), 1);
        QCOMPARE(strings(blocks[0].value("codes")).mid(0, 6),
                 (QStringList{"0x7", "0x5", "0x1", "0x0", "0xC", "0x2"}));
        QCOMPARE(blocks[1].value("block").toInt(), 1);
        QCOMPARE(blocks[1].value("scale").toDouble(), 0.40625);
        QCOMPARE(blocks[1].value("scale_hex").toString(), QString("0x2D"));
        QCOMPARE(strings(blocks[1].value("codes")), (QStringList{"0x7", "0x4", "0x9"}));
        QCOMPARE(numbers(blocks[1].value("decoded")), (QList<double>{2.4375, 0.8125, -0.203125}));
    }

    // 33 values make a block of 32 and a block of 1; a NaN makes its block's scale NaN.
    void shortLastBlockAndNaN() {
        QStringList args{"quantize", "--format", "mxfp4", "--json"};
        for (int i = 0; i < 32; ++i) args << QString::number(i % 7 - 3);
        args << "nan";
        const CliRun r = run_cli(args);
        QCOMPARE(r.status, 0);
        const QList<QJsonObject> blocks = json_lines(r.out);
        QCOMPARE(blocks.size(), 2);
        QCOMPARE(blocks[0].value("codes").toArray().size(), 32);
        QCOMPARE(blocks[0].value("scale").toDouble(), 0.5); // amax 3: 2^(floor(log2 3) - 2)
        QCOMPARE(blocks[1].value("codes").toArray().size(), 1);
        QCOMPARE(blocks[1].value("scale").toString(), QString("nan"));
        QCOMPARE(blocks[1].value("scale_hex").toString(), QString("0xFF"));
        QCOMPARE(blocks[1].value("decoded").toArray().at(0).toString(), QString("nan"));
    }

    void badArgumentsExit2_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("named");
        QTest::newRow("no format") << QStringList{"quantize", "1"} << "--format";
        QTest::newRow("unknown format")
            << QStringList{"quantize", "--format", "mxfp5", "1"} << "mxfp5";
        QTest::newRow("rule nvfp4 lacks")
            << QStringList{"quantize", "--format", "nvfp4", "--scale-rule", "floor", "1"}
            << "--scale-rule: nvfp4";
        QTest::newRow("unknown rule")
            << QStringList{"quantize", "--format", "mxfp4", "--scale-rule", "round", "1"}
            << "--scale-rule";
        QTest::newRow("block size")
            << QStringList{"quantize", "--format", "mxfp4", "--block-size", "24", "1"}
            << "--block-size: 24";
        QTest::newRow("not a number")
            << QStringList{"quantize", "--format", "mxfp4", "1", "x2"} << "x2";
        QTest::newRow("no values") << QStringList{"quantize", "--format", "mxfp4"} << "VALUES";
        QTest::newRow("cast unknown element")
            << QStringList{"cast", "1", "--dtype", "float5_e2m2"} << "float4_e2m1";
    }
    void badArgumentsExit2() {
        QFETCH(QStringList, args);
        QFETCH(QString, named);
        const CliRun r = run_cli(args);
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains(named), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    // `cast` knows float6_e3m2, float6_e2m3, float4_e2m1 and e8m0: they saturate, e8m0 has
    // neither zero nor sign.
    void castElementFormats() {
        const CliRun r = run_cli(
            {"cast", "100", "--json", "--dtype", "float6_e3m2,float6_e2m3,float4_e2m1,e8m0"});
        QCOMPARE(r.status, 0);
        const QList<QJsonObject> rows = json_lines(r.out);
        QCOMPARE(rows.size(), 4);
        QCOMPARE(rows[0].value("value").toDouble(), 28.0);
        QCOMPARE(rows[0].value("class").toString(), QString("saturated"));
        QCOMPARE(rows[0].value("hex").toString(), QString("0x1F"));
        QCOMPARE(rows[1].value("value").toDouble(), 7.5);
        QCOMPARE(rows[2].value("value").toDouble(), 6.0);
        QCOMPARE(rows[2].value("bits").toString(), QString("0|11|1"));
        QCOMPARE(rows[3].value("dtype").toString(), QString("e8m0"));
        QCOMPARE(rows[3].value("value").toDouble(), 128.0); // 100 is nearer 128 than 64
        QCOMPARE(rows[3].value("hex").toString(), QString("0x86"));

        const CliRun z = run_cli({"cast", "0", "-2", "--json", "--dtype", "e8m0"});
        const QList<QJsonObject> e = json_lines(z.out);
        QCOMPARE(e.size(), 2);
        QCOMPARE(e[0].value("class").toString(), QString("clamped_to_min"));
        QCOMPARE(e[1].value("class").toString(), QString("negative_to_nan"));

        // 'all' lists the dtypes and then the four element formats.
        const CliRun a = run_cli({"cast", "1", "--json", "--dtype", "all"});
        QCOMPARE(json_lines(a.out).size(), 6 + 4);
    }

    void help() {
        const CliRun r = run_cli({"quantize", "--help"});
        QCOMPARE(r.status, 0);
        QVERIFY(r.out.contains("--scale-rule") && r.out.contains("nvfp4"));
        const CliRun top = run_cli({"--help"});
        QVERIFY(top.out.contains("quantize"));
    }
};

QTEST_APPLESS_MAIN(TestCliQuantize)
#include "tst_cli_quantize.moc"
