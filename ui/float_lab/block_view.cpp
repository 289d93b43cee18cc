// BlockView layout and filling. Every number comes from core/numeric/block_quant (the code
// `mantissa-cli quantize` prints), so the lab and the CLI always agree; the view only decides
// what to call "clipped" and "flushed", with the CLI's definitions.
#include "ui/float_lab/block_view.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/error.h"
#include "core/io/safetensors.h"
#include "core/numeric/element_inspect.h"
#include "ui/float_lab/float_lab_tab.h"
#include "ui/float_lab/lab_style.h"
#include "ui/window/dialog_folder.h"

namespace mantissa::ui {

namespace {

QString qstr(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

// The CLI's definition (cmd_quantize.cpp): beyond the element max times the whole scale.
bool clipped_in(const BlockQuantResult& r, double value) {
    if (r.blocks.empty()) return false;
    const BlockReport& b = r.blocks.front();
    const double scale =
        r.config.spec.tensor_scale ? b.scale.value * r.global_scale : b.scale.value;
    return std::fabs(value) > element_spec(r.config.spec.element).max_finite * scale;
}

// A clipped value less than half the top step above the largest value: it would round to the
// largest value even if the format went on past it (the next value would be max + 2^(emax -
// mantissa bits)), so "clipped" would overstate it (issue 28: NVFP4 marked a block's amax, 3.45e-10
// above 6 × scale after the scales' own rounding, as clipped). The count stays the CLI's.
bool within_rounding_in(const BlockQuantResult& r, double value) {
    if (!clipped_in(r, value)) return false;
    const ElementSpec& e = element_spec(r.config.spec.element);
    const BlockReport& b = r.blocks.front();
    const double scale =
        r.config.spec.tensor_scale ? b.scale.value * r.global_scale : b.scale.value;
    const double half_step = std::ldexp(1.0, e.emax - e.mantissa_bits) / 2;
    return std::fabs(value) < (e.max_finite + half_step) * scale;
}

// "2^-3 = 0.125": E8M0 scales are powers of two, worth showing as such.
QString scale_value_text(const BlockScale& s, const BlockFormatSpec& spec) {
    if (std::isnan(s.value)) return QStringLiteral("NaN");
    if (spec.scale == ElementFormat::E8M0)
        return QStringLiteral("2^%1 = %2")
            .arg(static_cast<int>(s.code) - 127)
            .arg(lab::format_number(s.value, 9));
    return lab::format_number(s.value, 9);
}

QString power_of_two(const BlockScale& s) {
    if (std::isnan(s.value)) return QStringLiteral("NaN");
    return QStringLiteral("2^%1").arg(static_cast<int>(s.code) - 127);
}

QString error_text(double input, double decoded) {
    if (std::isnan(input) || std::isnan(decoded)) return QStringLiteral("—");
    if (input == decoded) return QStringLiteral("0 (exact)");
    const double abs = std::fabs(decoded - input);
    if (std::isinf(abs)) return QStringLiteral("∞");
    return QStringLiteral("%1 (%2 %)")
        .arg(lab::format_number(abs, 3), lab::format_number(100.0 * abs / std::fabs(input), 3));
}

// The lecturer's examples: a block with one value above E4M3's reach at the floor scale, etc.
struct Example {
    const char* caption;
    BlockFormat format;
    ScaleRule rule;
    const char* values;
    const char* tip;
};
const Example kExamples[] = {
    {"amax 500 clips (E4M3)", BlockFormat::MxFp8E4M3, ScaleRule::Floor,
     "500 -3.25 1 0.75 -0.5 12 0.1 -96 7.5 0.03 2.2 -0.9 40 -1.6 0.4 3 -11 0.02 1.25 -6 0.6 "
     "220 -0.15 9 0.005 -2.75 1.9 -30 0.8 5 -0.07 64",
     "OCP MX's floor rule gives this block the scale 2^0, and 500 > 448 saturates; "
     "switch to ceil: the scale 2^1 keeps it."},
    {"MXFP4 flushes small values", BlockFormat::MxFp4, ScaleRule::Floor,
     "6 0.1 -0.2 1 0.26 -3 0.7 0.05 2 -0.12 1.4 4 -0.3 0.02 5 -1",
     "E2M1's smallest non-zero magnitude is 0.5 · scale: next to 6, the values below 0.25 "
     "round to zero."},
    {"All zero", BlockFormat::MxFp8E4M3, ScaleRule::Floor, "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
     "E8M0 has no zero: an all-zero block gets the smallest scale, 2^-127."},
    {"A NaN", BlockFormat::MxFp8E4M3, ScaleRule::Floor, "1 2 nan 3 -4 0.5",
     "A NaN (or inf) makes amax NaN: the E8M0 scale is NaN (0xFF) and so is the whole block."},
    {"NVFP4", BlockFormat::NvFp4, ScaleRule::Floor,
     "2.4 -1 0.3 6 -0.05 1.7 0.9 -3.3 0.01 4.4 -0.6 2 0.15 -5.2 1.1 0.75",
     "One E4M3 scale (amax / 6) per 16 values under a float32 global scale amax / (448 · 6)."},
};

// The shortest text that reads back as the same float32 (weights are float32 or narrower).
QString float_text(double value) {
    if (!std::isfinite(value) || value == 0) return lab::format_number(value);
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, static_cast<float>(value)).ptr;
    return QString::fromLatin1(buf, static_cast<qsizetype>(end - buf));
}

// A weight tensor as a (reduction, outputs) matrix; false for what is not a kernel.
bool as_matrix(const WeightTensor& t, std::int64_t& rows, std::int64_t& cols) {
    if (t.shape.size() != 2 && t.shape.size() != 4) return false;
    cols = t.shape.back();
    rows = cols > 0 ? t.numel() / cols : 0;
    return rows > 0 && cols > 0;
}

} // namespace

BlockInput parse_block_values(const QString& text, int block_size, const QString& format_name) {
    static const QRegularExpression separators(QStringLiteral("[\\s,;]+"));
    const QStringList tokens = text.split(separators, Qt::SkipEmptyParts);
    BlockInput out;
    for (qsizetype i = 0; i < tokens.size(); ++i) {
        if (i == block_size) {
            out.error = QStringLiteral("%1 values: a %2 block holds %3; '%4' (value %5) is the "
                                       "first too many")
                            .arg(tokens.size())
                            .arg(format_name)
                            .arg(block_size)
                            .arg(tokens[i])
                            .arg(i + 1);
            out.values.clear();
            return out;
        }
        double v = 0;
        if (!parse_lab_number(tokens[i], v)) {
            out.error = QStringLiteral("Value %1: '%2' is not a number (try 0.1, -3.5, 1e-5, "
                                       "2^-24, inf or nan)")
                            .arg(i + 1)
                            .arg(tokens[i]);
            out.values.clear();
            return out;
        }
        out.values.push_back(v);
    }
    return out;
}

BlockView::BlockView(QWidget* parent) : QWidget(parent) {
    const QFont big = lab::scaled_font(font(), 1.2);
    const QFont bold = lab::scaled_font(font(), 1.1, true);
    QFont mono = big;
    mono.setFamily(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::Monospace);

    // Left: the values, the format and rule, the examples, the scale and the floor/ceil line.
    auto* values_label = new QLabel(QStringLiteral("Values of one block (32; 16 for nvfp4), "
                                                   "separated by spaces, commas or new lines:"));
    values_label->setWordWrap(true);
    m_edit = new QPlainTextEdit;
    m_edit->setFont(big);
    m_edit->setTabChangesFocus(true);
    m_edit->setMinimumHeight(QFontMetrics(big).lineSpacing() * 4 + 12);
    m_edit->setMaximumHeight(QFontMetrics(big).lineSpacing() * 6 + 12);
    m_edit->setToolTip("Numbers as in the lab's x field: 0.1, -3.5, 1e-5, 2^-24, 0x1p-24, inf or "
                       "nan. Paste a column from a spreadsheet or a row of weights.");

    m_format_box = new QComboBox;
    m_format_box->setFont(bold);
    for (BlockFormat f : block_formats()) {
        const BlockFormatSpec& spec = block_format_spec(f);
        m_format_box->addItem(qstr(spec.name), static_cast<int>(f));
        m_format_box->setItemData(
            m_format_box->count() - 1,
            QStringLiteral("%1 elements, one %2 scale per %3 values: %4 bits per element")
                .arg(qstr(element_format_name(spec.element)), qstr(element_format_name(spec.scale)))
                .arg(spec.block_size)
                .arg(spec.bits_per_element),
            Qt::ToolTipRole);
    }
    m_rule_box = new QComboBox;
    m_rule_box->setFont(bold);
    m_rule_box->addItem(QStringLiteral("floor (OCP MX)"), static_cast<int>(ScaleRule::Floor));
    m_rule_box->addItem(QStringLiteral("ceil (Transformer Engine)"),
                        static_cast<int>(ScaleRule::Ceil));
    m_rule_box->setToolTip(
        "floor: X = 2^(floor(log2 amax) − emax of the element), the OCP MX spec; the largest "
        "values may clip to the element max. ceil: the smallest power of two that clips nothing. "
        "NVFP4 has its own rule (amax / 6 rounded to E4M3).");
    auto* pickers = new QHBoxLayout;
    auto* format_label = new QLabel(QStringLiteral("Format"));
    format_label->setFont(bold);
    auto* rule_label = new QLabel(QStringLiteral("Scale rule"));
    rule_label->setFont(bold);
    pickers->addWidget(format_label);
    pickers->addWidget(m_format_box);
    pickers->addSpacing(12);
    pickers->addWidget(rule_label);
    pickers->addWidget(m_rule_box);
    pickers->addStretch(1);

    auto* examples = new QGridLayout;
    examples->setSpacing(6);
    int n = 0;
    for (const Example& e : kExamples) {
        auto* button = new QPushButton(QString::fromUtf8(e.caption));
        button->setToolTip(QString::fromUtf8(e.tip));
        const Example* ex = &e;
        connect(button, &QPushButton::clicked, this, [this, ex] {
            set_format(ex->format);
            set_rule(ex->rule);
            set_values_text(QString::fromUtf8(ex->values));
        });
        examples->addWidget(button, n / 2, n % 2);
        m_examples.append(button);
        ++n;
    }

    m_error = new QLabel;
    m_error->setFont(bold);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(
        QStringLiteral("color: %1;").arg(lab::overflow_colour(palette()).name()));
    m_error->hide();

    m_scale = new QLabel;
    m_scale->setFont(big);
    m_scale->setWordWrap(true);
    m_scale->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* scale_box = new QGroupBox(QStringLiteral("The block's shared scale"));
    auto* scale_layout = new QVBoxLayout(scale_box);
    scale_layout->addWidget(m_scale);

    m_floor_ceil = new QLabel;
    m_floor_ceil->setFont(lab::scaled_font(font(), 1.1));
    m_floor_ceil->setWordWrap(true);
    auto* rule_box = new QGroupBox(QStringLiteral("Floor against ceil"));
    auto* rule_layout = new QVBoxLayout(rule_box);
    rule_layout->addWidget(m_floor_ceil);

    // Or a block of a trained model's weights.
    auto* open_weights = new QPushButton(QStringLiteral("Weights…"));
    open_weights->setToolTip("Take the block from a trained model's weights (a .safetensors "
                             "file: a run's weights.safetensors or an export)");
    m_tensor_box = new QComboBox;
    m_tensor_box->setEnabled(false);
    m_tensor_box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_tensor_box->setToolTip("A kernel, as a (reduction, outputs) matrix");
    m_unit_box = new QSpinBox;
    m_unit_box->setEnabled(false);
    m_unit_box->setToolTip("The output unit (or filter) whose weights form the block: the values "
                           "one dot product reduces over, as MX blocks run");
    m_block_box = new QSpinBox;
    m_block_box->setEnabled(false);
    m_block_box->setToolTip("Which block of that unit's weights (0: the first 32, or 16)");
    auto* weights_row = new QHBoxLayout;
    weights_row->addWidget(open_weights);
    weights_row->addWidget(m_tensor_box, 1);
    weights_row->addWidget(new QLabel(QStringLiteral("unit")));
    weights_row->addWidget(m_unit_box);
    weights_row->addWidget(new QLabel(QStringLiteral("block")));
    weights_row->addWidget(m_block_box);
    connect(open_weights, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, QStringLiteral("Weights for the Block view"), dialog_folder(),
            QStringLiteral("safetensors (*.safetensors)"));
        if (path.isEmpty()) return;
        remember_dialog_folder(path);
        load_weights(path);
    });
    connect(m_tensor_box, &QComboBox::currentIndexChanged, this, [this] { take_weights(); });
    connect(m_unit_box, &QSpinBox::valueChanged, this, [this] { take_weights(); });
    connect(m_block_box, &QSpinBox::valueChanged, this, [this] { take_weights(); });

    auto* left = new QVBoxLayout;
    left->addWidget(values_label);
    left->addWidget(m_edit);
    left->addLayout(weights_row);
    left->addLayout(pickers);
    left->addLayout(examples);
    left->addWidget(m_error);
    left->addWidget(scale_box);
    left->addWidget(rule_box);
    left->addStretch(1);

    // Right: one row per element.
    m_table = new QTableWidget(0, ColumnCount);
    m_table->setHorizontalHeaderLabels(
        {"#", "input", "code (s|e|m)", "hex", "decoded", "error", "what happened"});
    m_table->horizontalHeaderItem(ColBits)->setToolTip(
        QStringLiteral("The element's bits: sign | exponent | mantissa"));
    m_table->horizontalHeaderItem(ColDecoded)
        ->setToolTip(QStringLiteral("code value × block scale (× global scale for nvfp4)"));
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setFont(bold);
    m_table->setFont(big);
    m_table->verticalHeader()->setDefaultSectionSize(QFontMetrics(big).height() + 6);

    auto* layout = new QHBoxLayout(this);
    layout->addLayout(left, 2);
    layout->addWidget(m_table, 3);

    connect(m_edit, &QPlainTextEdit::textChanged, this, &BlockView::refresh);
    connect(m_format_box, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_format = static_cast<BlockFormat>(m_format_box->itemData(index).toInt());
        if (m_tensor_box->isEnabled())
            take_weights(); // the block size changed: 16 values for nvfp4, 32 for MX
        else
            refresh();
    });
    connect(m_rule_box, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_rule = static_cast<ScaleRule>(m_rule_box->itemData(index).toInt());
        refresh();
    });
    set_values_text(QString::fromUtf8(kExamples[0].values));
}

