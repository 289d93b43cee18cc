// FloatLabTab: the Float Lab: type x (and y) or drag a log slider and see x in float32, float16,
// bfloat16 and both float8 formats: bits, error, ULP, neighbours, the range ladder and x², x+y,
// x·y; and a second page, the Block view (block_view.h), for MX and NVFP4 blocks.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;
class QTabWidget;

namespace mantissa::ui {

class ArithmeticTable;
class BlockView;
class ElementTable;
class FormatTable;
class LogSlider;
class RangeLadder;

class FloatLabTab final : public QWidget {
    Q_OBJECT

public:
    explicit FloatLabTab(QWidget* parent = nullptr);

    double x() const { return m_x; }
    double y() const { return m_y; }
    // Set the inputs and update every part; the fields show the shortest exact text.
    void set_x(double x);
    void set_y(double y);

    QLineEdit* x_edit() const { return m_x_edit; }
    QLineEdit* y_edit() const { return m_y_edit; }
    LogSlider* slider() const { return m_slider; }
    FormatTable* formats() const { return m_formats; }
    ElementTable* elements() const { return m_elements; }
    RangeLadder* ladder() const { return m_ladder; }
    ArithmeticTable* arithmetic() const { return m_arithmetic; }
    QLabel* input_error() const { return m_error; }
    BlockView* block_view() const { return m_block; }
    QTabWidget* pages() const { return m_pages; } // "One value", "Block view"
    // The one-click example with this caption ("256²", "1e-5²", ...), or nullptr.
    QPushButton* example(const QString& caption) const;

private:
    void on_x_text(const QString& text);
    void on_y_text(const QString& text);
    void show_x(); // formats, slider and ladder follow m_x
    void show_error(const QString& text);

    double m_x = 1.0, m_y = 1.0;
    QLineEdit* m_x_edit = nullptr;
    QLineEdit* m_y_edit = nullptr;
    LogSlider* m_slider = nullptr;
    QLabel* m_error = nullptr;
    FormatTable* m_formats = nullptr;
    ElementTable* m_elements = nullptr;
    RangeLadder* m_ladder = nullptr;
    ArithmeticTable* m_arithmetic = nullptr;
    QList<QPushButton*> m_examples;
    BlockView* m_block = nullptr;
    QTabWidget* m_pages = nullptr;
};

// Reads a number the way the CLI does (0.1, -3.5, 1e-5, 0x1p-24, inf, nan) plus 2^-24 and 2**-24;
// false for anything else.
bool parse_lab_number(const QString& text, double& value);

} // namespace mantissa::ui
