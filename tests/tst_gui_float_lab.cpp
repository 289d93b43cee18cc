// The Float Lab tab, offscreen: typing a value, the Keras guide's examples, clicking bits, the
// range ladder's marks, the slider and bad input, checked against what the widgets display.
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTest>
#include <cmath>

#include "core/numeric/float_format.h"
#include "ui/float_lab/arithmetic_table.h"
#include "ui/float_lab/bits_widget.h"
#include "ui/float_lab/element_table.h"
#include "ui/float_lab/float_lab_tab.h"
#include "ui/float_lab/format_table.h"
#include "ui/float_lab/log_slider.h"
#include "ui/float_lab/range_ladder.h"

using namespace mantissa;
using namespace mantissa::ui;

Q_DECLARE_METATYPE(mantissa::DType)

namespace {

void type_x(FloatLabTab& tab, const QString& text) {
    tab.x_edit()->clear();
    QTest::keyClicks(tab.x_edit(), text);
}

} // namespace

class TestGuiFloatLab : public QObject {
    Q_OBJECT

private slots:
    // The element formats (float6, float4, e8m0) follow x: 100 saturates float4_e2m1 at 6 and
    // float6_e3m2 at 28, e8m0 rounds it to 128; 0 has no e8m0 code and clamps to 2^-127.
    void elementFormatsFollowX() {
        FloatLabTab tab;
        type_x(tab, "100");
        ElementTable* e = tab.elements();
        QVERIFY(e);
        QCOMPARE(e->text(ElementFormat::Float4E2M1, "stored"), QString("6"));
        QCOMPARE(e->text(ElementFormat::Float4E2M1, "bits"), QString("0|11|1"));
        QVERIFY(e->text(ElementFormat::Float4E2M1, "class").startsWith("saturated"));
        QCOMPARE(e->text(ElementFormat::Float6E3M2, "stored"), QString("28"));
        QCOMPARE(e->text(ElementFormat::Float6E2M3, "hex"), QString("0x1F"));
        QCOMPARE(e->text(ElementFormat::E8M0, "stored"), QString("128"));
        QCOMPARE(e->text(ElementFormat::E8M0, "hex"), QString("0x86"));
        type_x(tab, "1.5");
        QCOMPARE(e->text(ElementFormat::Float4E2M1, "error"), QString("0 (exact)"));
        type_x(tab, "0");
        QVERIFY(e->text(ElementFormat::E8M0, "class").startsWith("clamped"));
        QCOMPARE(e->inspection(ElementFormat::E8M0).code, 0u);
    }

    void typing256ShowsFloat16SquareOverflow() {
        FloatLabTab tab;
        type_x(tab, "256");
        QCOMPARE(tab.x(), 256.0);
        const QString fp16 = tab.arithmetic()->cell_text(DType::Float16, ArithOp::Square);
        QVERIFY2(fp16.contains("inf") && fp16.contains("overflow"), qPrintable(fp16));
        QVERIFY(tab.arithmetic()->result(DType::Float16, ArithOp::Square).overflow);
        const QString bf16 = tab.arithmetic()->cell_text(DType::BFloat16, ArithOp::Square);
        QCOMPARE(bf16, QString("65536"));
        // 256 itself is exact everywhere, even in float8_e4m3 (2^8).
        QCOMPARE(tab.formats()->text(DType::Float16, "stored"), QString("256"));
        QCOMPARE(tab.formats()->text(DType::Float8E4M3, "error"), QString("0 (exact)"));
    }

    void examplesAreOneClick_data() {
        QTest::addColumn<QString>("caption");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<int>("op");
        QTest::addColumn<QString>("shown");
        QTest::newRow("256² fp16")
            << "256²" << DType::Float16 << int(ArithOp::Square) << "inf  ⚠ overflow";
        QTest::newRow("1e-5² fp16")
            << "1e-5²" << DType::Float16 << int(ArithOp::Square) << "0  ⚠ underflow";
        QTest::newRow("1e-5² bf16 survives")
            << "1e-5²" << DType::BFloat16 << int(ArithOp::Square) << "1.00044e-10";
        QTest::newRow("2048 + 1 fp16")
            << "2048 + 1" << DType::Float16 << int(ArithOp::Add) << "2048";
        QTest::newRow("2048 + 1 fp32")
            << "2048 + 1" << DType::Float32 << int(ArithOp::Add) << "2049";
        QTest::newRow("65504 + 16 fp16")
            << "65504 + 16" << DType::Float16 << int(ArithOp::Add) << "inf  ⚠ overflow";
    }
    void examplesAreOneClick() {
        QFETCH(QString, caption);
        QFETCH(DType, dtype);
        QFETCH(int, op);
        QFETCH(QString, shown);
        FloatLabTab tab;
        QPushButton* button = tab.example(caption);
        QVERIFY2(button, qPrintable(caption));
        QVERIFY(!button->toolTip().isEmpty());
        QTest::mouseClick(button, Qt::LeftButton);
        QCOMPARE(tab.arithmetic()->cell_text(dtype, static_cast<ArithOp>(op)), shown);
    }

