// Tests of core/numeric/float_inspect: the numbers the Float Lab shows (limits, ULPs, neighbours,
// bit toggles, the Keras guide's 256² and 1e-5²), written from the format definitions.
#include <QTest>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/numeric/float_inspect.h"

using namespace mantissa;

Q_DECLARE_METATYPE(mantissa::DType)
Q_DECLARE_METATYPE(mantissa::CastOutcome)
Q_DECLARE_METATYPE(mantissa::ArithOp)

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Equal as values, with NaN equal to NaN and -0 distinct from +0 (the lab shows both).
bool same(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

} // namespace

class TestFloatInspect : public QObject {
    Q_OBJECT

private slots:
    void limits_data() {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<double>("max");
        QTest::addColumn<double>("min_normal");
        QTest::addColumn<double>("min_subnormal");
        QTest::addColumn<int>("width");
        QTest::newRow("float32") << DType::Float32 << 0x1.fffffep127 << 0x1p-126 << 0x1p-149 << 32;
        QTest::newRow("float16") << DType::Float16 << 65504.0 << 0x1p-14 << 0x1p-24 << 16;
        QTest::newRow("bfloat16") << DType::BFloat16 << 0x1.fep127 << 0x1p-126 << 0x1p-133 << 16;
        QTest::newRow("e4m3") << DType::Float8E4M3 << 448.0 << 0x1p-6 << 0x1p-9 << 8;
        QTest::newRow("e5m2") << DType::Float8E5M2 << 57344.0 << 0x1p-14 << 0x1p-16 << 8;
    }
    void limits() {
        QFETCH(DType, dtype);
        QFETCH(double, max);
        QFETCH(double, min_normal);
        QFETCH(double, min_subnormal);
        QFETCH(int, width);
        const FloatFormat& f = float_format(dtype);
        QCOMPARE(f.max_finite, max);
        QCOMPARE(f.min_normal, min_normal);
        QCOMPARE(f.min_subnormal, min_subnormal);
        QCOMPARE(bit_width(dtype), width);
        // Each limit is stored exactly and classified as what it is.
        QCOMPARE(inspect_value(max, dtype).outcome, CastOutcome::Normal);
        QCOMPARE(inspect_value(max, dtype).abs_error, 0.0);
        QCOMPARE(inspect_value(min_normal, dtype).outcome, CastOutcome::Normal);
        QCOMPARE(inspect_value(min_subnormal, dtype).outcome, CastOutcome::Subnormal);
        QCOMPARE(inspect_value(min_subnormal, dtype).stored, min_subnormal);
        // Half the smallest subnormal is a tie with zero, which is even: it underflows.
        const FloatInspection half = inspect_value(min_subnormal / 2, dtype);
        QCOMPARE(half.outcome, CastOutcome::UnderflowToZero);
        QCOMPARE(half.rel_error, 1.0);
    }

    void casts_data() {
        QTest::addColumn<double>("value");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<double>("stored");
        QTest::addColumn<CastOutcome>("outcome");
        QTest::newRow("fp16 65504 exact")
            << 65504.0 << DType::Float16 << 65504.0 << CastOutcome::Normal;
        QTest::newRow("fp16 65519 rounds down")
            << 65519.0 << DType::Float16 << 65504.0 << CastOutcome::Normal;
        QTest::newRow("fp16 65520 overflows")
            << 65520.0 << DType::Float16 << kInf << CastOutcome::OverflowToInf;
        QTest::newRow("fp16 2^-24 subnormal")
            << 0x1p-24 << DType::Float16 << 0x1p-24 << CastOutcome::Subnormal;
        QTest::newRow("fp16 1e-8 underflows")
            << 1e-8 << DType::Float16 << 0.0 << CastOutcome::UnderflowToZero;
        QTest::newRow("fp16 -1e-8 to -0")
            << -1e-8 << DType::Float16 << -0.0 << CastOutcome::UnderflowToZero;
        QTest::newRow("bf16 1e-8 normal")
            << 1e-8 << DType::BFloat16 << 0x1.58p-27 << CastOutcome::Normal;
        QTest::newRow("bf16 65520 fits")
            << 65520.0 << DType::BFloat16 << 65536.0 << CastOutcome::Normal;
        QTest::newRow("e4m3 448 max") << 448.0 << DType::Float8E4M3 << 448.0 << CastOutcome::Normal;
        QTest::newRow("e4m3 464 tie to 448")
            << 464.0 << DType::Float8E4M3 << 448.0 << CastOutcome::Normal;
        QTest::newRow("e4m3 465 has no inf: nan")
            << 465.0 << DType::Float8E4M3 << std::nan("") << CastOutcome::OverflowToNaN;
        QTest::newRow("e4m3 inf becomes nan")
            << kInf << DType::Float8E4M3 << std::nan("") << CastOutcome::NaN;
        QTest::newRow("e5m2 57344 max")
            << 57344.0 << DType::Float8E5M2 << 57344.0 << CastOutcome::Normal;
        QTest::newRow("e5m2 61440 overflows")
            << 61440.0 << DType::Float8E5M2 << kInf << CastOutcome::OverflowToInf;
        QTest::newRow("fp32 0.1") << 0.1 << DType::Float32 << double(0.1f) << CastOutcome::Normal;
        QTest::newRow("fp16 inf stays inf")
            << kInf << DType::Float16 << kInf << CastOutcome::Infinity;
        QTest::newRow("fp16 zero") << 0.0 << DType::Float16 << 0.0 << CastOutcome::Zero;
    }
    void casts() {
        QFETCH(double, value);
        QFETCH(DType, dtype);
        QFETCH(double, stored);
        QFETCH(CastOutcome, outcome);
        const FloatInspection r = inspect_value(value, dtype);
        QVERIFY2(same(r.stored, stored), qPrintable(QString::number(r.stored, 'g', 17)));
        QCOMPARE(r.outcome, outcome);
        QCOMPARE(r.input, value);
        QVERIFY(same(decode_bits(r.bits, dtype), r.stored));
    }