void BlockView::set_values_text(const QString& text) {
    m_edit->setPlainText(text); // textChanged refreshes
}

void BlockView::set_format(BlockFormat format) {
    const int index = m_format_box->findData(static_cast<int>(format));
    if (index >= 0) m_format_box->setCurrentIndex(index);
}

void BlockView::set_rule(ScaleRule rule) {
    const int index = m_rule_box->findData(static_cast<int>(rule));
    if (index >= 0) m_rule_box->setCurrentIndex(index);
}

bool BlockView::clipped(int i) const {
    if (!m_result || i < 0 || i >= static_cast<int>(m_values.size())) return false;
    return clipped_in(*m_result, m_values[static_cast<std::size_t>(i)]);
}

bool BlockView::within_rounding(int i) const {
    if (!m_result || i < 0 || i >= static_cast<int>(m_values.size())) return false;
    return within_rounding_in(*m_result, m_values[static_cast<std::size_t>(i)]);
}

bool BlockView::flushed(int i) const {
    if (!m_result || i < 0 || i >= static_cast<int>(m_values.size())) return false;
    const auto k = static_cast<std::size_t>(i);
    return m_values[k] != 0 && !std::isnan(m_values[k]) && m_result->decoded[k] == 0;
}

QString BlockView::cell(int row, Column column) const {
    const QTableWidgetItem* item = m_table->item(row, column);
    return item ? item->text() : QString();
}