    void clickingABitChangesTheValue() {
        FloatLabTab tab;
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        type_x(tab, "1");
        BitsWidget* bits = tab.formats()->bits_widget(DType::Float16);
        QCOMPARE(bits->bits(), std::uint64_t(0x3C00));
        // The top mantissa bit is worth a half: 1 -> 1.5, in the input and in every format.
        QTest::mouseClick(bits, Qt::LeftButton, {}, bits->bit_rect(9).center());
        QCOMPARE(tab.x(), 1.5);
        QCOMPARE(tab.x_edit()->text(), QString("1.5"));
        QCOMPARE(bits->bits(), std::uint64_t(0x3E00));
        QCOMPARE(tab.formats()->text(DType::Float32, "stored"), QString("1.5"));
        // The sign bit.
        QTest::mouseClick(bits, Qt::LeftButton, {}, bits->bit_rect(15).center());
        QCOMPARE(tab.x(), -1.5);
        // The lowest mantissa bit of float32: 1.5 + 2^-23 is not representable in float16.
        BitsWidget* f32 = tab.formats()->bits_widget(DType::Float32);
        QTest::mouseClick(f32, Qt::LeftButton, {}, f32->bit_rect(0).center());
        QCOMPARE(tab.x(), -1.5 - 0x1p-23);
        QCOMPARE(tab.formats()->inspection(DType::Float32).abs_error, 0.0);
        QVERIFY(tab.formats()->inspection(DType::Float16).abs_error > 0);
        QCOMPARE(tab.formats()->text(DType::Float16, "stored"), QString("-1.5"));
        // The exponent's top bit of float16's 1.0 makes it inf: the lab says so.
        type_x(tab, "1");
        QTest::mouseClick(bits, Qt::LeftButton, {}, bits->bit_rect(14).center());
        QVERIFY(std::isinf(tab.x()));
        QCOMPARE(tab.formats()->text(DType::Float16, "class"), QString("inf"));
        // A click between cells flips nothing.
        QCOMPARE(bits->bit_at(QPoint(bits->bit_rect(15).right() + 3, 5)), -1);
    }

    void showsUlpAndNeighbours() {
        FloatLabTab tab;
        type_x(tab, "1");
        QCOMPARE(tab.formats()->text(DType::Float16, "ulp"), QString("0.0009766"));
        QCOMPARE(tab.formats()->text(DType::Float16, "above"), QString("↑ 1.00098"));
        QCOMPARE(tab.formats()->text(DType::Float16, "below"), QString("↓ 0.999512"));
        QCOMPARE(tab.formats()->text(DType::BFloat16, "ulp"), QString("0.007813"));
        QCOMPARE(tab.formats()->text(DType::Float32, "ulp"), QString("1.192e-7")); // short exponent
        QCOMPARE(tab.formats()->text(DType::Float8E4M3, "above"), QString("↑ 1.125"));
        type_x(tab, "448");
        QCOMPARE(tab.formats()->text(DType::Float8E4M3, "above"), QString("↑ none")); // no inf
        type_x(tab, "0.1");
        QCOMPARE(tab.formats()->text(DType::Float16, "stored"), QString("0.0999756"));
        QVERIFY(tab.formats()->text(DType::Float16, "error").contains("0.0244 %"));
    }

