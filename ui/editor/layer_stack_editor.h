// LayerStackEditor: builds the layer stack: add from a palette (Dense, Conv2D, MaxPool2D,
// Flatten, Dropout, Activation, BatchNormalization, LayerNormalization), remove, reorder (drag and
// keyboard), edit each layer's fields and dtype; a live column shows output shape and parameter
// count; errors appear at the layer. Every edit can be undone and redone (Ctrl+Z / Ctrl+Shift+Z,
// or the Undo / Redo buttons).
#pragma once

#include <QPair>
#include <QString>
#include <QVector>
#include <QWidget>

#include "core/nn/layer_spec.h"
#include "core/optim/loss_scale.h"

class QHBoxLayout;
class QLabel;
class QListWidget;
class QPushButton;
class QTableWidget;
class QUndoStack;

namespace mantissa::ui {

class LayerPalette;

// Where a layer dragged from row `from` lands (the index move_row takes) when dropped on row
// `hovered` (-1: the empty space below the rows), on its lower half when `below`; -1 when the
// drop leaves the stack as it is. A pure function, so the decision is tested without a drag.
int drag_destination(int from, int hovered, bool below, int rows);

class LayerStackEditor final : public QWidget {
    Q_OBJECT

public:
    explicit LayerStackEditor(QWidget* parent = nullptr);

    // A new model (a file, a lesson): the undo history starts again and the table scrolls home.
    void set_model(const ModelSpec& model);
    ModelSpec model() const;
    // The global policy and loss scaling decide per-layer policies and the lint messages.
    void set_context(const QString& global_policy, const LossScaleConfig& loss_scale);
    // Empty when the stack is valid; else why not ("dense_1: ... add a Flatten layer"), for the
    // Train button's tooltip.
    QString validation_error() const;
    QUndoStack* undo_stack() const { return m_undo; }
    // Bytes of memory the weights may take before the stack is called too large to train
    // (default: this machine's physical memory; 0: no limit).
    void set_memory_limit(qint64 bytes);
    // The width at which the table shows every column but the (last, wide) settings editors.
    int columns_width() const;
    // What the settings column needs beyond columns_width() to show its editors whole.
    int settings_column_width() const { return m_settings_width; }

signals:
    void model_changed();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void add_layer(LayerType type);
    void remove_selected();
    void move_selected(int delta);
    void move_row(int from, int to);
    void rebuild_table(int select_row);
    void set_dtype(int row, const QString& dtype);
    // Re-runs Model::analyze and lint and fills the computed columns; `notify` emits model_changed.
    void refresh_analysis(bool notify = true);
    int selected_row() const;
    void update_buttons();
    // Records the edit that turned `before` into m_spec; consecutive edits of one field of the
    // layer at `merge_row` (>= 0) undo as one.
    void record(const ModelSpec& before, const QString& text, int merge_row = -1);
    void restore(const ModelSpec& spec); // for undo / redo
    // The row of Remove, Move up, Move down, Undo and Redo with their words where they fit, as
    // icons (their tooltips say what each does) where the editor is narrower (the Lessons panel
    // open on a 1366-px screen squeezed them until "Move down" was cut).
    void fit_button_row();

    ModelSpec m_spec;
    QString m_global_policy = QStringLiteral("float32");
    LossScaleConfig m_loss_scale;
    QString m_error;
    QUndoStack* m_undo = nullptr;
    qint64 m_memory_limit = 0;
    int m_settings_width = 0; // the widest settings editor's, as rebuild_table() sized its column

    LayerPalette* m_palette = nullptr;
    QTableWidget* m_table = nullptr;
    QPushButton* m_remove = nullptr;
    QPushButton* m_up = nullptr;
    QPushButton* m_down = nullptr;
    QHBoxLayout* m_button_row = nullptr;
    QVector<QPair<QPushButton*, QString>> m_row_buttons; // each with its word
    QLabel* m_message = nullptr;
    QLabel* m_totals = nullptr;
    QListWidget* m_lint = nullptr;
};

} // namespace mantissa::ui
