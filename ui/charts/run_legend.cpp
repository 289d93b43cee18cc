// RunLegend: rich text rebuilt only when the runs, their names or colours change, so a live
// redraw every 40 ms costs a string comparison.
#include "ui/charts/run_legend.h"

#include <QTextDocument>
#include <cmath>

#include "ui/runs/run_record.h"

namespace mantissa::ui {

RunLegend::RunLegend(QWidget* parent) : QLabel(parent) {
    setObjectName(QStringLiteral("runLegend"));
    setTextFormat(Qt::RichText);
    // One line that never widens or heightens the window (a wrapped label's height-for-width
    // pushed a 1366x768 window to 781 px); runs sharing an experiment name it once, up front,
    // so five runs fit on a projector's line.
    setWordWrap(false);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    setContentsMargins(6, 0, 6, 0);
    setMargin(0);
    m_base_point_size = font().pointSize();
    hide();
}

void RunLegend::show_runs(const QVector<const RunRecord*>& runs) {
    // The experiment part of "mlp-small · float32" when every run shares it: said once.
    const QString separator = QStringLiteral(" · ");
    QString shared = runs.isEmpty() ? QString() : runs.front()->name.section(separator, 0, 0);
    for (const RunRecord* run : runs)
        if (!run->name.contains(separator) || run->name.section(separator, 0, 0) != shared)
            shared.clear();
    // Else the policy part when every run shares it (a lesson's runs named by what they vary,
    // "float32 statistics, Adam · mixed_float16"): said once too.
    QString shared_tail =
        runs.size() < 2 || !shared.isEmpty() ? QString() : runs.front()->name.section(separator, 1);
    for (const RunRecord* run : runs)
        if (!run->name.contains(separator) || run->name.section(separator, 1) != shared_tail)
            shared_tail.clear();
    QStringList entries, html;
    if (!shared.isEmpty()) html.append(shared.toHtmlEscaped() + QStringLiteral(":"));
    if (!shared_tail.isEmpty()) html.append(shared_tail.toHtmlEscaped() + QStringLiteral(":"));
    for (const RunRecord* run : runs) {
        entries.append(run_label(*run));
        // The name without what repeats: the shared experiment, or a policy the experiment's
        // own name already says ("float16 (pure) · float16" is "float16 (pure)").
        QString name = run->name;
        const QString head = name.section(separator, 0, 0), tail = name.section(separator, 1);
        if (!shared.isEmpty())
            name = tail;
        else if (!shared_tail.isEmpty() || (name.contains(separator) && head.contains(tail)))
            name = head;
        const QString shown = QStringLiteral("#%1 %2").arg(run->id).arg(name);
        // A swatch of the run's colour (a filled box: line-drawing glyphs are missing from
        // some fonts), then its number and name in the text colour.
        html.append(QStringLiteral("<span style=\"background-color:%1\">&nbsp;&nbsp;&nbsp;&nbsp;"
                                   "</span>&nbsp;%2")
                        .arg(run->color.name(), shown.toHtmlEscaped().replace(' ', "&nbsp;")));
    }
    const QString text = html.join(QStringLiteral(" &nbsp;&nbsp; "));
    setToolTip(entries.join(QLatin1Char('\n')));
    if (entries != m_entries || text != this->text()) {
        m_entries = entries;
        setText(text);
        fit_font();
    }
    setVisible(!entries.isEmpty());
}

void RunLegend::set_font_scale(double scale) {
    m_font_scale = scale;
    fit_font();
}

int RunLegend::text_width() const {
    QTextDocument doc;
    doc.setDefaultFont(font());
    doc.setDocumentMargin(0);
    doc.setHtml(text());
    return static_cast<int>(std::ceil(doc.idealWidth()));
}

void RunLegend::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    fit_font();
}

void RunLegend::fit_font() {
    if (m_base_point_size <= 0) return;
    // Steps of 5% from the set size: the first that fits, or the smallest (the tooltip then
    // still lists every run).
    for (double shrink = 1.0; shrink >= 0.699; shrink -= 0.05) {
        QFont f = font();
        f.setPointSizeF(m_base_point_size * m_font_scale * shrink);
        if (f != font()) setFont(f);
        if (contentsRect().width() <= 0 || fits()) return;
    }
}

} // namespace mantissa::ui
