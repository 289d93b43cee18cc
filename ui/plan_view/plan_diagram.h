// PlanDiagram: the plan as a vertical flow of layer boxes coloured by output dtype, with a
// marker wherever a cast is inserted between them and a note on layers whose weights are cast.
#pragma once

#include <QFont>
#include <QRectF>
#include <QWidget>
#include <utility>
#include <vector>

#include "ui/plan_view/plan_digest.h"

namespace mantissa::ui {

// One piece of text in the diagram and the rectangle it is given: the painter draws exactly these,
// and tests check that each text fits its rectangle (nothing elided, nothing overlapping).
struct PlanLabel {
    enum class Kind { Title, Dtype, Subtitle, Shape, WeightsTag, Cast };
    Kind kind = Kind::Title;
    QString text;
    QFont font;
    QRectF rect;
    Qt::Alignment align = Qt::AlignLeft | Qt::AlignVCenter;
    DType dtype = DType::Float32; // the box's dtype (its colour)
};

class PlanDiagram final : public QWidget {
    Q_OBJECT

public:
    explicit PlanDiagram(QWidget* parent = nullptr);

    void set_digest(const PlanDigest& digest);
    void clear();
    int cast_markers() const; // activation casts drawn between boxes
    // The colour a compute dtype is drawn in (also the Plan view's legend).
    static QColor dtype_colour(DType dtype, const QPalette& palette);

    // Every label at the widget's current width (or at `width`).
    std::vector<PlanLabel> labels() const { return labels(width()); }
    std::vector<PlanLabel> labels(int width) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool event(QEvent* event) override; // a tooltip per box and cast marker

private:
    int box_height() const;
    int marker_height() const;
    int needed_width() const; // the narrowest width at which every label fits
    QFont title_font() const;
    QFont small_font() const;

    std::vector<std::pair<QRectF, QString>> m_tips; // filled while painting
    bool m_valid = false;
    PlanDigest m_digest;
};

} // namespace mantissa::ui
