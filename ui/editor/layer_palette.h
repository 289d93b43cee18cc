// LayerPalette: one button per layer type (Dense, Conv2D, MaxPool2D, Flatten, Dropout, Activation,
// BatchNormalization, LayerNormalization) with a short tooltip; clicking asks the stack editor to
// add that layer.
#pragma once

#include <QString>
#include <QWidget>

#include "core/nn/layer_spec.h"

namespace mantissa::ui {

// A sentence about what a layer type does, for tooltips.
QString layer_type_description(LayerType type);
// The short name the palette's buttons and the stack's type column show: the type's own name,
// "BatchNorm" and "LayerNorm" for the normalization layers (their full names would widen both
// past a projector's width; the tooltips spell them out).
QString layer_type_caption(LayerType type);
// The layer a palette click adds: sensible defaults (Dense 128 relu, Conv2D 32 3x3 relu, ...;
// the normalisation layers keep LayerSpec's Keras defaults, momentum 0.99 and epsilon 1e-3).
LayerSpec default_layer(LayerType type);

class LayerPalette final : public QWidget {
    Q_OBJECT

public:
    explicit LayerPalette(QWidget* parent = nullptr);

signals:
    void add_requested(mantissa::LayerType type);
};

} // namespace mantissa::ui