    void roundingError() {
        // 0.1 in float16 is 1638/16384 = 0.0999755859375; the error is measured against the
        // float64 input, so it is that difference, and relative to 0.1.
        const FloatInspection r = inspect_value(0.1, DType::Float16);
        QCOMPARE(r.stored, 0.0999755859375);
        QCOMPARE(r.abs_error, 0.1 - 0.0999755859375);
        QCOMPARE(r.rel_error, (0.1 - 0.0999755859375) / 0.1);
        QCOMPARE(r.bits, std::uint64_t(0x2E66));
        QCOMPARE(inspect_value(70000, DType::Float16).abs_error, kInf);
        QVERIFY(std::isnan(inspect_value(std::nan(""), DType::Float16).abs_error));
        QCOMPARE(inspect_value(-kInf, DType::Float16).abs_error, 0.0);
    }

    void ulpAndNeighboursOfOne_data() {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<double>("ulp");
        QTest::newRow("float32") << DType::Float32 << 0x1p-23;
        QTest::newRow("float16") << DType::Float16 << 0x1p-10;
        QTest::newRow("bfloat16") << DType::BFloat16 << 0x1p-7;
        QTest::newRow("e4m3") << DType::Float8E4M3 << 0x1p-3;
        QTest::newRow("e5m2") << DType::Float8E5M2 << 0x1p-2;
    }
    void ulpAndNeighboursOfOne() {
        QFETCH(DType, dtype);
        QFETCH(double, ulp);
        const FloatInspection r = inspect_value(1.0, dtype);
        QCOMPARE(r.ulp, ulp);
        QCOMPARE(r.ulp, float_format(dtype).epsilon);
        QVERIFY(r.above && r.below);
        QCOMPARE(*r.above, 1.0 + ulp);
        QCOMPARE(*r.below, 1.0 - ulp / 2); // the binade below is twice as dense
        // The neighbours are representable and nothing lies between them and 1.
        QCOMPARE(round_to_dtype(*r.above, dtype), *r.above);
        QCOMPARE(round_to_dtype(1.0 + ulp * 0.49, dtype), 1.0);
    }

    void neighboursAtTheEdges() {
        const DType h = DType::Float16;
        const FloatInspection zero = inspect_value(0.0, h);
        QCOMPARE(*zero.above, 0x1p-24);
        QCOMPARE(*zero.below, -0x1p-24);
        QCOMPARE(zero.ulp, 0x1p-24);
        const FloatInspection max = inspect_value(65504, h);
        QCOMPARE(*max.above, kInf);
        QCOMPARE(*max.below, 65472.0);
        QCOMPARE(max.ulp, 32.0);
        const FloatInspection inf = inspect_value(kInf, h);
        QCOMPARE(*inf.below, 65504.0);
        QVERIFY(!inf.above);
        QVERIFY(std::isnan(inf.ulp));
        const FloatInspection neg_min = inspect_value(-0x1p-24, h);
        QVERIFY(same(*neg_min.above, -0.0)); // IEEE nextUp(-min_subnormal) = -0
        QCOMPARE(*neg_min.below, -0x1p-23);
        const FloatInspection neg_inf = inspect_value(-kInf, h);
        QVERIFY(!neg_inf.below);
        QCOMPARE(*neg_inf.above, -65504.0);
        // Subnormals are evenly spaced by the smallest subnormal.
        QCOMPARE(inspect_value(0x1p-20, h).ulp, 0x1p-24);
        // e4m3 has nothing above 448 (the next pattern is its NaN); e5m2 goes on to inf.
        const FloatInspection e4m3_max = inspect_value(448, DType::Float8E4M3);
        QVERIFY(!e4m3_max.above);
        QCOMPARE(*e4m3_max.below, 416.0);
        QCOMPARE(e4m3_max.ulp, 32.0);
        QCOMPARE(*inspect_value(57344, DType::Float8E5M2).above, kInf);
        const FloatInspection nan = inspect_value(std::nan(""), h);
        QVERIFY(!nan.above && !nan.below);
    }

