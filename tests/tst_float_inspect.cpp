// Tests of core/numeric/float_inspect: the numbers the Float Lab shows (limits, ULPs, neighbours,
// bit toggles, the Keras guide's 256² and 1e-5²), written from the format definitions.

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/numeric/float_inspect.h"
#include "tests/unit/check_throws.h"
#include "tests/unit/files.h"
#include "tests/unit/format.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Equal as values, with NaN equal to NaN and -0 distinct from +0 (the lab shows both).
bool same(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

} // namespace

class TestFloatInspect {
public:
    void limits_data() {
        add_column<DType>("dtype");
        add_column<double>("max");
        add_column<double>("min_normal");
        add_column<double>("min_subnormal");
        add_column<int>("width");
        new_row("float32") << DType::Float32 << 0x1.fffffep127 << 0x1p-126 << 0x1p-149 << 32;
        new_row("float16") << DType::Float16 << 65504.0 << 0x1p-14 << 0x1p-24 << 16;
        new_row("bfloat16") << DType::BFloat16 << 0x1.fep127 << 0x1p-126 << 0x1p-133 << 16;
        new_row("e4m3") << DType::Float8E4M3 << 448.0 << 0x1p-6 << 0x1p-9 << 8;
        new_row("e5m2") << DType::Float8E5M2 << 57344.0 << 0x1p-14 << 0x1p-16 << 8;
    }
    void limits() {
        FETCH(DType, dtype);
        FETCH(double, max);
        FETCH(double, min_normal);
        FETCH(double, min_subnormal);
        FETCH(int, width);
        const FloatFormat& f = float_format(dtype);
        CHECK_EQ(f.max_finite, max);
        CHECK_EQ(f.min_normal, min_normal);
        CHECK_EQ(f.min_subnormal, min_subnormal);
        CHECK_EQ(bit_width(dtype), width);
        // Each limit is stored exactly and classified as what it is.
        CHECK_EQ(inspect_value(max, dtype).outcome, CastOutcome::Normal);
        CHECK_EQ(inspect_value(max, dtype).abs_error, 0.0);
        CHECK_EQ(inspect_value(min_normal, dtype).outcome, CastOutcome::Normal);
        CHECK_EQ(inspect_value(min_subnormal, dtype).outcome, CastOutcome::Subnormal);
        CHECK_EQ(inspect_value(min_subnormal, dtype).stored, min_subnormal);
        // Half the smallest subnormal is a tie with zero, which is even: it underflows.
        const FloatInspection half = inspect_value(min_subnormal / 2, dtype);
        CHECK_EQ(half.outcome, CastOutcome::UnderflowToZero);
        CHECK_EQ(half.rel_error, 1.0);
    }

    void casts_data() {
        add_column<double>("value");
        add_column<DType>("dtype");
        add_column<double>("stored");
        add_column<CastOutcome>("outcome");
        new_row("fp16 65504 exact") << 65504.0 << DType::Float16 << 65504.0 << CastOutcome::Normal;
        new_row("fp16 65519 rounds down")
            << 65519.0 << DType::Float16 << 65504.0 << CastOutcome::Normal;
        new_row("fp16 65520 overflows")
            << 65520.0 << DType::Float16 << kInf << CastOutcome::OverflowToInf;
        new_row("fp16 2^-24 subnormal")
            << 0x1p-24 << DType::Float16 << 0x1p-24 << CastOutcome::Subnormal;
        new_row("fp16 1e-8 underflows")
            << 1e-8 << DType::Float16 << 0.0 << CastOutcome::UnderflowToZero;
        new_row("fp16 -1e-8 to -0")
            << -1e-8 << DType::Float16 << -0.0 << CastOutcome::UnderflowToZero;
        new_row("bf16 1e-8 normal") << 1e-8 << DType::BFloat16 << 0x1.58p-27 << CastOutcome::Normal;
        new_row("bf16 65520 fits") << 65520.0 << DType::BFloat16 << 65536.0 << CastOutcome::Normal;
        new_row("e4m3 448 max") << 448.0 << DType::Float8E4M3 << 448.0 << CastOutcome::Normal;
        new_row("e4m3 464 tie to 448")
            << 464.0 << DType::Float8E4M3 << 448.0 << CastOutcome::Normal;
        new_row("e4m3 465 has no inf: nan")
            << 465.0 << DType::Float8E4M3 << std::nan("") << CastOutcome::OverflowToNaN;
        new_row("e4m3 inf becomes nan")
            << kInf << DType::Float8E4M3 << std::nan("") << CastOutcome::NaN;
        new_row("e5m2 57344 max") << 57344.0 << DType::Float8E5M2 << 57344.0 << CastOutcome::Normal;
        new_row("e5m2 61440 overflows")
            << 61440.0 << DType::Float8E5M2 << kInf << CastOutcome::OverflowToInf;
        new_row("fp32 0.1") << 0.1 << DType::Float32 << double(0.1f) << CastOutcome::Normal;
        new_row("fp16 inf stays inf") << kInf << DType::Float16 << kInf << CastOutcome::Infinity;
        new_row("fp16 zero") << 0.0 << DType::Float16 << 0.0 << CastOutcome::Zero;
    }
    void casts() {
        FETCH(double, value);
        FETCH(DType, dtype);
        FETCH(double, stored);
        FETCH(CastOutcome, outcome);
        const FloatInspection r = inspect_value(value, dtype);
        CHECK_MSG(same(r.stored, stored), format("%.17g", double(r.stored)));
        CHECK_EQ(r.outcome, outcome);
        CHECK_EQ(r.input, value);
        CHECK(same(decode_bits(r.bits, dtype), r.stored));
    }