QPushButton* BlockView::example(const QString& caption) const {
    for (QPushButton* b : m_examples)
        if (b->text() == caption) return b;
    return nullptr;
}

QString BlockView::load_weights(const QString& path) {
    ModelWeights weights;
    try {
        weights = read_safetensors(path.toStdString()).weights;
    } catch (const Error& e) {
        const QString message = QString::fromStdString(e.what());
        show_error(message);
        return message;
    }
    m_weights = std::move(weights);
    {
        const QSignalBlocker block(m_tensor_box);
        m_tensor_box->clear();
        for (std::size_t i = 0; i < m_weights.tensors.size(); ++i) {
            const WeightTensor& t = m_weights.tensors[i];
            std::int64_t rows = 0, cols = 0;
            if (!as_matrix(t, rows, cols)) continue; // biases: one value per unit, no reduction
            m_tensor_box->addItem(QStringLiteral("%1 (%2 × %3)")
                                      .arg(QString::fromStdString(t.name))
                                      .arg(rows)
                                      .arg(cols),
                                  static_cast<int>(i));
        }
    }
    const bool any = m_tensor_box->count() > 0;
    m_tensor_box->setEnabled(any);
    m_unit_box->setEnabled(any);
    m_block_box->setEnabled(any);
    if (!any) {
        const QString message =
            QStringLiteral("%1: no kernel (a 2D or 4D weight tensor) to take a block from")
                .arg(QFileInfo(path).fileName());
        show_error(message);
        return message;
    }
    take_weights();
    return {};
}

