// LayerStackEditor: palette, table with inline field/dtype editors, remove/reorder, and the live
// analysis (shape, params, error at the layer) plus lint after every change.
#include "ui/editor/layer_stack_editor.h"

#include <QAbstractItemView>
#include <QAction>
#include <QComboBox>
#include <QDropEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollBar>
#include <QStyle>
#include <QTableWidget>
#include <QTimer>
#include <QUndoCommand>
#include <QUndoStack>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>
#include <tuple>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "core/error.h"
#include "core/nn/model.h"
#include "core/numeric/policy.h"
#include "core/plan/lint.h"
#include "ui/editor/layer_fields_widget.h"
#include "ui/editor/layer_palette.h"
#include "ui/window/theme.h"

namespace mantissa::ui {

namespace {

enum Column { ColIndex, ColType, ColSettings, ColDtype, ColShape, ColParams, ColCount };

// A table whose rows move by drag and drop: the drop is reported, the editor moves the layer
// and rebuilds, so the spec stays the single source of truth.
class StackTable final : public QTableWidget {
public:
    using QTableWidget::QTableWidget;
    std::function<void(int, int)> on_row_dropped;

protected:
    void dropEvent(QDropEvent* event) override {
        // Only a drag that started here is a reorder (source() is set only during a real QDrag).
        if (event->source() != this) return QTableWidget::dropEvent(event);
        const QModelIndex index = indexAt(event->position().toPoint());
        const bool below = dropIndicatorPosition() == QAbstractItemView::BelowItem;
        const int to =
            drag_destination(currentRow(), index.isValid() ? index.row() : -1, below, rowCount());
        // Qt must not remove the dragged row itself: the editor moves the layer and rebuilds.
        event->setDropAction(Qt::IgnoreAction);
        event->accept();
        if (to < 0 || !on_row_dropped) return;
        const int from = currentRow();
        // Rebuild after the drag finishes (the view is still inside QDrag::exec).
        QTimer::singleShot(0, this, [this, from, to] { on_row_dropped(from, to); });
    }
};

QString dtype_tooltip(const QString& name, const QString& global) {
    try {
        if (name == QLatin1String("global"))
            return QObject::tr("Use the global policy (%1): %2")
                .arg(global, QString::fromStdString(
                                 policy_description(policy_from_name(global.toStdString()))));
        return QString::fromStdString(policy_description(policy_from_name(name.toStdString())));
    } catch (const Error&) {
        return {};
    }
}

QString format_params(std::int64_t n) {
    return QLocale(QLocale::English, QLocale::UnitedStates).toString(static_cast<qlonglong>(n));
}

// This machine's physical memory in bytes; 0 when unknown (then no limit applies).
qint64 physical_memory() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) return static_cast<qint64>(pages) * page;
#endif
    return 0;
}

QString gib(double bytes) {
    return QString::number(bytes / (1024.0 * 1024.0 * 1024.0), 'f', 1) + QStringLiteral(" GiB");
}

// One edit of the stack: the spec before and after. The edit is already applied when it is
// pushed, so the first redo() does nothing.
class StackEdit final : public QUndoCommand {
public:
    StackEdit(ModelSpec before, ModelSpec after, const QString& text, int merge_row,
              std::function<void(const ModelSpec&)> restore)
        : QUndoCommand(text), m_before(std::move(before)), m_after(std::move(after)),
          m_merge_row(merge_row), m_restore(std::move(restore)) {}
    int id() const override { return m_merge_row >= 0 ? 1 : -1; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* next = static_cast<const StackEdit*>(other);
        if (next->m_merge_row != m_merge_row || next->text() != text()) return false;
        m_after = next->m_after;
        return true;
    }
    void undo() override { m_restore(m_before); }
    void redo() override {
        if (m_applied) m_restore(m_after);
        m_applied = true;
    }

private:
    ModelSpec m_before, m_after;
    int m_merge_row;
    std::function<void(const ModelSpec&)> m_restore;
    bool m_applied = false;
};

} // namespace

int drag_destination(int from, int hovered, bool below, int rows) {
    if (from < 0 || from >= rows) return -1;
    // The gap between rows the layer is dropped into: 0 is above the first, `rows` below the last.
    const int gap = hovered < 0 || hovered >= rows ? rows : hovered + (below ? 1 : 0);
    // Taking the layer out first shifts every gap below it up by one.
    const int to = gap > from ? gap - 1 : gap;
    return to == from ? -1 : to;
}

