// LayerFieldsWidget: spin boxes and combos for one layer, laid out in a row.
// Child widgets are named after the LayerSpec field ("units", "filters", "kernel", ...).
#include "ui/editor/layer_fields_widget.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <QStyle>
#include <QValidator>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/backend/activation.h"

namespace mantissa::ui {

namespace {
QString activation_tip(Activation act) {
    switch (act) {
    case Activation::Linear:
        return QStringLiteral("linear: passes values through unchanged.");
    case Activation::Relu:
        return QStringLiteral("relu: max(0, x); the usual hidden activation.");
    case Activation::Gelu:
        return QStringLiteral("gelu: a smooth relu (tanh approximation), common in transformers.");
    case Activation::Tanh:
        return QStringLiteral("tanh: squashes values into (-1, 1).");
    case Activation::Sigmoid:
        return QStringLiteral("sigmoid: squashes values into (0, 1).");
    case Activation::Softmax:
        return QStringLiteral("softmax: turns the scores into class probabilities that sum to 1; "
                              "keep it in float32 under mixed precision.");
    }
    return {};
}

// An epsilon box: shows 0.001 and 1e-5 as people write them (a plain QDoubleSpinBox shows
// 0.000010 with six decimals, and 0.000000 for BERT's 1e-12), accepts either spelling when
// typed, and its arrows multiply or divide by 10: epsilons differ by orders of magnitude.
class EpsilonSpinBox final : public QDoubleSpinBox {
public:
    using QDoubleSpinBox::QDoubleSpinBox;

