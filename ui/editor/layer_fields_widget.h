// LayerFieldsWidget: the inline editor in the stack table's Settings column: the fields that
// matter for one layer type (units, filters/kernel/stride/padding, pool, rate, momentum, epsilon,
// activation).
#pragma once

#include <QWidget>

#include "core/nn/layer_spec.h"

namespace mantissa::ui {

class LayerFieldsWidget final : public QWidget {
    Q_OBJECT

public:
    explicit LayerFieldsWidget(const LayerSpec& spec, QWidget* parent = nullptr);

    const LayerSpec& spec() const { return m_spec; }

signals:
    // The edited layer; emitted on every field edit.
    void spec_changed(const mantissa::LayerSpec& spec);

private:
    void add_activation_combo();
    void add_spin(const QString& name, const QString& label, const QString& tip, int min, int max,
                  std::int64_t value, std::int64_t* field, std::int64_t* field2 = nullptr);
    // A (height, width) pair: one spin box when square, two ("name" and "name_w") when not.
    void add_size(const QString& name, const QString& label, const QString& tip, int min, int max,
                  std::int64_t (&height_width)[2]);
    // The normalisation layers' epsilon; `what` starts the tooltip (what it is added to).
    void add_epsilon(const QString& what);

    LayerSpec m_spec;
};

} // namespace mantissa::ui