LayerStackEditor::LayerStackEditor(QWidget* parent) : QWidget(parent) {
    m_memory_limit = physical_memory();
    m_undo = new QUndoStack(this);
    auto* outer = new QVBoxLayout(this);

    m_palette = new LayerPalette(this);
    m_palette->setObjectName("palette");
    connect(m_palette, &LayerPalette::add_requested, this, &LayerStackEditor::add_layer);
    outer->addWidget(m_palette);

    auto* middle = new QHBoxLayout;
    auto* table = new StackTable(0, ColCount, this);
    m_table = table;
    m_table->setObjectName("layer_table");
    m_table->setHorizontalHeaderLabels(
        {tr("#"), tr("Type"), tr("Settings"), tr("dtype"), tr("Output shape"), tr("Params")});
    m_table->horizontalHeaderItem(ColIndex)->setToolTip(tr("Position in the stack; a red mark "
                                                           "means the layer does not fit."));
    m_table->horizontalHeaderItem(ColType)->setToolTip(tr("Layer type and its name."));
    m_table->horizontalHeaderItem(ColSettings)
        ->setToolTip(tr("The layer's settings; edit them "
                        "in place."));
    m_table->horizontalHeaderItem(ColDtype)->setToolTip(
        tr("The layer's dtype policy; \"global\" follows the experiment's policy."));
    m_table->horizontalHeaderItem(ColShape)->setToolTip(
        tr("Output shape per example (without the batch dimension)."));
    m_table->horizontalHeaderItem(ColParams)->setToolTip(tr("Trainable parameters (weights and "
                                                            "biases) of the layer."));
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 18);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setDragEnabled(true);
    m_table->setAcceptDrops(true);
    m_table->viewport()->setAcceptDrops(true);
    m_table->setDragDropMode(QAbstractItemView::InternalMove);
    m_table->setDragDropOverwriteMode(false);
    m_table->setDropIndicatorShown(true);
    m_table->setAlternatingRowColors(true);
    m_table->setTextElideMode(Qt::ElideMiddle); // a long layer name keeps its number visible
    QHeaderView* header = m_table->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setSectionResizeMode(ColSettings, QHeaderView::Interactive);
    // Sized by rebuild_table(), which caps it (a long layer name is elided, not widening it).
    header->setSectionResizeMode(ColType, QHeaderView::Interactive);
    // Settings last on screen: a convolution's editors are wide, and placed in the middle they
    // pushed dtype, shape and params out of a 1280-pixel window. Logical columns stay the same.
    header->moveSection(header->visualIndex(ColSettings), ColCount - 1);
    header->setStretchLastSection(true);
    m_table->installEventFilter(this);
    table->on_row_dropped = [this](int from, int to) { move_row(from, to); };
    connect(m_table, &QTableWidget::itemSelectionChanged, this, &LayerStackEditor::update_buttons);
    middle->addWidget(m_table, 1);

    auto* buttons = new QHBoxLayout;
    m_button_row = buttons;
    m_remove = new QPushButton(style()->standardIcon(QStyle::SP_TrashIcon), tr("Remove"), this);
    m_remove->setObjectName("remove_layer");
    m_remove->setToolTip(tr("Remove the selected layer (Delete)."));
    m_up = new QPushButton(style()->standardIcon(QStyle::SP_ArrowUp), tr("Move up"), this);
    m_up->setObjectName("move_up");
    m_up->setToolTip(tr("Move the selected layer one place up (Ctrl+Up); rows can also be "
                        "dragged."));
    m_down = new QPushButton(style()->standardIcon(QStyle::SP_ArrowDown), tr("Move down"), this);
    m_down->setObjectName("move_down");
    m_down->setToolTip(tr("Move the selected layer one place down (Ctrl+Down)."));
    connect(m_remove, &QPushButton::clicked, this, &LayerStackEditor::remove_selected);
    connect(m_up, &QPushButton::clicked, this, [this] { move_selected(-1); });
    connect(m_down, &QPushButton::clicked, this, [this] { move_selected(+1); });
    for (QPushButton* button : {m_remove, m_up, m_down}) {
        buttons->addWidget(button);
        m_row_buttons.append({button, button->text()}); // fit_button_row's words
    }
    buttons->addStretch(1);
    // Undo / redo of stack edits; the shortcuts work while the focus is in the Model tab.
    QAction* undo = m_undo->createUndoAction(this, tr("Undo"));
    undo->setShortcut(QKeySequence::Undo);
    undo->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    QAction* redo = m_undo->createRedoAction(this, tr("Redo"));
    redo->setShortcuts({QKeySequence(QStringLiteral("Ctrl+Shift+Z")), QKeySequence::Redo});
    redo->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(undo);
    addAction(redo);
    for (auto [action, name, icon, tip] :
         {std::tuple{undo, "undo", QStyle::SP_ArrowBack, tr("Undo the last stack edit (Ctrl+Z).")},
          std::tuple{redo, "redo", QStyle::SP_ArrowForward,
                     tr("Redo the edit just undone (Ctrl+Shift+Z).")}}) {
        auto* button = new QPushButton(style()->standardIcon(icon),
                                       action == undo ? tr("Undo") : tr("Redo"), this);
        button->setObjectName(QString::fromLatin1(name));
        button->setToolTip(tip);
        button->setEnabled(false);
        connect(button, &QPushButton::clicked, action, &QAction::trigger);
        // A copy, not the structured binding: clang before 16 cannot capture a binding.
        QAction* const source = action;
        connect(source, &QAction::changed, button,
                [button, source] { button->setEnabled(source->isEnabled()); });
        buttons->addWidget(button);
        m_row_buttons.append({button, button->text()});
    }
    outer->addLayout(middle, 3);
    outer->addLayout(buttons);

    m_message = new QLabel(this);
    m_message->setObjectName("stack_message");
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(m_message);

    m_totals = new QLabel(this);
    m_totals->setObjectName("stack_totals");
    outer->addWidget(m_totals);

    auto* lint_title = new QLabel(tr("<b>Mixed-precision hints</b>"), this);
    lint_title->setToolTip(tr("Checks from the Keras mixed-precision guide; nothing is changed "
                              "for you."));
    outer->addWidget(lint_title);
    m_lint = new QListWidget(this);
    m_lint->setObjectName("lint");
    m_lint->setWordWrap(true);
    m_lint->setToolTip(lint_title->toolTip());
    outer->addWidget(m_lint, 1);

    rebuild_table(-1);
}