    QString textFromValue(double value) const override {
        return number_locale().toString(value, 'g', 6);
    }
    double valueFromText(const QString& text) const override {
        bool ok = false;
        const double value = number_locale().toDouble(text.trimmed(), &ok);
        return ok ? value : this->value();
    }
    QValidator::State validate(QString& text, int&) const override {
        const QLocale locale = number_locale();
        bool ok = false;
        const double value = locale.toDouble(text.trimmed(), &ok);
        if (ok && value >= minimum() && value <= maximum()) return QValidator::Acceptable;
        // "1e-5" is typed through "1e" and "1e-": let a number in the making stand.
        for (QChar c : text)
            if (!c.isDigit() && !c.isSpace() && QString(c) != locale.decimalPoint() &&
                !QStringLiteral("eE+-").contains(c))
                return QValidator::Invalid;
        return QValidator::Intermediate;
    }
    void stepBy(int steps) override {
        interpretText(); // a half-typed "2e-5" is what the arrow steps from, as in the base class
        // Six significant digits, so ten steps up and down come back to the same value.
        const double stepped = value() * std::pow(10.0, steps);
        setValue(QString::number(stepped, 'g', 6).toDouble());
        if (style()->styleHint(QStyle::SH_SpinBox_SelectOnStep, nullptr, this)) selectAll();
    }
    // The base class sizes the box for the range's ends ("1e-12", "1"); values such as
    // ResNet's 1.001e-5 are longer.
    QSize sizeHint() const override { return widened(QDoubleSpinBox::sizeHint()); }
    QSize minimumSizeHint() const override { return widened(QDoubleSpinBox::minimumSizeHint()); }

private:
    QLocale number_locale() const {
        QLocale locale = this->locale();
        locale.setNumberOptions(QLocale::OmitGroupSeparator | QLocale::OmitLeadingZeroInExponent);
        return locale;
    }
    QSize widened(QSize size) const {
        const QFontMetrics metrics = fontMetrics();
        const int ends = std::max(metrics.horizontalAdvance(textFromValue(minimum())),
                                  metrics.horizontalAdvance(textFromValue(maximum())));
        const int longest = metrics.horizontalAdvance(textFromValue(1.001e-5));
        size.rwidth() += std::max(0, longest - ends);
        return size;
    }
};

// The fewest decimals, from `least` to 6, that show `value` exactly: 0.99 as 0.990, but a
// file's 0.9997 (Inception's momentum) as itself rather than rounded to 1.000.
int decimals_for(double value, int least) {
    int decimals = least;
    while (decimals < 6 &&
           std::abs(QString::number(value, 'f', decimals).toDouble() - value) > 1e-12)
        ++decimals;
    return decimals;
}
} // namespace

LayerFieldsWidget::LayerFieldsWidget(const LayerSpec& spec, QWidget* parent)
    : QWidget(parent), m_spec(spec) {
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(4, 1, 4, 1);
    row->setSpacing(4);
    switch (m_spec.type) {
    case LayerType::Dense:
        add_spin("units", tr("units"), tr("Number of outputs (neurons) of the layer."), 1, 65536,
                 m_spec.units, &m_spec.units);
        add_activation_combo();
        break;
    case LayerType::Conv2D: {
        add_spin("filters", tr("filters"), tr("Number of filters, i.e. output channels."), 1, 4096,
                 m_spec.filters, &m_spec.filters);
        add_size("kernel", tr("kernel"), tr("Size of the filter window in pixels."), 1, 15,
                 m_spec.kernel);
        // A stride of 0 (the default) means 1 for a convolution: the spin box shows 1.
        add_size("stride", tr("stride"), tr("How many pixels the filter moves per step."), 1, 8,
                 m_spec.stride);
        auto* padding = new QComboBox(this);
        padding->setObjectName("padding");
        padding->setSizeAdjustPolicy(QComboBox::AdjustToContents);
        padding->addItems({"valid", "same"});
        padding->setItemData(0, tr("valid: no padding; the image shrinks by kernel - 1."),
                             Qt::ToolTipRole);
        padding->setItemData(1, tr("same: zero padding so the output keeps the input's size."),
                             Qt::ToolTipRole);
        padding->setToolTip(tr("Padding: valid shrinks the image, same keeps its size."));
        padding->setCurrentText(QString::fromStdString(m_spec.padding));
        connect(padding, &QComboBox::currentTextChanged, this, [this](const QString& text) {
            m_spec.padding = text.toStdString();
            emit spec_changed(m_spec);
        });
        row->addWidget(padding);
        add_activation_combo();
        break;
    }
    case LayerType::MaxPool2D:
        add_size("pool", tr("pool"), tr("Size of the window whose maximum is kept."), 1, 8,
                 m_spec.pool);
        add_size("stride", tr("stride"),
                 tr("How far the window moves; auto = the pool size (no overlap)."), 0, 8,
                 m_spec.stride);
        for (QSpinBox* spin : findChildren<QSpinBox*>())
            if (spin->objectName().startsWith(QLatin1String("stride")))
                spin->setSpecialValueText(tr("auto"));
        break;
    case LayerType::Flatten: {
        auto* label = new QLabel(tr("no settings"), this);
        label->setEnabled(false);
        row->addWidget(label);
        break;
    }
    case LayerType::Dropout: {
        row->addWidget(new QLabel(tr("rate"), this));
        auto* rate = new QDoubleSpinBox(this);
        rate->setObjectName("rate");
        rate->setRange(0.0, 0.95);
        rate->setSingleStep(0.05);
        rate->setDecimals(2);
        rate->setValue(m_spec.rate);
        rate->setToolTip(tr("Fraction of inputs zeroed at random during training."));
        connect(rate, &QDoubleSpinBox::valueChanged, this, [this](double value) {
            m_spec.rate = value;
            emit spec_changed(m_spec);
        });
        row->addWidget(rate);
        break;
    }
    case LayerType::Activation:
        add_activation_combo();
        break;
    case LayerType::BatchNormalization: {
        row->addWidget(new QLabel(tr("momentum"), this));
        auto* momentum = new QDoubleSpinBox(this);
        momentum->setObjectName("momentum");
        // Momentum 1 would freeze the moving statistics at their start; a file's 0.9997 widens
        // the range rather than being clamped, so the box shows what trains.
        momentum->setDecimals(decimals_for(m_spec.momentum, 3));
        momentum->setRange(0.0, m_spec.momentum < 1.0 ? std::max(0.999, m_spec.momentum) : 0.999);
        momentum->setSingleStep(0.01);
        momentum->setValue(m_spec.momentum);
        momentum->setToolTip(
            tr("How slowly the moving mean and variance used at test time follow the batches: "
               "moving = moving × momentum + batch × (1 − momentum). Keras's default "
               "is 0.99; PyTorch's momentum=0.1 is 0.9 here."));
        connect(momentum, &QDoubleSpinBox::valueChanged, this, [this](double value) {
            m_spec.momentum = value;
            emit spec_changed(m_spec);
        });
        row->addWidget(momentum);
        add_epsilon(tr("Added to each channel's variance (the batch's in training, the moving "
                       "one at test time) before its square root, so a near-constant channel is "
                       "not divided by almost zero."));
        break;
    }
    case LayerType::LayerNormalization:
        add_epsilon(tr("Added to each example's variance before its square root, so a "
                       "near-constant example is not divided by almost zero."));
        break;
    }
    row->addStretch(1);
}

void LayerFieldsWidget::add_epsilon(const QString& what) {
    layout()->addWidget(new QLabel(tr("epsilon"), this));
    auto* epsilon = new EpsilonSpinBox(this);
    epsilon->setObjectName("epsilon");
    // From BERT's 1e-12 to 1; a file's value outside widens the range rather than being clamped.
    const double value = m_spec.epsilon;
    const double least = value > 0 ? std::min(1e-12, value) : 1e-12;
    // Enough decimals for the smallest value's six significant digits: the base class rounds
    // every value to its decimals.
    epsilon->setDecimals(std::min(300, static_cast<int>(std::ceil(-std::log10(least))) + 6));
    epsilon->setRange(least, std::max(1.0, value));
    epsilon->setValue(value);
    epsilon->setToolTip(what + tr(" Keras's default is 0.001, PyTorch's 1e-5; the arrows multiply "
                                  "or divide by 10. It is added in float32, even when a 16-bit "
                                  "dtype on this layer makes its statistics 16-bit."));
    connect(epsilon, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        m_spec.epsilon = v;
        emit spec_changed(m_spec);
    });
    layout()->addWidget(epsilon);
}

