// RunHistoryMenu: the runs list's right-click menu. Every action names the run it acts on, and a
// delete asks first because it removes the run's folder from the disk.
#include "ui/runs/run_history_menu.h"

#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>
#include <QTableView>
#include <QToolButton>
#include <QUrl>

#include "ui/runs/run_history.h"
#include "ui/runs/run_store.h"
#include "ui/runs/run_visibility.h"
#include "ui/weights/weights_files.h"
#include "ui/window/dialog_folder.h"

namespace mantissa::ui {

RunHistoryMenu::RunHistoryMenu(QTableView* view, RunStore* store, RunHistory* history,
                               QObject* parent)
    : QObject(parent), m_view(view), m_store(store), m_history(history) {
    m_confirm = [this](const QString& question) {
        return QMessageBox::question(m_view, tr("Delete run"), question,
                                     QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndex index = m_view->indexAt(pos);
        if (!index.isValid() || index.row() >= m_store->runs().size()) return;
        const int id = m_store->runs()[index.row()].id;
        QMenu* menu = menu_for(id, m_view);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(m_view->viewport()->mapToGlobal(pos));
    });
}

QMenu* RunHistoryMenu::menu_for(int id, QWidget* parent) {
    auto* menu = new QMenu(parent);
    const RunRecord* run = m_store->run(id);
    if (!run) return menu;
    const bool active = run->state == RunState::Queued || run->state == RunState::Running ||
                        run->state == RunState::Paused;
    const QSet<int> these = selected_or(id);
    QAction* only_these =
        menu->addAction(these.size() > 1 ? tr("Show Only These %1 Runs").arg(these.size())
                                         : tr("Show Only This Run"),
                        this, [this, these] { show_only(these); });
    only_these->setObjectName(QStringLiteral("show_only"));
    QAction* all = menu->addAction(tr("Show All Runs"), this, [this] { show_all(); });
    all->setObjectName(QStringLiteral("show_all"));
    menu->addSeparator();
    QAction* rename = menu->addAction(tr("Rename…"), this, [this, id] { rename_run(id); });
    rename->setObjectName(QStringLiteral("rename"));
    menu->addSeparator();
    QAction* csv = menu->addAction(tr("Export metrics as CSV…"), this,
                                   [this, id] { export_run(id, QStringLiteral("csv")); });
    csv->setObjectName(QStringLiteral("export_csv"));
    QAction* json = menu->addAction(tr("Export metrics as JSON…"), this,
                                    [this, id] { export_run(id, QStringLiteral("json")); });
    json->setObjectName(QStringLiteral("export_json"));
    csv->setEnabled(!run->steps.isEmpty());
    json->setEnabled(!run->steps.isEmpty());
    menu->addSeparator();
    const QString weights = m_history->weights_path(id);
    const bool has_weights = !weights.isEmpty() && QFileInfo::exists(weights);
    QAction* export_w = menu->addAction(tr("Export Weights…"), this, [this, id] {
        const RunRecord* r = m_store->run(id);
        if (!r) return;
        QString base = r->name;
        base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("-"));
        QString path;
        std::optional<DType> dtype;
        if (ask_weights_destination(m_view, base, path, dtype)) export_weights(id, path, dtype);
    });
    export_w->setObjectName(QStringLiteral("export_weights"));
    QAction* load_w = menu->addAction(tr("Load Weights"), this,
                                      [this, weights] { emit load_weights_requested(weights); });
    load_w->setObjectName(QStringLiteral("load_weights"));
    QAction* eval_w = menu->addAction(tr("Evaluate Weights"), this, [this, weights] {
        emit evaluate_weights_requested(weights);
    });
    eval_w->setObjectName(QStringLiteral("evaluate_weights"));
    eval_w->setStatusTip(tr("Loss and accuracy of the saved weights over the 10,000 test images"));
    for (QAction* action : {export_w, load_w, eval_w}) {
        action->setEnabled(has_weights);
        if (!has_weights)
            action->setToolTip(active ? tr("The weights are saved when the run ends")
                                      : tr("This run has no weights file (it failed, or was "
                                           "trained before runs kept their weights)"));
    }
    menu->setToolTipsVisible(true);
    const QString folder = run->folder;
    QAction* open = menu->addAction(tr("Open Run Folder"), this, [folder] {
        QDesktopServices::openUrl(QUrl::fromLocalFile(folder));
    });
    open->setObjectName(QStringLiteral("open_folder"));
    open->setEnabled(!folder.isEmpty());
    open->setToolTip(folder);
    menu->addSeparator();
    QAction* del = menu->addAction(tr("Delete…"), this, [this, id] { delete_run(id); });
    del->setObjectName(QStringLiteral("delete"));
    del->setEnabled(!active);
    if (active) del->setToolTip(tr("Stop the run before deleting it"));
    return menu;
}