int LayerStackEditor::columns_width() const {
    const QHeaderView* header = m_table->horizontalHeader();
    int width = 0;
    for (int c = 0; c < ColCount; ++c)
        if (c != ColSettings) width += header->sectionSize(c);
    // The frame, a vertical scroll bar and the layout's margins; not the settings column, which
    // the table scrolls to where the editor is narrow (a 1366-px screen with the Lessons panel
    // open: a minimum that counted it made the editor wider than its pane, which clipped it).
    width += 2 * m_table->frameWidth() + style()->pixelMetric(QStyle::PM_ScrollBarExtent) +
             2 * layout()->contentsMargins().left();
    return width;
}

void LayerStackEditor::set_model(const ModelSpec& model) {
    m_spec = model;
    m_undo->clear();
    rebuild_table(-1);
    // The previous model's scroll position would hide this one's first columns.
    m_table->horizontalScrollBar()->setValue(0);
    m_table->scrollToTop();
}

void LayerStackEditor::set_memory_limit(qint64 bytes) {
    m_memory_limit = bytes;
    refresh_analysis(false);
}

void LayerStackEditor::record(const ModelSpec& before, const QString& text, int merge_row) {
    m_undo->push(new StackEdit(before, m_spec, text, merge_row,
                               [this](const ModelSpec& spec) { restore(spec); }));
}

void LayerStackEditor::restore(const ModelSpec& spec) {
    const int row = selected_row();
    m_spec = spec;
    const int count = static_cast<int>(m_spec.layers.size());
    rebuild_table(count == 0 ? -1 : std::clamp(row, 0, count - 1));
}

ModelSpec LayerStackEditor::model() const {
    return m_spec;
}

void LayerStackEditor::set_context(const QString& global_policy,
                                   const LossScaleConfig& loss_scale) {
    m_global_policy = global_policy;
    m_loss_scale = loss_scale;
    for (int row = 0; row < m_table->rowCount(); ++row) {
        if (auto* combo = qobject_cast<QComboBox*>(m_table->cellWidget(row, ColDtype))) {
            combo->setItemText(0, tr("global"));
            combo->setItemData(0, dtype_tooltip("global", m_global_policy), Qt::ToolTipRole);
        }
    }
    refresh_analysis(false);
}

