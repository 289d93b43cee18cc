// RunHistoryMenu: the runs list's context menu (show only these / show all, rename, export metrics
// as CSV or JSON, open the run's folder, delete with confirmation), acting through RunHistory.
#pragma once

#include <QObject>
#include <QSet>
#include <functional>
#include <optional>

#include "core/numeric/dtype.h"

class QMenu;
class QTableView;
class QWidget;

namespace mantissa::ui {

class RunHistory;
class RunStore;

class RunHistoryMenu final : public QObject {
    Q_OBJECT

public:
    // Asks "delete this run?"; tests replace it to answer without a dialog.
    using Confirm = std::function<bool(const QString& question)>;

    RunHistoryMenu(QTableView* view, RunStore* store, RunHistory* history,
                   QObject* parent = nullptr);
    void set_confirm(Confirm confirm) { m_confirm = std::move(confirm); }

    // The menu for run `id` (the caller owns it), with actions named by objectName
    // "show_only" (the selected runs, or `id` when it is not among them), "show_all", "rename",
    // "export_csv", "export_json", "export_weights", "load_weights", "evaluate_weights",
    // "open_folder", "delete". The weights actions are disabled, with the reason as tooltip, for a
    // run without a weights file (still training, failed, or trained before runs kept their
    // weights).
    QMenu* menu_for(int id, QWidget* parent);
    void delete_run(int id); // asks, then deletes; errors go to `error`
    // The runs list's selection (run ids); with `id` when it is not selected, `id` alone.
    QSet<int> selected_or(int id) const;
    void show_only(const QSet<int>& ids); // ticks exactly these runs
    void show_all();
    // "Show only selected" and "Show all" buttons (objectNames "show_only_button",
    // "show_all_button") for a corner of the runs tab; the caller owns the widget.
    QWidget* make_visibility_buttons(QWidget* parent);
    // What "Export weights…" does once the dialog has answered: the run's weights.safetensors to
    // `path` (format by extension). Returns whether it worked; errors go to `error`.
    bool export_weights(int id, const QString& path, std::optional<DType> dtype = std::nullopt);

signals:
    void error(const QString& what, const QString& detail);
    void message(const QString& line); // for the log
    // "Load weights": the run's weights file, for the app to load like File > Load Weights….
    void load_weights_requested(const QString& path);
    // "Evaluate Weights": the run's weights file, for the test-set evaluation.
    void evaluate_weights_requested(const QString& path);

private:
    void rename_run(int id);
    void export_run(int id, const QString& suffix);

    QTableView* m_view = nullptr;
    RunStore* m_store = nullptr;
    RunHistory* m_history = nullptr;
    Confirm m_confirm;
};

} // namespace mantissa::ui