    void roundingError() {
        // 0.1 in float16 is 1638/16384 = 0.0999755859375; the error is measured against the
        // float64 input, so it is that difference, and relative to 0.1.
        const FloatInspection r = inspect_value(0.1, DType::Float16);
        CHECK_EQ(r.stored, 0.0999755859375);
        CHECK_EQ(r.abs_error, 0.1 - 0.0999755859375);
        CHECK_EQ(r.rel_error, (0.1 - 0.0999755859375) / 0.1);
        CHECK_EQ(r.bits, std::uint64_t(0x2E66));
        CHECK_EQ(inspect_value(70000, DType::Float16).abs_error, kInf);
        CHECK(std::isnan(inspect_value(std::nan(""), DType::Float16).abs_error));
        CHECK_EQ(inspect_value(-kInf, DType::Float16).abs_error, 0.0);
    }

    void ulpAndNeighboursOfOne_data() {
        add_column<DType>("dtype");
        add_column<double>("ulp");
        new_row("float32") << DType::Float32 << 0x1p-23;
        new_row("float16") << DType::Float16 << 0x1p-10;
        new_row("bfloat16") << DType::BFloat16 << 0x1p-7;
        new_row("e4m3") << DType::Float8E4M3 << 0x1p-3;
        new_row("e5m2") << DType::Float8E5M2 << 0x1p-2;
    }
    void ulpAndNeighboursOfOne() {
        FETCH(DType, dtype);
        FETCH(double, ulp);
        const FloatInspection r = inspect_value(1.0, dtype);
        CHECK_EQ(r.ulp, ulp);
        CHECK_EQ(r.ulp, float_format(dtype).epsilon);
        CHECK(r.above && r.below);
        CHECK_EQ(*r.above, 1.0 + ulp);
        CHECK_EQ(*r.below, 1.0 - ulp / 2); // the binade below is twice as dense
        // The neighbours are representable and nothing lies between them and 1.
        CHECK_EQ(round_to_dtype(*r.above, dtype), *r.above);
        CHECK_EQ(round_to_dtype(1.0 + ulp * 0.49, dtype), 1.0);
    }