QString LayerStackEditor::validation_error() const {
    return m_error;
}

int LayerStackEditor::selected_row() const {
    const QList<QTableWidgetSelectionRange> ranges = m_table->selectedRanges();
    if (!ranges.isEmpty()) return ranges.first().topRow();
    return -1;
}

void LayerStackEditor::add_layer(LayerType type) {
    const int selected = selected_row();
    const int at = selected >= 0 ? selected + 1 : static_cast<int>(m_spec.layers.size());
    const ModelSpec before = m_spec;
    m_spec.layers.insert(m_spec.layers.begin() + at, default_layer(type));
    rebuild_table(at);
    record(before, tr("add %1").arg(QString::fromLatin1(layer_type_name(type))));
}

void LayerStackEditor::remove_selected() {
    const int row = selected_row();
    if (row < 0 || row >= static_cast<int>(m_spec.layers.size())) return;
    const ModelSpec before = m_spec;
    m_spec.layers.erase(m_spec.layers.begin() + row);
    const int count = static_cast<int>(m_spec.layers.size());
    rebuild_table(count == 0 ? -1 : std::min(row, count - 1));
    record(before, tr("remove a layer"));
}

void LayerStackEditor::move_selected(int delta) {
    const int row = selected_row();
    if (row < 0) return;
    move_row(row, row + delta);
}

void LayerStackEditor::move_row(int from, int to) {
    const int count = static_cast<int>(m_spec.layers.size());
    if (from < 0 || from >= count || to < 0 || to >= count || from == to) return;
    const ModelSpec before = m_spec;
    LayerSpec layer = m_spec.layers[from];
    m_spec.layers.erase(m_spec.layers.begin() + from);
    m_spec.layers.insert(m_spec.layers.begin() + to, layer);
    rebuild_table(to);
    record(before, tr("move a layer"));
}

void LayerStackEditor::set_dtype(int row, const QString& dtype) {
    if (row < 0 || row >= static_cast<int>(m_spec.layers.size())) return;
    const ModelSpec before = m_spec;
    if (dtype.isEmpty() || dtype == QLatin1String("global"))
        m_spec.layers[row].dtype.reset();
    else
        m_spec.layers[row].dtype = dtype.toStdString();
    refresh_analysis();
    record(before, tr("change a dtype"));
}

void LayerStackEditor::rebuild_table(int select_row) {
    const QSignalBlocker blocker(m_table);
    m_table->clearContents();
    m_table->setRowCount(static_cast<int>(m_spec.layers.size()));
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const LayerSpec& layer = m_spec.layers[row];
        for (int col : {ColIndex, ColType, ColShape, ColParams}) {
            auto* item = new QTableWidgetItem;
            item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsDragEnabled);
            if (col == ColIndex || col == ColParams)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, col, item);
        }
        m_table->item(row, ColType)->setData(Qt::UserRole, layer_type_description(layer.type));

        auto* fields = new LayerFieldsWidget(layer);
        connect(fields, &LayerFieldsWidget::spec_changed, this,
                [this, fields](const LayerSpec& spec) {
                    for (int r = 0; r < m_table->rowCount(); ++r)
                        if (m_table->cellWidget(r, ColSettings) == fields) {
                            const ModelSpec before = m_spec;
                            m_spec.layers[r] = spec;
                            // The dtype lives in its own combo; keep it.
                            refresh_analysis();
                            // A spin box's steps (units 128, 129, 130...) undo as one edit.
                            record(before, tr("edit a layer"), r);
                            return;
                        }
                });
        m_table->setCellWidget(row, ColSettings, fields);

        auto* dtype = new QComboBox;
        dtype->setObjectName("dtype");
        dtype->addItem(tr("global"), QStringLiteral("global"));
        dtype->setItemData(0, dtype_tooltip("global", m_global_policy), Qt::ToolTipRole);
        for (const Policy& policy : all_policies()) {
            const QString name = QString::fromStdString(policy.name);
            dtype->addItem(name, name);
            dtype->setItemData(dtype->count() - 1, dtype_tooltip(name, m_global_policy),
                               Qt::ToolTipRole);
        }
        const QString current =
            layer.dtype ? QString::fromStdString(*layer.dtype) : QStringLiteral("global");
        int index = dtype->findData(current);
        if (index < 0) { // an unknown name from a file: keep it visible so the error makes sense
            dtype->addItem(current, current);
            index = dtype->count() - 1;
        }
        dtype->setCurrentIndex(index);
        dtype->setToolTip(tr("This layer's dtype policy; \"global\" follows the experiment."));
        connect(dtype, &QComboBox::currentIndexChanged, this, [this, dtype](int i) {
            for (int r = 0; r < m_table->rowCount(); ++r)
                if (m_table->cellWidget(r, ColDtype) == dtype) {
                    set_dtype(r, dtype->itemData(i).toString());
                    return;
                }
        });
        m_table->setCellWidget(row, ColDtype, dtype);
    }
    // The settings column is as wide as the widest inline editor, so no combo is cut off.
    int settings_width = m_table->horizontalHeader()->sectionSizeHint(ColSettings);
    for (int row = 0; row < m_table->rowCount(); ++row)
        settings_width =
            std::max(settings_width, m_table->cellWidget(row, ColSettings)->sizeHint().width());
    m_settings_width = settings_width + 8;
    m_table->horizontalHeader()->resizeSection(ColSettings, m_settings_width);
    if (select_row >= 0 && select_row < m_table->rowCount()) {
        m_table->selectRow(select_row);
        m_table->setCurrentCell(select_row, ColType);
    }
    refresh_analysis();
    update_buttons();
}

