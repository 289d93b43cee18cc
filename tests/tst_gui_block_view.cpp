// The Float Lab's Block view, offscreen: the clipping example (amax = 500 in E4M3 clips
// under the floor scale rule and not under ceil), an all-zero block, a NaN block, NVFP4's two
// scales, a block taken from a weights file, and the inline messages for a bad token and for too
// many values.
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>

#include "core/io/safetensors.h"
#include "core/records/trained_model.h"

#include "ui/float_lab/block_view.h"
#include "ui/float_lab/float_lab_tab.h"

using namespace mantissa;
using namespace mantissa::ui;

class TestGuiBlockView : public QObject {
    Q_OBJECT

private slots:
    // The Float Lab shows the Block view as its second page.
    void floatLabHasTheBlockPage() {
        FloatLabTab tab;
        QVERIFY(tab.block_view());
        QCOMPARE(tab.pages()->count(), 2);
        QCOMPARE(tab.pages()->widget(1), static_cast<QWidget*>(tab.block_view()));
    }

    // OCP MX floor: X = 2^(floor(log2 500) - 8) = 2^0, and 500 > 448 saturates to 448. Ceil: the
    // smallest power of two with 500 / X <= 448 is 2^1, and nothing clips.
    void amax500ClipsUnderFloorNotCeil() {
        BlockView view;
        view.set_format(BlockFormat::MxFp8E4M3);
        view.set_rule(ScaleRule::Floor);
        view.set_values_text("500, 1 -3.25\n0.5");
        QVERIFY(view.result());
        QCOMPARE(view.values().size(), std::size_t(4));
        QCOMPARE(int(view.result()->blocks.front().scale.code), 127); // 2^0
        QVERIFY(view.scale_label()->text().contains("0x7F"));
        QVERIFY(view.scale_label()->text().contains("2^0 = 1"));
        QVERIFY(view.clipped(0));
        QVERIFY(!view.clipped(1));
        QCOMPARE(view.cell(0, BlockView::ColDecoded), QString("448"));
        QCOMPARE(view.cell(0, BlockView::ColHex), QString("0x7E"));
        QCOMPARE(view.cell(0, BlockView::ColBits), QString("0|1111|110"));
        QVERIFY(view.cell(0, BlockView::ColNote).startsWith("clipped"));
        QVERIFY(view.cell(1, BlockView::ColNote).isEmpty());
        // Highlighted: the clipped row has a background, the others none.
        QVERIFY(view.table()->item(0, BlockView::ColInput)->background().style() != Qt::NoBrush);
        QCOMPARE(view.table()->item(1, BlockView::ColInput)->background().style(), Qt::NoBrush);
        QVERIFY(view.floor_only_clips() == std::vector<int>{0});
        QVERIFY2(view.floor_ceil_label()->text().contains("#0 500 → 448"),
                 qPrintable(view.floor_ceil_label()->text()));

        view.set_rule(ScaleRule::Ceil);
        QCOMPARE(int(view.result()->blocks.front().scale.code), 128); // 2^1
        QVERIFY(!view.clipped(0));
        // 500 / 2 = 250 lies between E4M3's 240 and 256 (step 16 there) and rounds to 256.
        QCOMPARE(view.cell(0, BlockView::ColDecoded), QString("512"));
        QVERIFY(view.cell(0, BlockView::ColNote).isEmpty());
        QCOMPARE(view.result()->clipped, std::size_t(0));
        // The line compares the two rules whichever is picked.
        QVERIFY(view.floor_only_clips() == std::vector<int>{0});
    }

    // The lecturer's button loads the same lesson: 32 values, the first clips under floor.
    void exampleButtonLoadsTheClippingBlock() {
        BlockView view;
        view.set_format(BlockFormat::MxFp4);
        QPushButton* button = view.example("amax 500 clips (E4M3)");
        QVERIFY(button);
        button->click();
        QCOMPARE(view.format(), BlockFormat::MxFp8E4M3);
        QCOMPARE(view.rule(), ScaleRule::Floor);
        QCOMPARE(view.values().size(), std::size_t(32));
        QCOMPARE(view.table()->rowCount(), 32);
        QVERIFY(view.clipped(0));
        QVERIFY(view.input_error()->isHidden());
    }