    void ladderMarksWhereTheValueFalls_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("fp16");
        QTest::addColumn<QString>("bf16");
        QTest::addColumn<QString>("e4m3");
        QTest::newRow("1e5") << "1e5"
                             << "overflow→inf"
                             << "normal"
                             << "overflow→nan";
        QTest::newRow("1") << "1"
                           << "normal"
                           << "normal"
                           << "normal";
        QTest::newRow("1e-6") << "1e-6"
                              << "subnormal"
                              << "normal"
                              << "underflow→0";
        QTest::newRow("1e-9") << "1e-9"
                              << "underflow→0"
                              << "normal"
                              << "underflow→0";
        QTest::newRow("2^-24") << "2^-24"
                               << "subnormal"
                               << "normal"
                               << "underflow→0";
    }
    void ladderMarksWhereTheValueFalls() {
        QFETCH(QString, text);
        QFETCH(QString, fp16);
        QFETCH(QString, bf16);
        QFETCH(QString, e4m3);
        FloatLabTab tab;
        tab.resize(1500, 900);
        tab.show(); // the marker's pixel needs the laid-out ladder
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        type_x(tab, text);
        RangeLadder* ladder = tab.ladder();
        QCOMPARE(ladder->value(), tab.x());
        QCOMPARE(ladder->lane_status(DType::Float16), fp16);
        QCOMPARE(ladder->lane_status(DType::BFloat16), bf16);
        QCOMPARE(ladder->lane_status(DType::Float8E4M3), e4m3);
        // The marker sits where |x| is on the axis, in order against float16's limits.
        const FloatFormat& h = float_format(DType::Float16);
        const double mx = ladder->marker_x();
        QCOMPARE(mx, ladder->x_for(std::log2(tab.x())));
        QCOMPARE(mx > ladder->x_for(std::log2(h.max_finite)), fp16.startsWith("overflow"));
        QCOMPARE(mx < ladder->x_for(std::log2(h.min_normal)),
                 fp16 != "normal" && !fp16.startsWith("overflow"));
    }

    void ladderWidensForFarValues() {
        FloatLabTab tab;
        type_x(tab, "1e30");
        QVERIFY(tab.ladder()->axis_max() >= std::log2(1e30));
        type_x(tab, "1e-40");
        QVERIFY(tab.ladder()->axis_min() <= std::log2(1e-40));
        QCOMPARE(tab.ladder()->lane_status(DType::Float32), QString("subnormal"));
        type_x(tab, "0");
        QVERIFY(std::isnan(tab.ladder()->marker_x())); // no place on a log axis
    }

    void sliderSweepsTheMagnitude() {
        FloatLabTab tab;
        type_x(tab, "-3");
        QCOMPARE(tab.slider()->value(), static_cast<int>(std::lround(std::log2(3.0) * 8)));
        tab.slider()->setValue(16 * LogSlider::kStepsPerBinade); // 2^16
        QCOMPARE(tab.x(), -65536.0);                             // the sign is kept
        QCOMPARE(tab.x_edit()->text(), QString("-65536"));
        QCOMPARE(tab.formats()->text(DType::Float16, "class"), QString("overflow→inf"));
        tab.slider()->setValue(tab.slider()->value() + 1); // 2^(16 + 1/8), shown to 3 digits
        QCOMPARE(tab.x(), -71500.0);
    }

    void badInputIsExplainedAndKeepsTheValue() {
        FloatLabTab tab;
        type_x(tab, "42");
        tab.x_edit()->setText("12abc"); // pasted: typed, its prefix "12" would be taken
        QVERIFY(!tab.input_error()->isHidden());
        QVERIFY(tab.input_error()->text().contains("12abc"));
        QCOMPARE(tab.x(), 42.0);
        type_x(tab, "0x1p-24");
        QVERIFY(tab.input_error()->isHidden());
        QCOMPARE(tab.x(), 0x1p-24);
        tab.y_edit()->clear();
        QTest::keyClicks(tab.y_edit(), "y?");
        QVERIFY(tab.input_error()->text().startsWith("y:"));
    }

    void formatsExplainThemselves() {
        FloatLabTab tab;
        for (DType dtype : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float8E4M3,
                            DType::Float8E5M2}) {
            const QString tip = tab.formats()->bits_widget(dtype)->toolTip();
            QVERIFY2(tip.contains("exponent") && tip.contains("mantissa"), qPrintable(tip));
        }
    }
};

QTEST_MAIN(TestGuiFloatLab)
#include "tst_gui_float_lab.moc"