    void bitToggles_data() {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<double>("value");
        QTest::addColumn<int>("bit");
        QTest::addColumn<double>("toggled");
        QTest::newRow("fp16 sign") << DType::Float16 << 1.0 << 15 << -1.0;
        QTest::newRow("fp16 top mantissa") << DType::Float16 << 1.0 << 9 << 1.5;
        QTest::newRow("fp16 last mantissa") << DType::Float16 << 1.0 << 0 << 1.0 + 0x1p-10;
        QTest::newRow("fp16 exponent lsb") << DType::Float16 << 1.0 << 10 << 0.5;
        QTest::newRow("fp16 exponent msb to inf") << DType::Float16 << 1.0 << 14 << kInf;
        QTest::newRow("fp16 0 to min subnormal") << DType::Float16 << 0.0 << 0 << 0x1p-24;
        QTest::newRow("bf16 last mantissa") << DType::BFloat16 << 1.0 << 0 << 1.0 + 0x1p-7;
        QTest::newRow("bf16 exponent msb") << DType::BFloat16 << 1.0 << 14 << kInf;
        QTest::newRow("e4m3 max to nan") << DType::Float8E4M3 << 448.0 << 0 << std::nan("");
        QTest::newRow("e4m3 exponent") << DType::Float8E4M3 << 1.0 << 3 << 0.5;
        QTest::newRow("e5m2 sign") << DType::Float8E5M2 << 57344.0 << 7 << -57344.0;
        QTest::newRow("fp32 sign") << DType::Float32 << 2.0 << 31 << -2.0;
        QTest::newRow("fp32 exponent lsb") << DType::Float32 << 1.0 << 23 << 0.5;
    }
    void bitToggles() {
        QFETCH(DType, dtype);
        QFETCH(double, value);
        QFETCH(int, bit);
        QFETCH(double, toggled);
        const std::uint64_t bits = inspect_value(value, dtype).bits;
        const std::uint64_t flipped = toggle_bit(bits, bit, dtype);
        const FloatInspection r = inspect_bits(flipped, dtype);
        QVERIFY2(same(r.stored, toggled), qPrintable(QString::number(r.stored, 'g', 17)));
        QCOMPARE(r.input, r.stored); // a pattern is exact: no rounding error
        QCOMPARE(toggle_bit(flipped, bit, dtype), bits);
    }

    void toggleOutsideTheFormatThrows() {
        QVERIFY_THROWS_EXCEPTION(Error, toggle_bit(0, 16, DType::Float16));
        QVERIFY_THROWS_EXCEPTION(Error, toggle_bit(0, -1, DType::Float8E4M3));
        QVERIFY_THROWS_EXCEPTION(Error, bit_width(DType::Int32));
    }

    void bitStrings() {
        QCOMPARE(bit_string(0x3C00, DType::Float16), std::string("0|01111|0000000000"));
        QCOMPARE(bit_string(0x7E, DType::Float8E4M3), std::string("0|1111|110"));
        QCOMPARE(bit_string(0xBF80, DType::BFloat16), std::string("1|01111111|0000000"));
        const FloatInspection r = inspect_value(-2.5, DType::Float8E5M2); // -1.01b * 2^1
        QCOMPARE(r.fields.sign, 1u);
        QCOMPARE(r.fields.exponent, 16u);
        QCOMPARE(r.fields.mantissa, std::uint64_t(1));
    }