    void neighboursAtTheEdges() {
        const DType h = DType::Float16;
        const FloatInspection zero = inspect_value(0.0, h);
        CHECK_EQ(*zero.above, 0x1p-24);
        CHECK_EQ(*zero.below, -0x1p-24);
        CHECK_EQ(zero.ulp, 0x1p-24);
        const FloatInspection max = inspect_value(65504, h);
        CHECK_EQ(*max.above, kInf);
        CHECK_EQ(*max.below, 65472.0);
        CHECK_EQ(max.ulp, 32.0);
        const FloatInspection inf = inspect_value(kInf, h);
        CHECK_EQ(*inf.below, 65504.0);
        CHECK(!inf.above);
        CHECK(std::isnan(inf.ulp));
        const FloatInspection neg_min = inspect_value(-0x1p-24, h);
        CHECK(same(*neg_min.above, -0.0)); // IEEE nextUp(-min_subnormal) = -0
        CHECK_EQ(*neg_min.below, -0x1p-23);
        const FloatInspection neg_inf = inspect_value(-kInf, h);
        CHECK(!neg_inf.below);
        CHECK_EQ(*neg_inf.above, -65504.0);
        // Subnormals are evenly spaced by the smallest subnormal.
        CHECK_EQ(inspect_value(0x1p-20, h).ulp, 0x1p-24);
        // e4m3 has nothing above 448 (the next pattern is its NaN); e5m2 goes on to inf.
        const FloatInspection e4m3_max = inspect_value(448, DType::Float8E4M3);
        CHECK(!e4m3_max.above);
        CHECK_EQ(*e4m3_max.below, 416.0);
        CHECK_EQ(e4m3_max.ulp, 32.0);
        CHECK_EQ(*inspect_value(57344, DType::Float8E5M2).above, kInf);
        const FloatInspection nan = inspect_value(std::nan(""), h);
        CHECK(!nan.above && !nan.below);
    }

    void bitToggles_data() {
        add_column<DType>("dtype");
        add_column<double>("value");
        add_column<int>("bit");
        add_column<double>("toggled");
        new_row("fp16 sign") << DType::Float16 << 1.0 << 15 << -1.0;
        new_row("fp16 top mantissa") << DType::Float16 << 1.0 << 9 << 1.5;
        new_row("fp16 last mantissa") << DType::Float16 << 1.0 << 0 << 1.0 + 0x1p-10;
        new_row("fp16 exponent lsb") << DType::Float16 << 1.0 << 10 << 0.5;
        new_row("fp16 exponent msb to inf") << DType::Float16 << 1.0 << 14 << kInf;
        new_row("fp16 0 to min subnormal") << DType::Float16 << 0.0 << 0 << 0x1p-24;
        new_row("bf16 last mantissa") << DType::BFloat16 << 1.0 << 0 << 1.0 + 0x1p-7;
        new_row("bf16 exponent msb") << DType::BFloat16 << 1.0 << 14 << kInf;
        new_row("e4m3 max to nan") << DType::Float8E4M3 << 448.0 << 0 << std::nan("");
        new_row("e4m3 exponent") << DType::Float8E4M3 << 1.0 << 3 << 0.5;
        new_row("e5m2 sign") << DType::Float8E5M2 << 57344.0 << 7 << -57344.0;
        new_row("fp32 sign") << DType::Float32 << 2.0 << 31 << -2.0;
        new_row("fp32 exponent lsb") << DType::Float32 << 1.0 << 23 << 0.5;
    }
    void bitToggles() {
        FETCH(DType, dtype);
        FETCH(double, value);
        FETCH(int, bit);
        FETCH(double, toggled);
        const std::uint64_t bits = inspect_value(value, dtype).bits;
        const std::uint64_t flipped = toggle_bit(bits, bit, dtype);
        const FloatInspection r = inspect_bits(flipped, dtype);
        CHECK_MSG(same(r.stored, toggled), format("%.17g", double(r.stored)));
        CHECK_EQ(r.input, r.stored); // a pattern is exact: no rounding error
        CHECK_EQ(toggle_bit(flipped, bit, dtype), bits);
    }

    void toggleOutsideTheFormatThrows() {
        CHECK_THROWS(Error, toggle_bit(0, 16, DType::Float16));
        CHECK_THROWS(Error, toggle_bit(0, -1, DType::Float8E4M3));
        CHECK_THROWS(Error, bit_width(DType::Int32));
    }

    void bitStrings() {
        CHECK_EQ(bit_string(0x3C00, DType::Float16), std::string("0|01111|0000000000"));
        CHECK_EQ(bit_string(0x7E, DType::Float8E4M3), std::string("0|1111|110"));
        CHECK_EQ(bit_string(0xBF80, DType::BFloat16), std::string("1|01111111|0000000"));
        const FloatInspection r = inspect_value(-2.5, DType::Float8E5M2); // -1.01b * 2^1
        CHECK_EQ(r.fields.sign, 1u);
        CHECK_EQ(r.fields.exponent, 16u);
        CHECK_EQ(r.fields.mantissa, std::uint64_t(1));
    }

