// RunLegend: which colour is which run on the live charts (issue 28: the charts drew no legend,
// and Presentation mode hides the Runs list, so on a projector nothing said which curve was
// which). One line of "■ #id name" entries, each swatch in its run's colour, above the charts
// (an experiment name all runs share said once, up front); the run id tells apart runs of the
// same name; the tooltip lists every run in full. Where the line is longer than the legend is
// wide (six runs on a projector), the text shrinks to fit, down to 70% of its size.
#pragma once

#include <QLabel>
#include <QStringList>
#include <QVector>

namespace mantissa::ui {

struct RunRecord;

class RunLegend final : public QLabel {
    Q_OBJECT

public:
    explicit RunLegend(QWidget* parent = nullptr);
    // The visible runs, in the charts' order; hidden when there are none.
    void show_runs(const QVector<const RunRecord*>& runs);
    // Presentation mode: the text `scale` times its normal size.
    void set_font_scale(double scale);
    // The entries as plain text ("#3 mixed_float16"), in order: what the legend says.
    QStringList entries() const { return m_entries; }
    // The text's width at its current font, and whether it fits the legend's width.
    int text_width() const;
    bool fits() const { return text_width() <= contentsRect().width(); }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    // The largest font, from the set scale down to 70% of it, at which the line fits.
    void fit_font();

    QStringList m_entries;
    double m_font_scale = 1.0;
    int m_base_point_size = 0;
};

} // namespace mantissa::ui
