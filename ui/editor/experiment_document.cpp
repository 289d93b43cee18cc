// ExperimentDocument: compares the controls' experiment with the last loaded or saved one (the
// snapshot is taken from the controls themselves, so a field the form normalises never counts
// as an edit) and asks before edits are lost. Only a file the user opened or saved is ever a
// Save target: anything else (New, a preset, a lesson) asks for a new file.
#include "ui/editor/experiment_document.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QRegularExpression>
#include <QWidget>

#include "ui/window/dialog_folder.h"

namespace mantissa::ui {

ExperimentDocument::ExperimentDocument(QWidget* dialog_parent, QObject* parent)
    : QObject(parent), m_dialog_parent(dialog_parent) {
    m_prompt = [this](const QString& name) {
        QMessageBox box(QMessageBox::Warning, tr("Unsaved changes"),
                        tr("The experiment \"%1\" has unsaved changes.").arg(name),
                        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel,
                        m_dialog_parent);
        box.setInformativeText(
            has_file() ? tr("Save them to %1 before going on?").arg(QFileInfo(m_path).fileName())
                       : tr("It has no file yet: Save asks for a new one."));
        box.setDefaultButton(QMessageBox::Save);
        switch (box.exec()) {
        case QMessageBox::Save:
            return Choice::Save;
        case QMessageBox::Discard:
            return Choice::Discard;
        default:
            return Choice::Cancel;
        }
    };
    // QFileDialog asks before replacing an existing file, so no file is overwritten silently.
    // The dialog adds ".json" itself (default suffix), so its "replace?" question covers the
    // file actually written: no file is overwritten without the user saying so.
    m_path_prompt = [this](const QString& suggested) {
        const QFileInfo info(suggested);
        QFileDialog dialog(m_dialog_parent, tr("Save experiment"), info.absolutePath(),
                           tr("Experiments (*.json)"));
        dialog.setAcceptMode(QFileDialog::AcceptSave);
        dialog.setDefaultSuffix(QStringLiteral("json"));
        dialog.selectFile(info.fileName());
        if (dialog.exec() != QDialog::Accepted) return QString();
        return dialog.selectedFiles().value(0);
    };
}

void ExperimentDocument::set_clean(const Experiment& snapshot, const QString& path) {
    m_snapshot = snapshot;
    m_path = path.startsWith(QLatin1Char(':')) ? QString() : path;
    m_name = QString::fromStdString(snapshot.name);
    if (m_modified) {
        m_modified = false;
        emit modified_changed(false);
    }
}

void ExperimentDocument::update(const Experiment& current) {
    m_name = QString::fromStdString(current.name); // the name field is editable
    const bool modified = !(current == m_snapshot);
    if (modified == m_modified) return;
    m_modified = modified;
    emit modified_changed(modified);
}

QString ExperimentDocument::ask_save_path() {
    // "Lesson 2 — float16 (pure)" suggests "Lesson-2-float16-pure.json".
    QString base = m_name;
    base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("-"));
    base.remove(QRegularExpression(QStringLiteral("^-+|-+$")));
    if (base.isEmpty()) base = QStringLiteral("experiment");
    const QString suggested = has_file() ? m_path : dialog_path(base + QStringLiteral(".json"));
    QString path = m_path_prompt(suggested);
    if (path.isEmpty()) return {};
    if (!path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive))
        path += QStringLiteral(".json");
    remember_dialog_folder(path);
    return path;
}

QString ExperimentDocument::save_target() {
    return has_file() ? m_path : ask_save_path();
}

bool ExperimentDocument::maybe_save(const std::function<bool()>& save) {
    if (!m_modified) return true;
    switch (m_prompt(m_name)) {
    case Choice::Save:
        return save();
    case Choice::Discard:
        return true;
    case Choice::Cancel:
        return false;
    }
    return false;
}

} // namespace mantissa::ui