    void arithmetic_data() {
        QTest::addColumn<ArithOp>("op");
        QTest::addColumn<double>("x");
        QTest::addColumn<double>("y");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<double>("result");
        QTest::addColumn<bool>("overflow");
        QTest::addColumn<bool>("underflow");
        const ArithOp sq = ArithOp::Square, add = ArithOp::Add, mul = ArithOp::Multiply;
        // The Keras guide: 256² overflows float16, 1e-5² underflows it; bfloat16 holds both.
        QTest::newRow("256² fp16") << sq << 256.0 << 0.0 << DType::Float16 << kInf << true << false;
        QTest::newRow("256² bf16")
            << sq << 256.0 << 0.0 << DType::BFloat16 << 65536.0 << false << false;
        QTest::newRow("256² fp32")
            << sq << 256.0 << 0.0 << DType::Float32 << 65536.0 << false << false;
        QTest::newRow("256² e4m3")
            << sq << 256.0 << 0.0 << DType::Float8E4M3 << std::nan("") << true << false;
        QTest::newRow("256² e5m2")
            << sq << 256.0 << 0.0 << DType::Float8E5M2 << kInf << true << false;
        QTest::newRow("1e-5² fp16") << sq << 1e-5 << 0.0 << DType::Float16 << 0.0 << false << true;
        QTest::newRow("1e-5² bf16")
            << sq << 1e-5 << 0.0 << DType::BFloat16
            << round_to_dtype(std::pow(round_to_dtype(1e-5, DType::BFloat16), 2), DType::BFloat16)
            << false << false;
        QTest::newRow("1e-5² e5m2")
            << sq << 1e-5 << 0.0 << DType::Float8E5M2 << 0.0 << false << true;
        // A lost update: 2048 + 1 is 2048 in float16 (the paper's 2048× ratio).
        QTest::newRow("2048+1 fp16")
            << add << 2048.0 << 1.0 << DType::Float16 << 2048.0 << false << false;
        QTest::newRow("2048+1 fp32")
            << add << 2048.0 << 1.0 << DType::Float32 << 2049.0 << false << false;
        QTest::newRow("256+1 bf16")
            << add << 256.0 << 1.0 << DType::BFloat16 << 256.0 << false << false;
        QTest::newRow("max+max fp16")
            << add << 65504.0 << 65504.0 << DType::Float16 << kInf << true << false;
        QTest::newRow("300·300 fp16")
            << mul << 300.0 << 300.0 << DType::Float16 << kInf << true << false;
        QTest::newRow("1e-4·1e-4 fp16")
            << mul << 1e-4 << 1e-4 << DType::Float16 << 0.0 << false << true;
        QTest::newRow("3·0.5 e4m3")
            << mul << 3.0 << 0.5 << DType::Float8E4M3 << 1.5 << false << false;
    }
    void arithmetic() {
        QFETCH(ArithOp, op);
        QFETCH(double, x);
        QFETCH(double, y);
        QFETCH(DType, dtype);
        QFETCH(double, result);
        QFETCH(bool, overflow);
        QFETCH(bool, underflow);
        const ArithmeticResult r = compute_in(op, x, y, dtype);
        QVERIFY2(same(r.result.stored, result),
                 qPrintable(QString::number(r.result.stored, 'g', 17)));
        QCOMPARE(r.overflow, overflow);
        QCOMPARE(r.underflow, underflow);
        QVERIFY(r.result.stored != 0 || r.exact != 0 || !underflow);
    }

    // The lab's "exact, then round once" equals the engine's elementwise contract (float32
    // compute, round to the dtype): every pair of fp8 patterns, and random 16-bit pairs.
    void matchesTheEngineContract_data() {
        QTest::addColumn<DType>("dtype");
        QTest::newRow("float16") << DType::Float16;
        QTest::newRow("bfloat16") << DType::BFloat16;
        QTest::newRow("e4m3") << DType::Float8E4M3;
        QTest::newRow("e5m2") << DType::Float8E5M2;
    }
    void matchesTheEngineContract() {
        QFETCH(DType, dtype);
        const int width = bit_width(dtype);
        std::mt19937_64 rng(7);
        auto check = [&](std::uint64_t a, std::uint64_t b) {
            const double x = decode_bits(a, dtype), y = decode_bits(b, dtype);
            for (ArithOp op : {ArithOp::Add, ArithOp::Multiply}) {
                const float fx = static_cast<float>(x), fy = static_cast<float>(y);
                float engine = op == ArithOp::Add ? fx + fy : fx * fy;
                round_in_place(&engine, 1, dtype);
                const ArithmeticResult r = compute_in(op, x, y, dtype);
                if (!same(r.result.stored, engine))
                    QFAIL(qPrintable(QString("%1 %2 %3: lab %4, engine %5")
                                         .arg(x, 0, 'g', 17)
                                         .arg(arith_op_symbol(op))
                                         .arg(y, 0, 'g', 17)
                                         .arg(r.result.stored, 0, 'g', 17)
                                         .arg(engine, 0, 'g', 17)));
            }
        };
        if (width == 8) {
            for (std::uint64_t a = 0; a < 256; ++a)
                for (std::uint64_t b = 0; b < 256; ++b) check(a, b);
        } else {
            for (int i = 0; i < 200000; ++i) check(rng() & 0xFFFF, rng() & 0xFFFF);
        }
    }
};

QTEST_GUILESS_MAIN(TestFloatInspect)
#include "tst_float_inspect.moc"
