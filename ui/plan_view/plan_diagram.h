// PlanDiagram: the plan as a vertical flow of layer boxes coloured by output dtype, with a
// marker wherever a cast is inserted between them and a note on layers whose weights are cast.
#pragma once

#include <QRectF>
#include <QWidget>
#include <utility>
#include <vector>

#include "ui/plan_view/plan_digest.h"

namespace mantissa::ui {

class PlanDiagram final : public QWidget {
    Q_OBJECT

public:
    explicit PlanDiagram(QWidget* parent = nullptr);

    void set_digest(const PlanDigest& digest);
    void clear();
    int cast_markers() const; // activation casts drawn between boxes
    // The colour a compute dtype is drawn in (also the Plan view's legend).
    static QColor dtype_colour(DType dtype, const QPalette& palette);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool event(QEvent* event) override; // a tooltip per box and cast marker

private:
    int box_height() const;
    int marker_height() const;

    std::vector<std::pair<QRectF, QString>> m_tips; // filled while painting
    bool m_valid = false;
    PlanDigest m_digest;
};

} // namespace mantissa::ui