void LayerFieldsWidget::add_spin(const QString& name, const QString& label, const QString& tip,
                                 int min, int max, std::int64_t value, std::int64_t* field,
                                 std::int64_t* field2) {
    auto* text = new QLabel(label, this);
    text->setToolTip(tip);
    layout()->addWidget(text);
    // The experiment reader accepts any positive count: a larger value from a file widens the
    // range (the usual range keeps the column narrow), so the box never shows a clamped number
    // that is not what trains.
    if (value > max && value <= std::numeric_limits<int>::max()) max = static_cast<int>(value);
    if (value > max) {
        // Beyond what a spin box holds (5,000,000,000 units): the real number, as text.
        auto* shown =
            new QLabel(QLocale(QLocale::English).toString(static_cast<qlonglong>(value)), this);
        shown->setObjectName(name);
        shown->setToolTip(tip + tr(" Too large to edit here; change it in the experiment file."));
        layout()->addWidget(shown);
        return;
    }
    auto* spin = new QSpinBox(this);
    spin->setObjectName(name);
    spin->setRange(min, max);
    spin->setValue(static_cast<int>(value));
    spin->setToolTip(tip);
    spin->setAccelerated(true);
    connect(spin, &QSpinBox::valueChanged, this, [this, field, field2](int v) {
        *field = v;
        if (field2) *field2 = v;
        emit spec_changed(m_spec);
    });
    layout()->addWidget(spin);
}

void LayerFieldsWidget::add_size(const QString& name, const QString& label, const QString& tip,
                                 int min, int max, std::int64_t (&height_width)[2]) {
    if (height_width[0] == height_width[1]) {
        add_spin(name, label, tip + tr(" Square: the same height and width."), min, max,
                 std::max<std::int64_t>(height_width[0], min), &height_width[0], &height_width[1]);
        return;
    }
    // A non-square size (from an experiment file) keeps both sides rather than being squared.
    add_spin(name, label, tip + tr(" This spin box sets the height."), min, max,
             std::max<std::int64_t>(height_width[0], min), &height_width[0]);
    add_spin(name + QStringLiteral("_w"), QStringLiteral("\u00d7"),
             tip + tr(" This spin box sets the width."), min, max,
             std::max<std::int64_t>(height_width[1], min), &height_width[1]);
}

void LayerFieldsWidget::add_activation_combo() {
    auto* combo = new QComboBox(this);
    combo->setObjectName("activation");
    combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    const Activation all[] = {Activation::Linear, Activation::Relu,    Activation::Gelu,
                              Activation::Tanh,   Activation::Sigmoid, Activation::Softmax};
    for (Activation act : all) {
        combo->addItem(QString::fromLatin1(activation_name(act)), static_cast<int>(act));
        combo->setItemData(combo->count() - 1, activation_tip(act), Qt::ToolTipRole);
    }
    combo->setCurrentIndex(combo->findData(static_cast<int>(m_spec.activation)));
    combo->setToolTip(tr("Activation applied to the layer's output."));
    connect(combo, &QComboBox::currentIndexChanged, this, [this, combo](int index) {
        if (index < 0) return;
        m_spec.activation = static_cast<Activation>(combo->itemData(index).toInt());
        emit spec_changed(m_spec);
    });
    layout()->addWidget(combo);
}

} // namespace mantissa::ui