QSet<int> RunHistoryMenu::selected_or(int id) const {
    QSet<int> ids;
    for (const QModelIndex& index : m_view->selectionModel()->selectedRows())
        if (index.row() < m_store->runs().size()) ids.insert(m_store->runs()[index.row()].id);
    if (id >= 0 && !ids.contains(id)) return {id}; // right-clicked outside the selection
    return ids;
}

void RunHistoryMenu::show_only(const QSet<int>& ids) {
    if (ids.isEmpty()) return; // hiding everything is never what "show only" means
    m_store->set_visibility(only(m_store->runs(), ids));
}

void RunHistoryMenu::show_all() {
    m_store->set_visibility(all_shown(m_store->runs()));
}

QWidget* RunHistoryMenu::make_visibility_buttons(QWidget* parent) {
    auto* box = new QWidget(parent);
    auto* layout = new QHBoxLayout(box);
    layout->setContentsMargins(0, 0, 2, 0);
    layout->setSpacing(4);
    auto* only_button = new QToolButton(box);
    only_button->setObjectName(QStringLiteral("show_only_button"));
    only_button->setText(tr("Show only selected"));
    only_button->setToolTip(tr("Show only the runs selected in the Runs list on the charts "
                               "(right-click a run for more)"));
    auto* all_button = new QToolButton(box);
    all_button->setObjectName(QStringLiteral("show_all_button"));
    all_button->setText(tr("Show all"));
    all_button->setToolTip(tr("Show every run on the charts"));
    layout->addWidget(only_button);
    layout->addWidget(all_button);
    auto update = [this, only_button] {
        only_button->setEnabled(m_view->selectionModel() &&
                                m_view->selectionModel()->hasSelection());
    };
    connect(only_button, &QToolButton::clicked, this, [this] { show_only(selected_or(-1)); });
    connect(all_button, &QToolButton::clicked, this, &RunHistoryMenu::show_all);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, only_button, update);
    connect(m_store, &QAbstractItemModel::modelReset, only_button, update);
    update();
    return box;
}

void RunHistoryMenu::rename_run(int id) {
    const RunRecord* run = m_store->run(id);
    if (!run) return;
    bool ok = false;
    const QString name = QInputDialog::getText(m_view, tr("Rename run"), tr("Name:"),
                                               QLineEdit::Normal, run->name, &ok);
    if (!ok) return;
    if (const QString problem = m_history->rename(id, name); !problem.isEmpty())
        emit error(tr("Could not rename the run."), problem);
}

void RunHistoryMenu::delete_run(int id) {
    const RunRecord* run = m_store->run(id);
    if (!run) return;
    const QString where = run->folder.isEmpty() ? tr("It was never stored on disk.")
                                                : tr("Its folder %1 is deleted with its metrics.")
                                                      .arg(QDir::toNativeSeparators(run->folder));
    if (!m_confirm(tr("Delete the run \"%1\"? %2").arg(run->name, where))) return;
    const QString name = run->name;
    if (const QString problem = m_history->remove(id); !problem.isEmpty())
        emit error(tr("Could not delete the run."), problem);
    else
        emit message(tr("deleted run %1").arg(name));
}

void RunHistoryMenu::export_run(int id, const QString& suffix) {
    const RunRecord* run = m_store->run(id);
    if (!run) return;
    QString base = run->name;
    base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("-"));
    const QString filter = suffix == QLatin1String("csv") ? tr("CSV (*.csv)") : tr("JSON (*.json)");
    QString path = QFileDialog::getSaveFileName(
        m_view, tr("Export metrics"), dialog_path(base + QLatin1Char('.') + suffix), filter);
    if (path.isEmpty()) return;
    remember_dialog_folder(path);
    if (!path.endsWith(QLatin1Char('.') + suffix, Qt::CaseInsensitive))
        path += QLatin1Char('.') + suffix;
    if (const QString problem = m_history->export_metrics(id, path); !problem.isEmpty())
        emit error(tr("Could not export the metrics."), problem);
    else if (suffix == QLatin1String("csv") && !run->quant.isEmpty())
        emit message(tr("exported the metrics of %1 to %2, its quant records to %3")
                         .arg(run->name, path, RunHistory::quant_csv_path(path)));
    else
        emit message(tr("exported the metrics of %1 to %2").arg(run->name, path));
}

bool RunHistoryMenu::export_weights(int id, const QString& path, std::optional<DType> dtype) {
    const RunRecord* run = m_store->run(id);
    if (!run) return false;
    if (const QString problem = export_weights_file(m_history->weights_path(id), path, dtype);
        !problem.isEmpty()) {
        emit error(tr("Could not export the weights of %1.").arg(run->name), problem);
        return false;
    }
    emit message(tr("exported the weights of %1 to %2").arg(run->name, path));
    return true;
}

} // namespace mantissa::ui