void BlockView::take_weights() {
    const int index = m_tensor_box->currentData().toInt();
    if (!m_tensor_box->isEnabled() || index < 0 ||
        index >= static_cast<int>(m_weights.tensors.size()))
        return;
    const WeightTensor& t = m_weights.tensors[static_cast<std::size_t>(index)];
    std::int64_t rows = 0, cols = 0;
    if (!as_matrix(t, rows, cols)) return;
    const int size = block_format_spec(m_format).block_size;
    const auto blocks = static_cast<int>((rows + size - 1) / size);
    {
        const QSignalBlocker b1(m_unit_box), b2(m_block_box);
        m_unit_box->setRange(0, static_cast<int>(cols - 1));
        m_block_box->setRange(0, blocks - 1);
    }
    const std::vector<double> all = values_as_double(t); // row-major (rows, cols)
    const std::int64_t unit = m_unit_box->value(),
                       first = std::int64_t{m_block_box->value()} * size;
    QStringList texts;
    for (std::int64_t r = first; r < std::min<std::int64_t>(rows, first + size); ++r)
        texts << float_text(all[static_cast<std::size_t>(r * cols + unit)]);
    set_values_text(texts.join(QLatin1Char(' ')));
}

void BlockView::show_error(const QString& text) {
    m_error->setText(text);
    m_error->setVisible(!text.isEmpty());
}