void LayerStackEditor::refresh_analysis(bool notify) {
    Policy global;
    try {
        global = policy_from_name(m_global_policy.toStdString());
    } catch (const Error&) {
        global = policy_from_name("float32");
    }
    ModelAnalysis analysis;
    std::vector<LintMessage> lint;
    try {
        const Model model(m_spec, global);
        analysis = model.analyze();
        lint = lint_model(model, resolve_loss_scale(m_loss_scale, global));
    } catch (const Error& e) {
        analysis.error = e.what();
    }
    m_error = QString::fromStdString(analysis.error);
    // Shapes that fit are not enough to say "fits": float32 bytes per parameter is the least any
    // policy keeps (master weights or the weights themselves). Train stays enabled, so the run
    // itself reports the out-of-memory error with what to reduce.
    const double weight_bytes = 4.0 * static_cast<double>(analysis.total_params);
    const bool too_big = m_error.isEmpty() && m_memory_limit > 0 &&
                         weight_bytes > static_cast<double>(m_memory_limit);

    const QColor error_background(220, 40, 40, 70);
    const QIcon error_icon = style()->standardIcon(QStyle::SP_MessageBoxCritical);
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const LayerAnalysis* entry = row < static_cast<int>(analysis.layers.size())
                                         ? &analysis.layers[static_cast<std::size_t>(row)]
                                         : nullptr;
        const bool failed = entry && !entry->error.empty();
        const LayerType type = m_spec.layers[static_cast<std::size_t>(row)].type;
        QString type_text = layer_type_caption(type);
        if (entry && !entry->name.empty())
            // Two lines (type, then name): one line made the column wider than half the panel.
            type_text += QLatin1Char('\n') + QString::fromStdString(entry->name);

        QTableWidgetItem* index = m_table->item(row, ColIndex);
        index->setText(QString::number(row + 1));
        index->setIcon(failed ? error_icon : QIcon());
        index->setData(Qt::UserRole, failed); // the error marker, for tests and delegates
        m_table->item(row, ColType)->setText(type_text);
        // A layer that fits but leaves the wrong output (not 10 classes) still shows its shape.
        const bool has_shape = entry && !entry->output_shape.empty();
        m_table->item(row, ColShape)
            ->setText(has_shape ? QString::fromStdString(shape_str(entry->output_shape))
                      : failed  ? tr("does not fit")
                                : QStringLiteral("–"));
        m_table->item(row, ColParams)
            ->setText(has_shape ? format_params(entry->params) : QStringLiteral("–"));
        const QString tip = failed
                                ? QString::fromStdString(entry->error)
                                : type_text.section(QLatin1Char('\n'), -1) + QStringLiteral(": ") +
                                      m_table->item(row, ColType)->data(Qt::UserRole).toString();
        for (int col : {ColIndex, ColType, ColShape, ColParams}) {
            QTableWidgetItem* item = m_table->item(row, col);
            item->setToolTip(tip);
            item->setBackground(failed ? QBrush(error_background) : QBrush());
            item->setForeground(failed && col == ColShape ? QBrush(QColor(200, 0, 0)) : QBrush());
        }
    }

    if (too_big) {
        m_message->setStyleSheet(is_dark(palette())
                                     ? QStringLiteral("color: #ffcc80; font-weight: bold;")
                                     : QStringLiteral("color: #b35c00; font-weight: bold;"));
        m_message->setText(tr("⚠ The shapes line up, but %1 parameters need %2 for their "
                              "float32 weights alone, more than this machine's %3 of memory: "
                              "training will run out of memory. Use fewer units or filters.")
                               .arg(format_params(analysis.total_params), gib(weight_bytes),
                                    gib(static_cast<double>(m_memory_limit))));
    } else if (m_error.isEmpty()) {
        m_message->setStyleSheet(is_dark(palette()) ? QStringLiteral("color: #81c784;")
                                                    : QStringLiteral("color: #2e7d32;"));
        m_message->setText(tr("✔ The stack fits: 28×28×1 images in, 10 class scores out."));
    } else {
        m_message->setStyleSheet(is_dark(palette())
                                     ? QStringLiteral("color: #ef9a9a; font-weight: bold;")
                                     : QStringLiteral("color: #c62828; font-weight: bold;"));
        m_message->setText(QStringLiteral("✖ ") + m_error);
    }
    m_totals->setText(analysis.error.empty()
                          ? tr("Total parameters: %1").arg(format_params(analysis.total_params))
                          : tr("Total parameters: – (fix the stack first)"));

    m_lint->clear();
    for (const LintMessage& message : lint) {
        const bool warning = message.severity == LintSeverity::Warning;
        QString text = QString::fromStdString(message.text);
        if (!message.layer.empty()) text = QString::fromStdString(message.layer) + ": " + text;
        auto* item =
            new QListWidgetItem(style()->standardIcon(warning ? QStyle::SP_MessageBoxWarning
                                                              : QStyle::SP_MessageBoxInformation),
                                text, m_lint);
        item->setToolTip(text);
    }
    if (lint.empty()) {
        auto* item = new QListWidgetItem(tr("No hints for this stack and policy."), m_lint);
        item->setFlags(Qt::NoItemFlags);
    }
    // Never narrower than the computed columns need: a splitter or a small screen must not push
    // dtype, shape and params out of view (the settings editors may scroll).
    for (int c = 0; c < ColCount; ++c)
        if (c != ColSettings) m_table->resizeColumnToContents(c);
    // Keras's long default names ("batch_normalization_1") would widen the type column by half
    // and push the settings out of a 1366-pixel window: past the width of "max_pool2d_10" the
    // name is elided in the middle (its tooltip has it whole).
    const int type_cap =
        m_table->fontMetrics().horizontalAdvance(QStringLiteral("max_pool2d_10")) + 16;
    if (m_table->columnWidth(ColType) > type_cap) m_table->setColumnWidth(ColType, type_cap);
    setMinimumWidth(columns_width());
    if (notify) emit model_changed();
}

