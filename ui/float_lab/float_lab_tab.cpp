// FloatLabTab composition and input handling. Every part is a function of (x, y), so each input
// (typing, the slider, a bit click, an example) sets x or y and refreshes the parts from them.
#include "ui/float_lab/float_lab_tab.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QTabWidget>
#include <QVBoxLayout>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/numeric/float_format.h"
#include "ui/float_lab/arithmetic_table.h"
#include "ui/float_lab/block_view.h"
#include "ui/float_lab/element_table.h"
#include "ui/float_lab/format_table.h"
#include "ui/float_lab/lab_style.h"
#include "ui/float_lab/log_slider.h"
#include "ui/float_lab/range_ladder.h"

namespace mantissa::ui {

bool parse_lab_number(const QString& text, double& value) {
    const QString t = text.trimmed();
    static const QRegularExpression power(
        QStringLiteral(R"(^([+-]?)2\s*(?:\^|\*\*)\s*([+-]?\d{1,4})$)"));
    const QRegularExpressionMatch m = power.match(t);
    if (m.hasMatch()) {
        value = std::ldexp(m.captured(1) == QLatin1String("-") ? -1.0 : 1.0, m.captured(2).toInt());
        return true;
    }
    const QByteArray bytes = t.toUtf8();
    if (bytes.isEmpty()) return false;
    char* end = nullptr;
    errno = 0;
    value = std::strtod(bytes.constData(), &end);
    return end != bytes.constData() && *end == '\0';
}

namespace {

// A slider position as a readable number: powers of two exactly, others to 3 digits.
double tidy(double magnitude) {
    const double l = std::log2(magnitude);
    if (l == std::round(l)) return magnitude;
    return QString::number(magnitude, 'g', 3).toDouble();
}

} // namespace

FloatLabTab::FloatLabTab(QWidget* parent) : QWidget(parent) {
    // Everything a notch larger than the rest of the app: the lab is shown on projectors.
    setFont(lab::scaled_font(font(), 1.1));
    // Bold group titles by style sheet: a bold QFont on the box would propagate to its contents.
    setStyleSheet(QStringLiteral("QGroupBox { font-weight: bold; }"));
    const QFont big = lab::scaled_font(font(), 1.35);
    const QFont bold = lab::scaled_font(font(), 1.15, true);

    // Inputs: x (typed or dragged), y, and the lecturer's examples.
    auto* x_label = new QLabel(QStringLiteral("x ="));
    x_label->setFont(lab::scaled_font(font(), 1.35, true));
    m_x_edit = new QLineEdit(QStringLiteral("1"));
    m_x_edit->setFont(big);
    m_x_edit->setMinimumWidth(
        QFontMetrics(big).horizontalAdvance(QStringLiteral("0.000123456789")));
    m_x_edit->setToolTip("A number: 0.1, -3.5, 1e-5, 2^-24, 0x1p-24, inf or nan. It is read as "
                         "float64 and rounded once (nearest, ties to even) to each format.");
    m_slider = new LogSlider;
    m_slider->setMinimumWidth(260);
    auto* y_label = new QLabel(QStringLiteral("y ="));
    y_label->setFont(lab::scaled_font(font(), 1.35, true));
    m_y_edit = new QLineEdit(QStringLiteral("1"));
    m_y_edit->setFont(big);
    m_y_edit->setMaximumWidth(QFontMetrics(big).horizontalAdvance(QStringLiteral("0.00012345678")));
    m_y_edit->setToolTip("The second operand of x + y and x · y.");
    auto* inputs = new QHBoxLayout;
    inputs->addWidget(x_label);
    inputs->addWidget(m_x_edit);
    auto* slider_min = new QLabel(QStringLiteral("drag |x|:  1e-12"));
    auto* slider_max = new QLabel(QStringLiteral("1e12"));
    inputs->addSpacing(8);
    inputs->addWidget(slider_min);
    inputs->addWidget(m_slider, 1);
    inputs->addWidget(slider_max);
    inputs->addSpacing(12);
    inputs->addWidget(y_label);
    inputs->addWidget(m_y_edit);

    struct Example {
        const char* caption;
        double x, y;
        const char* tip;
    };
    const Example examples[] = {
        {"256²", 256, 256, "The Keras guide: 256² = 65536 is above float16's max 65504: inf."},
        {"1e-5²", 1e-5, 1e-5,
         "The Keras guide: 1e-5² = 1e-10 is below float16's smallest subnormal (6e-8): 0."},
        {"2048 + 1", 2048, 1,
         "A lost update: float16 has 11 significant bits, so 2048 + 1 rounds back to 2048."},
        {"65504 + 16", 65504, 16, "float16's max plus half an ULP rounds up to inf."},
        {"0.1 + 0.2", 0.1, 0.2, "Neither is exact in binary; compare the errors per format."},
    };
    auto* example_row = new QHBoxLayout;
    auto* examples_label = new QLabel(QStringLiteral("Examples:"));
    examples_label->setFont(bold);
    example_row->addWidget(examples_label);
    for (const Example& e : examples) {
        auto* button = new QPushButton(QString::fromUtf8(e.caption));
        button->setFont(bold);
        button->setToolTip(QString::fromUtf8(e.tip));
        const double ex = e.x, ey = e.y;
        connect(button, &QPushButton::clicked, this, [this, ex, ey] {
            set_y(ey);
            set_x(ex);
        });
        example_row->addWidget(button);
        m_examples.append(button);
    }
    example_row->addSpacing(24);
    // The colour legend of the bit cells.
    auto chip = [this, &bold](lab::BitField field, const QString& name) {
        auto* l = new QLabel(QStringLiteral("■ ") + name);
        l->setFont(bold);
        l->setStyleSheet(
            QStringLiteral("color: %1;").arg(lab::field_colour(field, palette()).name()));
        return l;
    };
    example_row->addWidget(chip(lab::BitField::Sign, QStringLiteral("sign")));
    example_row->addWidget(chip(lab::BitField::Exponent, QStringLiteral("exponent")));
    example_row->addWidget(chip(lab::BitField::Mantissa, QStringLiteral("mantissa")));
    example_row->addStretch(1);

    m_error = new QLabel;
    m_error->setFont(bold);
    m_error->setStyleSheet(
        QStringLiteral("color: %1;").arg(lab::overflow_colour(palette()).name()));
    m_error->hide();

    m_formats = new FormatTable(this); // a parent now, so it starts from the lab's font
    connect(m_formats, &FormatTable::pattern_chosen, this, [this](DType dtype, quint64 bits) {
        m_x = decode_bits(bits, dtype); // exact: every pattern is a float64
        {
            const QSignalBlocker block(m_x_edit);
            m_x_edit->setText(lab::exact_text(m_x));
        }
        show_error({});
        m_formats->set_pattern(dtype, bits);
        m_elements->set_value(m_x);
        m_slider->set_magnitude(m_x);
        m_ladder->set_value(m_x);
        m_arithmetic->set_inputs(m_x, m_y);
    });

    m_ladder = new RangeLadder(this);
    m_arithmetic = new ArithmeticTable(this);
    auto* ladder_box =
        new QGroupBox(QStringLiteral("Where |x| falls: each format's range (log scale)"));
    auto* ladder_layout = new QVBoxLayout(ladder_box);
    ladder_layout->addWidget(m_ladder);
    auto* arith_box = new QGroupBox(QStringLiteral("Computed in each format"));
    auto* arith_layout = new QVBoxLayout(arith_box);
    arith_layout->addWidget(m_arithmetic);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(ladder_box, 3);
    bottom->addWidget(arith_box, 2);

    auto* formats_box = new QGroupBox(QStringLiteral("x stored in each format"));
    auto* formats_layout = new QVBoxLayout(formats_box);
    formats_layout->addWidget(m_formats);

    m_elements = new ElementTable(this);
    auto* elements_box = new QGroupBox(
        QStringLiteral("x in the block-quantisation element formats (they saturate; e8m0 is a "
                       "power-of-two scale)"));
    auto* elements_layout = new QVBoxLayout(elements_box);
    elements_layout->addWidget(m_elements);

    auto* content = new QWidget;
    auto* layout = new QVBoxLayout(content);
    layout->setSpacing(10);
    layout->addLayout(inputs);
    layout->addLayout(example_row);
    layout->addWidget(m_error);
    layout->addWidget(formats_box);
    layout->addWidget(elements_box);
    layout->addLayout(bottom, 1); // the ladder and the table share the height that is left
    auto* scroll = new QScrollArea;
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    // One value first (the scroll area the projector test measures), then one block of them.
    m_block = new BlockView;
    auto* pages = new QTabWidget;
    pages->addTab(scroll, QStringLiteral("One value"));
    pages->addTab(m_block, QStringLiteral("Block view (MX, NVFP4)"));
    pages->setTabToolTip(1, "One block of 32 values (16 for nvfp4) sharing a scale: the scale, "
                            "each element's code and error, and what clips under floor or ceil.");
    m_pages = pages;
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(pages);

    connect(m_x_edit, &QLineEdit::textChanged, this, &FloatLabTab::on_x_text);
    connect(m_y_edit, &QLineEdit::textChanged, this, &FloatLabTab::on_y_text);
    connect(m_slider, &LogSlider::magnitude_moved, this, [this](double magnitude) {
        const double v = std::copysign(tidy(magnitude), std::signbit(m_x) ? -1.0 : 1.0);
        m_x = v;
        const QSignalBlocker block(m_x_edit);
        m_x_edit->setText(lab::exact_text(v));
        show_error({});
        m_formats->set_value(m_x);
        m_elements->set_value(m_x);
        m_ladder->set_value(m_x);
        m_arithmetic->set_inputs(m_x, m_y);
    });
    show_x();
}

QPushButton* FloatLabTab::example(const QString& caption) const {
    for (QPushButton* b : m_examples)
        if (b->text() == caption) return b;
    return nullptr;
}

void FloatLabTab::set_x(double x) {
    m_x = x;
    {
        const QSignalBlocker block(m_x_edit);
        m_x_edit->setText(lab::exact_text(x));
    }
    show_error({});
    show_x();
}

void FloatLabTab::set_y(double y) {
    m_y = y;
    {
        const QSignalBlocker block(m_y_edit);
        m_y_edit->setText(lab::exact_text(y));
    }
    show_error({});
    m_arithmetic->set_inputs(m_x, m_y);
}

void FloatLabTab::on_x_text(const QString& text) {
    double v = 0;
    if (!parse_lab_number(text, v)) {
        show_error(QStringLiteral("x: '%1' is not a number (try 0.1, -3.5, 1e-5, 2^-24 or inf)")
                       .arg(text.trimmed()));
        return;
    }
    show_error({});
    m_x = v;
    show_x();
}

void FloatLabTab::on_y_text(const QString& text) {
    double v = 0;
    if (!parse_lab_number(text, v)) {
        show_error(QStringLiteral("y: '%1' is not a number (try 0.1, -3.5, 1e-5, 2^-24 or inf)")
                       .arg(text.trimmed()));
        return;
    }
    show_error({});
    m_y = v;
    m_arithmetic->set_inputs(m_x, m_y);
}

void FloatLabTab::show_x() {
    m_formats->set_value(m_x);
    m_elements->set_value(m_x);
    m_slider->set_magnitude(m_x);
    m_ladder->set_value(m_x);
    m_arithmetic->set_inputs(m_x, m_y);
}

void FloatLabTab::show_error(const QString& text) {
    m_error->setText(text);
    m_error->setVisible(!text.isEmpty());
}

} // namespace mantissa::ui