void BlockView::refresh() {
    const BlockFormatSpec& spec = block_format_spec(m_format);
    const bool mx = !spec.tensor_scale;
    m_rule_box->setEnabled(mx); // NVFP4's only rule is amax
    m_result.reset();
    m_floor_only.clear();
    const BlockInput input =
        parse_block_values(m_edit->toPlainText(), spec.block_size, qstr(spec.name));
    show_error(input.error);
    m_values = input.values;
    if (input.error.isEmpty() && !m_values.empty()) {
        BlockQuantConfig config;
        config.format = m_format;
        if (mx) config.rule = m_rule;
        try {
            m_result = quantize_blocks(m_values, config);
        } catch (const Error& e) {
            show_error(QString::fromStdString(e.what()));
        }
    }
    fill_table();
    fill_scale();
    fill_floor_ceil();
}

void BlockView::fill_table() {
    m_table->setRowCount(m_result ? static_cast<int>(m_values.size()) : 0);
    if (!m_result) return;
    const ElementFormat elem = m_result->config.spec.element;
    const QColor overflow = lab::overflow_colour(palette());
    const QColor underflow = lab::underflow_colour(palette());
    QColor clip_background = overflow;
    clip_background.setAlpha(60);
    QFont mono = m_table->font();
    mono.setFamily(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::Monospace);
    const double max = element_spec(elem).max_finite;
    for (int i = 0; i < static_cast<int>(m_values.size()); ++i) {
        const auto k = static_cast<std::size_t>(i);
        const double v = m_values[k], d = m_result->decoded[k];
        const bool rounding = within_rounding(i);
        const bool clip = clipped(i) && !rounding, flush = flushed(i);
        QString note;
        if (rounding)
            note = QStringLiteral("the largest value, %1%2 × scale (within rounding)")
                       .arg(v < 0 ? QStringLiteral("−") : QString(), lab::format_number(max));
        else if (clip)
            note = QStringLiteral("clipped to %1%2 × scale")
                       .arg(v < 0 ? QStringLiteral("−") : QString(), lab::format_number(max));
        else if (flush)
            note = QStringLiteral("flushed to 0");
        else if (std::isnan(d))
            note = QStringLiteral("NaN");
        const QString texts[ColumnCount] = {
            QString::number(i), lab::format_number(v, 9),
            QString::fromStdString(element_bit_string(m_result->codes[k], elem)),
            QString::fromStdString(element_hex_string(m_result->codes[k], elem)),
            // A float32 product (code value x scale) in its shortest float32 text: 2.0000001,
            // not the 2.00000009 that nine digits of the widened double would show.
            static_cast<double>(static_cast<float>(d)) == d
                ? lab::float32_text(static_cast<float>(d))
                : lab::format_number(d, 9),
            error_text(v, d), note};
        for (int c = 0; c < ColumnCount; ++c) {
            auto* item = new QTableWidgetItem(texts[c]);
            if (c == ColBits || c == ColHex) item->setFont(mono);
            if (c != ColNote && c != ColBits)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (clip) {
                item->setBackground(clip_background);
                if (c == ColNote || c == ColInput) {
                    QFont f = c == ColNote ? m_table->font() : item->font();
                    f.setBold(true);
                    item->setFont(f);
                }
                if (c == ColNote) item->setForeground(overflow);
            } else if (flush && (c == ColNote || c == ColDecoded)) {
                item->setForeground(underflow);
            }
            m_table->setItem(i, c, item);
        }
    }
}

