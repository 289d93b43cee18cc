// BlockView: the Float Lab's block view: one block of 32 values (16 for NVFP4) typed or pasted,
// quantised to an MX or NVFP4 block format, with the shared scale, each element's code, decoded
// value and error, and which values clip under the floor scale rule and not under ceil. A block
// can also come from a trained model's weights (a .safetensors file, e.g. a run's).
#pragma once

#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

#include "core/io/model_weights.h"
#include "core/numeric/block_quant.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace mantissa::ui {

// The values of one block read from text (commas, semicolons, spaces or new lines between them),
// or a message naming the token that is not a number or the first value beyond `block_size`.
struct BlockInput {
    std::vector<double> values;
    QString error; // empty when `values` is usable
};
BlockInput parse_block_values(const QString& text, int block_size, const QString& format_name);

class BlockView final : public QWidget {
    Q_OBJECT

public:
    enum Column { ColIndex, ColInput, ColBits, ColHex, ColDecoded, ColError, ColNote, ColumnCount };

    explicit BlockView(QWidget* parent = nullptr);

    // Replaces the values' text (the view follows it, as if typed).
    void set_values_text(const QString& text);
    void set_format(BlockFormat format);
    void set_rule(ScaleRule rule); // floor or ceil (MX formats; NVFP4 has its own)

    BlockFormat format() const { return m_format; }
    ScaleRule rule() const { return m_rule; }
    // The quantised block, or nothing while the input is bad or empty.
    const std::optional<BlockQuantResult>& result() const { return m_result; }
    const std::vector<double>& values() const { return m_values; }
    bool clipped(int i) const; // |value| beyond the element max times the block's scale
    bool flushed(int i) const; // non-zero, decoded as zero
    // Clipped, but by less than half a step above the largest value: it would round there
    // anyway, so the table calls it the largest value "within rounding", not a clip.
    bool within_rounding(int i) const;
    // The indices that clip under floor but not under ceil (MX only; empty for NVFP4).
    const std::vector<int>& floor_only_clips() const { return m_floor_only; }

    QPlainTextEdit* values_edit() const { return m_edit; }
    QComboBox* format_box() const { return m_format_box; }
    QComboBox* rule_box() const { return m_rule_box; }
    QLabel* input_error() const { return m_error; }
    QLabel* scale_label() const { return m_scale; }
    QLabel* floor_ceil_label() const { return m_floor_ceil; }
    QTableWidget* table() const { return m_table; }
    QString cell(int row, Column column) const;
    QPushButton* example(const QString& caption) const;

    // Reads a weights file (safetensors) and offers its matrices: a Dense kernel (in, units) or a
    // Conv2D kernel (kh, kw, in, out) seen as (kh·kw·in, out). A block is taken along the
    // reduction dimension: output unit `unit`'s weights, values block·size onwards. Returns the
    // error message (also shown inline), empty on success.
    QString load_weights(const QString& path);
    QComboBox* tensor_box() const { return m_tensor_box; }
    QSpinBox* unit_box() const { return m_unit_box; }
    QSpinBox* block_box() const { return m_block_box; }

private:
    void refresh(); // reads the text, quantises, fills every part
    void show_error(const QString& text);
    void fill_table();
    void fill_scale();
    void fill_floor_ceil();
    void take_weights(); // the chosen tensor, unit and block into the values field

    BlockFormat m_format = BlockFormat::MxFp8E4M3;
    ScaleRule m_rule = ScaleRule::Floor;
    std::vector<double> m_values;
    std::optional<BlockQuantResult> m_result;
    std::vector<int> m_floor_only;

    QPlainTextEdit* m_edit = nullptr;
    QComboBox* m_format_box = nullptr;
    QComboBox* m_rule_box = nullptr;
    QLabel* m_error = nullptr;
    QLabel* m_scale = nullptr;
    QLabel* m_floor_ceil = nullptr;
    QTableWidget* m_table = nullptr;
    QList<QPushButton*> m_examples;
    ModelWeights m_weights;
    QComboBox* m_tensor_box = nullptr; // item data: index into m_weights.tensors
    QSpinBox* m_unit_box = nullptr;
    QSpinBox* m_block_box = nullptr;
};

} // namespace mantissa::ui
