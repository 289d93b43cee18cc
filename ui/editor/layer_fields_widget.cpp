// LayerFieldsWidget: spin boxes and combos for one layer, laid out in a row.
// Child widgets are named after the LayerSpec field ("units", "filters", "kernel", ...).
#include "ui/editor/layer_fields_widget.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <algorithm>
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
    }
    row->addStretch(1);
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