void BlockView::fill_scale() {
    if (!m_result) {
        m_scale->setText(m_error->isVisible()
                             ? QStringLiteral("—")
                             : QStringLiteral("Type or paste the values of one block."));
        return;
    }
    const BlockQuantResult& r = *m_result;
    const BlockFormatSpec& spec = r.config.spec;
    const BlockReport& b = r.blocks.front();
    const QString scale_format = qstr(element_format_name(spec.scale));
    const QString hex = QString::fromStdString(element_hex_string(b.scale.code, spec.scale));
    QStringList lines;
    double amax = 0;
    bool any_nan = false;
    for (double v : m_values) {
        if (std::isnan(v)) any_nan = true;
        amax = std::max(amax, std::fabs(v));
    }
    lines << QStringLiteral("<b>%1 %2</b> = %3")
                 .arg(scale_format, hex, scale_value_text(b.scale, spec));
    if (spec.tensor_scale) {
        lines << QStringLiteral("float32 global scale = amax / (448 · 6) = <b>%1</b>")
                     .arg(lab::format_number(r.global_scale, 9));
        lines << QStringLiteral("each element = code × %1 × %2")
                     .arg(lab::format_number(b.scale.value, 6),
                          lab::format_number(r.global_scale, 6));
    }
    int rounding = 0; // of the clipped, those within rounding of the largest value
    for (double v : m_values) rounding += within_rounding_in(r, v) ? 1 : 0;
    const QString within =
        rounding > 0 ? QStringLiteral(" (%1 within rounding of the largest value)").arg(rounding)
                     : QString();
    lines << QStringLiteral("amax %1 · %2 max %3 · clipped <b>%4</b>%5 · flushed to 0 <b>%6</b>")
                 .arg(any_nan ? QStringLiteral("NaN") : lab::format_number(amax, 6),
                      qstr(element_format_name(spec.element)),
                      lab::format_number(element_spec(spec.element).max_finite))
                 .arg(b.clipped)
                 .arg(within)
                 .arg(b.zeros);
    if (std::isnan(b.scale.value))
        lines << QStringLiteral("The block holds a NaN or inf: the scale is NaN, and so is every "
                                "element.");
    else if (amax == 0 && !any_nan && spec.scale == ElementFormat::E8M0)
        lines << QStringLiteral("All zero: E8M0 has no zero, so the scale is its smallest, "
                                "2^-127, and every element is 0.");
    m_scale->setText(lines.join(QStringLiteral("<br>")));
}