    void arithmetic_data() {
        add_column<ArithOp>("op");
        add_column<double>("x");
        add_column<double>("y");
        add_column<DType>("dtype");
        add_column<double>("result");
        add_column<bool>("overflow");
        add_column<bool>("underflow");
        const ArithOp sq = ArithOp::Square, add = ArithOp::Add, mul = ArithOp::Multiply;
        // The Keras guide: 256² overflows float16, 1e-5² underflows it; bfloat16 holds both.
        new_row("256² fp16") << sq << 256.0 << 0.0 << DType::Float16 << kInf << true << false;
        new_row("256² bf16") << sq << 256.0 << 0.0 << DType::BFloat16 << 65536.0 << false << false;
        new_row("256² fp32") << sq << 256.0 << 0.0 << DType::Float32 << 65536.0 << false << false;
        new_row("256² e4m3") << sq << 256.0 << 0.0 << DType::Float8E4M3 << std::nan("") << true
                             << false;
        new_row("256² e5m2") << sq << 256.0 << 0.0 << DType::Float8E5M2 << kInf << true << false;
        new_row("1e-5² fp16") << sq << 1e-5 << 0.0 << DType::Float16 << 0.0 << false << true;
        new_row("1e-5² bf16") << sq << 1e-5 << 0.0 << DType::BFloat16
                              << round_to_dtype(std::pow(round_to_dtype(1e-5, DType::BFloat16), 2),
                                                DType::BFloat16)
                              << false << false;
        new_row("1e-5² e5m2") << sq << 1e-5 << 0.0 << DType::Float8E5M2 << 0.0 << false << true;
        // A lost update: 2048 + 1 is 2048 in float16 (the paper's 2048× ratio).
        new_row("2048+1 fp16") << add << 2048.0 << 1.0 << DType::Float16 << 2048.0 << false
                               << false;
        new_row("2048+1 fp32") << add << 2048.0 << 1.0 << DType::Float32 << 2049.0 << false
                               << false;
        new_row("256+1 bf16") << add << 256.0 << 1.0 << DType::BFloat16 << 256.0 << false << false;
        new_row("max+max fp16") << add << 65504.0 << 65504.0 << DType::Float16 << kInf << true
                                << false;
        new_row("300·300 fp16") << mul << 300.0 << 300.0 << DType::Float16 << kInf << true << false;
        new_row("1e-4·1e-4 fp16") << mul << 1e-4 << 1e-4 << DType::Float16 << 0.0 << false << true;
        new_row("3·0.5 e4m3") << mul << 3.0 << 0.5 << DType::Float8E4M3 << 1.5 << false << false;
    }
    void arithmetic() {
        FETCH(ArithOp, op);
        FETCH(double, x);
        FETCH(double, y);
        FETCH(DType, dtype);
        FETCH(double, result);
        FETCH(bool, overflow);
        FETCH(bool, underflow);
        const ArithmeticResult r = compute_in(op, x, y, dtype);
        CHECK_MSG(same(r.result.stored, result), format("%.17g", double(r.result.stored)));
        CHECK_EQ(r.overflow, overflow);
        CHECK_EQ(r.underflow, underflow);
        CHECK(r.result.stored != 0 || r.exact != 0 || !underflow);
    }

    // The lab's "exact, then round once" equals the engine's elementwise contract (float32
    // compute, round to the dtype): every pair of fp8 patterns, and random 16-bit pairs.
    void matchesTheEngineContract_data() {
        add_column<DType>("dtype");
        new_row("float16") << DType::Float16;
        new_row("bfloat16") << DType::BFloat16;
        new_row("e4m3") << DType::Float8E4M3;
        new_row("e5m2") << DType::Float8E5M2;
    }
    void matchesTheEngineContract() {
        FETCH(DType, dtype);
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
                    FAIL_TEST(format("%.17g", double(x)) + " " + arg_text(arith_op_symbol(op)) +
                              " " + format("%.17g", double(y)) + ": lab " +
                              format("%.17g", double(r.result.stored)) + ", engine " +
                              format("%.17g", double(engine)));
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

MANTISSA_TEST_MAIN(TestFloatInspect, limits, casts, roundingError, ulpAndNeighboursOfOne,
                   neighboursAtTheEdges, bitToggles, toggleOutsideTheFormatThrows, bitStrings,
                   arithmetic, matchesTheEngineContract)
