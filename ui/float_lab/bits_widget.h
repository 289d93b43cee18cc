// BitsWidget: one bit pattern drawn as cells, sign | exponent | mantissa colour-coded; clicking a
// cell asks for that bit to be flipped, so a class can see what each bit is worth.
#pragma once

#include <QWidget>
#include <cstdint>

#include "core/numeric/dtype.h"

namespace mantissa::ui {

class BitsWidget final : public QWidget {
    Q_OBJECT

public:
    explicit BitsWidget(DType dtype, QWidget* parent = nullptr);

    DType dtype() const { return m_dtype; }
    void set_bits(std::uint64_t bits);
    std::uint64_t bits() const { return m_bits; }
    // Where bit `index` is drawn (0 = least significant mantissa bit), for clicks and tests.
    QRect bit_rect(int index) const;
    int bit_at(const QPoint& point) const; // -1 between cells

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }

signals:
    void bit_clicked(int index);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override; // per-bit tooltips
    void changeEvent(QEvent* event) override;

private:
    int cell_width() const;
    int cell_height() const;
    int gap() const { return 6; } // between the fields
    QString bit_description(int index) const;

    DType m_dtype;
    std::uint64_t m_bits = 0;
    int m_width = 0;         // bits in the format
    int m_exponent_bits = 0; // field sizes, from FloatFormat
    int m_mantissa_bits = 0;
    int m_hover = -1;
};

} // namespace mantissa::ui