void BlockView::fill_floor_ceil() {
    if (!m_result) {
        m_floor_ceil->setText(QStringLiteral("—"));
        return;
    }
    const BlockFormatSpec& spec = m_result->config.spec;
    if (spec.tensor_scale) {
        QString text = QStringLiteral("NVFP4 has one rule: the E4M3 scale nearest to amax / 6 "
                                      "(under the global scale). Floor and ceil are MX rules.");
        if (m_result->clipped > 0)
            text += QStringLiteral(" Here the scale rounded down, so %1 value(s) clip.")
                        .arg(m_result->clipped);
        m_floor_ceil->setText(text);
        return;
    }
    BlockQuantConfig config;
    config.format = m_format;
    config.rule = ScaleRule::Floor;
    const BlockQuantResult floor = quantize_blocks(m_values, config);
    config.rule = ScaleRule::Ceil;
    const BlockQuantResult ceil = quantize_blocks(m_values, config);
    QStringList listed;
    for (int i = 0; i < static_cast<int>(m_values.size()); ++i) {
        const auto k = static_cast<std::size_t>(i);
        if (!clipped_in(floor, m_values[k]) || clipped_in(ceil, m_values[k])) continue;
        m_floor_only.push_back(i);
        if (listed.size() < 6)
            listed << QStringLiteral("#%1 %2 → %3")
                          .arg(i)
                          .arg(lab::format_number(m_values[k], 6),
                               lab::format_number(floor.decoded[k], 6));
    }
    const BlockScale fs = floor.blocks.front().scale, cs = ceil.blocks.front().scale;
    QString text;
    if (!m_floor_only.empty()) {
        if (m_floor_only.size() > static_cast<std::size_t>(listed.size()))
            listed << QStringLiteral("…");
        text = QStringLiteral("<b>Under floor (scale %1), %2 value(s) clip that ceil (scale %3) "
                              "keeps:</b> %4.")
                   .arg(power_of_two(fs))
                   .arg(m_floor_only.size())
                   .arg(power_of_two(cs), listed.join(QStringLiteral(", ")));
        const int lost = ceil.blocks.front().zeros - floor.blocks.front().zeros;
        if (lost > 0)
            text += QStringLiteral(" Ceil's larger scale flushes %1 more small value(s) to 0.")
                        .arg(lost);
    } else if (fs.code == cs.code) {
        text = QStringLiteral("No value clips under floor: floor and ceil give the same scale "
                              "(%1).")
                   .arg(power_of_two(fs));
    } else {
        text = QStringLiteral("No value clips under floor (scale %1); ceil's scale is %2.")
                   .arg(power_of_two(fs), power_of_two(cs));
    }
    m_floor_ceil->setText(text);
}

} // namespace mantissa::ui