    // E8M0 has no zero: an all-zero block gets 2^-127 (code 0x00) and every element decodes to 0,
    // exactly, with nothing clipped or flushed.
    void allZeroBlock() {
        BlockView view;
        view.set_format(BlockFormat::MxFp8E5M2);
        view.set_values_text("0 0 0 0 0 0 0 0");
        QVERIFY(view.result());
        QCOMPARE(int(view.result()->blocks.front().scale.code), 0);
        QCOMPARE(view.result()->blocks.front().scale.value, std::ldexp(1.0, -127));
        QVERIFY(view.scale_label()->text().contains("2^-127"));
        QVERIFY(view.scale_label()->text().contains("All zero"));
        for (int i = 0; i < 8; ++i) {
            QCOMPARE(view.cell(i, BlockView::ColDecoded), QString("0"));
            QCOMPARE(view.cell(i, BlockView::ColError), QString("0 (exact)"));
            QVERIFY(!view.clipped(i));
            QVERIFY(!view.flushed(i));
        }
        QVERIFY(view.floor_only_clips().empty());
    }

    // A NaN makes amax NaN: the E8M0 scale is its NaN code 0xFF, and every element decodes to
    // NaN (the scale multiplies them all).
    void nanBlock() {
        BlockView view;
        view.set_format(BlockFormat::MxFp8E4M3);
        view.set_values_text("1 nan -2");
        QVERIFY(view.result());
        QCOMPARE(int(view.result()->blocks.front().scale.code), 0xFF);
        QVERIFY(view.scale_label()->text().contains("0xFF"));
        QVERIFY(view.scale_label()->text().contains("NaN"));
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(view.cell(i, BlockView::ColDecoded), QString("nan"));
            QVERIFY(!view.clipped(i));
        }
        QCOMPARE(view.cell(1, BlockView::ColError), QString("—"));
    }

    // NVFP4: 16 values, an E4M3 block scale and the float32 global scale amax / 2688; the rule
    // picker does not apply. 2688 / 2688 = 1; the block scale is 2688 / 6 = 448 (E4M3's max).
    void nvfp4ShowsBothScales() {
        BlockView view;
        view.set_format(BlockFormat::NvFp4);
        QVERIFY(!view.rule_box()->isEnabled());
        view.set_values_text("2688 1 -0.5");
        QVERIFY(view.result());
        QCOMPARE(view.result()->global_scale, 1.0f);
        QCOMPARE(view.result()->blocks.front().scale.value, 448.0);
        QVERIFY(view.scale_label()->text().contains("global scale"));
        QVERIFY(view.scale_label()->text().contains("0x7E"));
        QCOMPARE(view.cell(0, BlockView::ColDecoded), QString("2688"));
        QVERIFY(view.floor_only_clips().empty());
        QVERIFY(view.floor_ceil_label()->text().contains("NVFP4 has one rule"));
        // amax 100: the float32 global scale rounds so that 6 × 448 × global lies 9.5e-7 below
        // 100. By the count's definition it clips; by less than half a step, so the table calls
        // it the largest value within rounding, not a clip (issue 28).
        view.set_values_text("100 1 -0.5");
        QVERIFY(view.result());
        QVERIFY(view.clipped(0));
        QVERIFY(view.within_rounding(0));
        QVERIFY(!view.within_rounding(1));
        QVERIFY2(view.cell(0, BlockView::ColNote).contains("within rounding"),
                 qPrintable(view.cell(0, BlockView::ColNote)));
        QVERIFY(!view.cell(0, BlockView::ColNote).startsWith("clipped"));
        QVERIFY2(view.scale_label()->text().contains("1 within rounding of the largest value"),
                 qPrintable(view.scale_label()->text()));
        // 17 values: one too many for a 16-value block.
        view.set_values_text("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17");
        QVERIFY(!view.result());
        QVERIFY(view.input_error()->isVisibleTo(&view));
        QVERIFY2(view.input_error()->text().contains("'17' (value 17) is the first too many"),
                 qPrintable(view.input_error()->text()));
        QVERIFY(view.input_error()->text().contains("holds 16"));
    }

    // A token that is not a number is named, with its position; fixing it clears the message.
    void badTokenIsNamed() {
        BlockView view;
        view.set_format(BlockFormat::MxFp6E3M2);
        view.values_edit()->clear();
        QTest::keyClicks(view.values_edit(), "1, 2, abc, 4");
        QVERIFY(!view.result());
        QCOMPARE(view.table()->rowCount(), 0);
        QVERIFY(view.input_error()->isVisibleTo(&view));
        QCOMPARE(
            view.input_error()->text(),
            QString("Value 3: 'abc' is not a number (try 0.1, -3.5, 1e-5, 2^-24, inf or nan)"));
        view.set_values_text("1, 2, 3, 4");
        QVERIFY(view.result());
        QVERIFY(view.input_error()->isHidden());
        QCOMPARE(view.table()->rowCount(), 4);
        // 33 values in an MX block of 32.
        QString many;
        for (int i = 0; i < 33; ++i) many += QString::number(i) + " ";
        const BlockInput input = parse_block_values(many, 32, "mxfp8_e4m3");
        QVERIFY(input.values.empty());
        QVERIFY2(input.error.startsWith("33 values: a mxfp8_e4m3 block holds 32; '32' (value 33)"),
                 qPrintable(input.error));
    }

    // MXFP4 next to 6: the floor scale is 2^0 and E2M1's smallest step is 0.5, so 0.1 rounds to
    // zero and is marked as flushed.
    void smallValuesFlush() {
        BlockView view;
        view.set_format(BlockFormat::MxFp4);
        view.set_values_text("6 0.1 1");
        QVERIFY(view.result());
        QVERIFY(view.flushed(1));
        QVERIFY(!view.flushed(0));
        QCOMPARE(view.cell(1, BlockView::ColNote), QString("flushed to 0"));
        QCOMPARE(view.result()->blocks.front().zeros, 1);
    }

    // A block of trained weights: a Dense kernel (40, 3) read as output unit u's 40 weights, in
    // blocks of 32 (16 under nvfp4); the bias (1D) is not offered.
    void blockFromWeightsFile() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        TrainedModel model;
        model.experiment =
            load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");
        auto value = [](int r, int c) { return static_cast<float>((r * 3 + c) * 0.25 - 10); };
        WeightTensor kernel{"dense_1.kernel", DType::Float32, {40, 3}, {}};
        for (int r = 0; r < 40; ++r)
            for (int c = 0; c < 3; ++c) {
                const float v = value(r, c);
                unsigned char bytes[4];
                std::memcpy(bytes, &v, 4);
                kernel.data.insert(kernel.data.end(), bytes, bytes + 4);
            }
        WeightTensor bias{"dense_1.bias", DType::Float32, {3}, std::vector<unsigned char>(12, 0)};
        model.weights.tensors = {kernel, bias};
        const QString path = dir.filePath("weights.safetensors");
        write_safetensors(model, path.toStdString());

        BlockView view;
        view.set_format(BlockFormat::MxFp8E4M3);
        QCOMPARE(view.load_weights(path), QString());
        QCOMPARE(view.tensor_box()->count(), 1);
        QCOMPARE(view.tensor_box()->currentText(), QString("dense_1.kernel (40 × 3)"));
        QCOMPARE(view.values().size(), std::size_t(32));
        for (int r = 0; r < 32; ++r) QCOMPARE(view.values()[std::size_t(r)], double(value(r, 0)));
        view.unit_box()->setValue(2);
        view.block_box()->setValue(1);
        QCOMPARE(view.values().size(), std::size_t(8)); // rows 32..39: a short last block
        QCOMPARE(view.values().front(), double(value(32, 2)));
        QVERIFY(view.result());
        view.set_format(BlockFormat::NvFp4); // 16 per block: block 1 is rows 16..31
        QCOMPARE(view.block_box()->maximum(), 2);
        QCOMPARE(view.values().size(), std::size_t(16));
        QCOMPARE(view.values().front(), double(value(16, 2)));

        const QString bad = dir.filePath("nothing.safetensors");
        const QString message = view.load_weights(bad);
        QVERIFY2(message.contains("nothing.safetensors"), qPrintable(message));
        QVERIFY(view.input_error()->isVisibleTo(&view));
    }

    // Projector size: at 1366×768 the table's headers are not cut.
    void readableAt1366() {
        FloatLabTab tab;
        tab.resize(1366, 700);
        tab.pages()->setCurrentIndex(1);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        QTableWidget* table = tab.block_view()->table();
        QHeaderView* header = table->horizontalHeader();
        for (int c = 0; c < header->count(); ++c) {
            const QString text = table->horizontalHeaderItem(c)->text();
            QVERIFY2(header->sectionSize(c) >= header->fontMetrics().horizontalAdvance(text),
                     qPrintable(text));
        }
        QVERIFY2(header->length() <= table->viewport()->width() + 1,
                 qPrintable(QString("table needs %1 px, has %2")
                                .arg(header->length())
                                .arg(table->viewport()->width())));
    }
};

QTEST_MAIN(TestGuiBlockView)
#include "tst_gui_block_view.moc"