void LayerStackEditor::update_buttons() {
    const int row = selected_row();
    const int count = m_table->rowCount();
    m_remove->setEnabled(row >= 0);
    m_up->setEnabled(row > 0);
    m_down->setEnabled(row >= 0 && row + 1 < count);
}

void LayerStackEditor::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    fit_button_row();
}

void LayerStackEditor::fit_button_row() {
    const QMargins margins = layout()->contentsMargins();
    int worded = 0; // the row's width with every word shown
    for (const auto& [button, word] : m_row_buttons) {
        const QString shown = button->text();
        button->setText(word);
        worded += button->sizeHint().width() + m_button_row->spacing();
        button->setText(shown);
    }
    const bool words = worded <= width() - margins.left() - margins.right();
    for (const auto& [button, word] : m_row_buttons) button->setText(words ? word : QString());
}

bool LayerStackEditor::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_table && event->type() == QEvent::KeyPress) {
        const auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Delete || key->key() == Qt::Key_Backspace) {
            remove_selected();
            return true;
        }
        if (key->modifiers() & Qt::ControlModifier) {
            if (key->key() == Qt::Key_Up) {
                move_selected(-1);
                return true;
            }
            if (key->key() == Qt::Key_Down) {
                move_selected(+1);
                return true;
            }
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace mantissa::ui
