// LayerPalette: the "Add layer" row of the stack editor.
// Buttons are named "add_<Type>" so tests and shortcuts can find them.
#include "ui/editor/layer_palette.h"

#include <QGridLayout>
#include <QLabel>
#include <QToolButton>

namespace mantissa::ui {

QString layer_type_description(LayerType type) {
    switch (type) {
    case LayerType::Dense:
        return QStringLiteral("Dense: every output is a weighted sum of all inputs plus a bias "
                              "(a matrix product), then the activation.");
    case LayerType::Conv2D:
        return QStringLiteral("Conv2D: slides small learned filters over the image to detect "
                              "local patterns such as edges and strokes.");
    case LayerType::MaxPool2D:
        return QStringLiteral("MaxPool2D: keeps the largest value in each window, shrinking the "
                              "image; it has no weights.");
    case LayerType::Flatten:
        return QStringLiteral("Flatten: turns an image (height, width, channels) into one long "
                              "vector so Dense layers can follow.");
    case LayerType::Dropout:
        return QStringLiteral("Dropout: during training zeroes a random fraction (the rate) of "
                              "its inputs to fight overfitting; no effect at test time.");
    case LayerType::Activation:
        return QStringLiteral("Activation: applies a function (relu, softmax, ...) to each value "
                              "on its own; softmax turns scores into probabilities.");
    case LayerType::BatchNormalization:
        return QStringLiteral("BatchNormalization: rescales each channel to mean 0, variance 1 "
                              "over the batch (and an image's pixels) in training, with moving "
                              "averages at test time, then applies a learned gamma and beta. Its "
                              "statistics stay in float32 under mixed policies.");
    case LayerType::LayerNormalization:
        return QStringLiteral("LayerNormalization: rescales each example to mean 0, variance 1 "
                              "over its last axis, the same in training and at test time, then "
                              "applies a learned gamma and beta. Its statistics stay in float32 "
                              "under mixed policies.");
    }
    return {};
}

LayerSpec default_layer(LayerType type) {
    LayerSpec spec;
    spec.type = type;
    switch (type) {
    case LayerType::Dense:
        spec.units = 128;
        spec.activation = Activation::Relu;
        break;
    case LayerType::Conv2D:
        spec.filters = 32;
        spec.activation = Activation::Relu;
        break;
    case LayerType::MaxPool2D:
        break;
    case LayerType::Flatten:
        break;
    case LayerType::Dropout:
        spec.rate = 0.2;
        break;
    case LayerType::Activation:
        spec.activation = Activation::Softmax;
        break;
    case LayerType::BatchNormalization: // momentum 0.99, epsilon 1e-3: LayerSpec's (Keras's)
    case LayerType::LayerNormalization: // epsilon 1e-3
        break;
    }
    return spec;
}

QString layer_type_caption(LayerType type) {
    if (type == LayerType::BatchNormalization) return QStringLiteral("BatchNorm");
    if (type == LayerType::LayerNormalization) return QStringLiteral("LayerNorm");
    return QString::fromLatin1(layer_type_name(type));
}

LayerPalette::LayerPalette(QWidget* parent) : QWidget(parent) {
    // Rows of three: one row of six was squeezed (and its captions cut) in a panel narrow enough
    // to leave the charts room on a 1280-pixel screen. The normalisation layers get a third row.
    auto* row = new QGridLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    auto* label = new QLabel(tr("Add layer:"), this);
    row->addWidget(label, 0, 0);
    int index = 0;
    const LayerType types[] = {LayerType::Dense,
                               LayerType::Conv2D,
                               LayerType::MaxPool2D,
                               LayerType::Flatten,
                               LayerType::Dropout,
                               LayerType::Activation,
                               LayerType::BatchNormalization,
                               LayerType::LayerNormalization};
    for (LayerType type : types) {
        auto* button = new QToolButton(this);
        // Named after the full type ("add_BatchNormalization") for tests and shortcuts.
        button->setObjectName(QStringLiteral("add_") + QString::fromLatin1(layer_type_name(type)));
        button->setText(QStringLiteral("+ ") + layer_type_caption(type));
        button->setToolTip(layer_type_description(type) + tr(" Added after the selected layer."));
        button->setToolButtonStyle(Qt::ToolButtonTextOnly);
        connect(button, &QToolButton::clicked, this, [this, type] { emit add_requested(type); });
        button->setSizePolicy(QSizePolicy::Minimum, QSizePolicy::Fixed); // never below its text
        row->addWidget(button, index / 3, 1 + index % 3);
        ++index;
    }
    row->setColumnStretch(4, 1);
}

} // namespace mantissa::ui
