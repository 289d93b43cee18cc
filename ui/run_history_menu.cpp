// RunHistoryMenu: the runs list's right-click menu. Every action names the run it acts on, and a
// delete asks first because it removes the run's folder from the disk.
#include "ui/run_history_menu.h"

#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>
#include <QTableView>
#include <QUrl>

#include "ui/dialog_folder.h"
#include "ui/run_history.h"
#include "ui/run_store.h"
#include "ui/weights_files.h"

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
