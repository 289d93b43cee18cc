// ChartExportDialog: a chart picker and a size (1200×800 by default: sharp on slides and in
// papers), then a save dialog whose filter picks PNG or SVG.
#include "ui/charts/chart_export_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QPushButton>
#include <QSpinBox>

#include "ui/charts/chart_export.h"
#include "ui/charts/charts_panel.h"
#include "ui/window/dialog_folder.h"

namespace mantissa::ui {

ChartExportDialog::ChartExportDialog(ChartsPanel* charts, QWidget* parent)
    : QDialog(parent), m_charts(charts) {
    setWindowTitle(tr("Export chart"));
    m_chart = new QComboBox;
    m_chart->addItem(tr("Loss"), QStringLiteral("loss"));
    m_chart->addItem(tr("Accuracy"), QStringLiteral("accuracy"));
    m_chart->addItem(tr("Step time"), QStringLiteral("step_time"));
    m_chart->addItem(tr("Loss scale"), QStringLiteral("loss_scale"));
    m_chart->addItem(tr("Device memory"), QStringLiteral("memory"));
    m_width = new QSpinBox;
    m_width->setRange(16, 16384);
    m_width->setValue(1200);
    m_width->setSuffix(tr(" px"));
    m_height = new QSpinBox;
    m_height->setRange(16, 16384);
    m_height->setValue(800);
    m_height->setSuffix(tr(" px"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Export…"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* form = new QFormLayout(this);
    form->addRow(tr("Chart:"), m_chart);
    form->addRow(tr("Width:"), m_width);
    form->addRow(tr("Height:"), m_height);
    form->addRow(buttons);
}

QString ChartExportDialog::chart_name() const {
    return m_chart->currentData().toString();
}

QSize ChartExportDialog::image_size() const {
    return {m_width->value(), m_height->value()};
}

QString ChartExportDialog::suggested_file() const {
    return dialog_path(chart_name() + QStringLiteral(".png"));
}

QString ChartExportDialog::export_to_chosen_file() {
    const QString png = tr("PNG image (*.png)");
    const QString svg = tr("SVG vector image (*.svg)");
    QString filter = png;
    QString path =
        QFileDialog::getSaveFileName(parentWidget(), tr("Export chart"), suggested_file(),
                                     png + QStringLiteral(";;") + svg, &filter);
    if (path.isEmpty()) return {};
    remember_dialog_folder(path);
    const QString suffix = filter == svg ? QStringLiteral(".svg") : QStringLiteral(".png");
    if (!path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive) &&
        !path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive))
        path += suffix;
    m_charts->redraw(); // the newest steps, not the last 40 ms tick's
    return export_chart(m_charts->qchart(chart_name()), image_size(), path, m_chart->currentText());
}

} // namespace mantissa::ui
