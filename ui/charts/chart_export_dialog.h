// ChartExportDialog: File > Export Chart: which chart, at what size, then a PNG or SVG file name.
// The export itself is chart_export.h; this only asks.
#pragma once

#include <QDialog>

class QComboBox;
class QSpinBox;

namespace mantissa::ui {

class ChartsPanel;

class ChartExportDialog final : public QDialog {
    Q_OBJECT

public:
    explicit ChartExportDialog(ChartsPanel* charts, QWidget* parent = nullptr);

    QString chart_name() const; // "loss", "accuracy", "step_time", "loss_scale", "memory"
    QSize image_size() const;
    // The file name the save dialog proposes: the chart's name in the folder the app's dialogs
    // last used (Documents at first), never the working directory.
    QString suggested_file() const;
    // Asks for a file name and writes the chart; returns an error message or empty (also when
    // the user cancelled the file dialog).
    QString export_to_chosen_file();

private:
    ChartsPanel* m_charts = nullptr;
    QComboBox* m_chart = nullptr;
    QSpinBox* m_width = nullptr;
    QSpinBox* m_height = nullptr;
};

} // namespace mantissa::ui
