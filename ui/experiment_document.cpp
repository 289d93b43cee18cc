// ExperimentDocument: compares the controls' experiment with the last loaded or saved one (the
// snapshot is taken from the controls themselves, so a field the form normalises never counts
// as an edit) and asks before edits are lost.
#include "ui/experiment_document.h"

#include <QMessageBox>
#include <QWidget>

namespace mantissa::ui {

ExperimentDocument::ExperimentDocument(QWidget* dialog_parent, QObject* parent)
    : QObject(parent), m_dialog_parent(dialog_parent) {
    m_prompt = [this](const QString& name) {
        QMessageBox box(QMessageBox::Warning, tr("Unsaved changes"),
                        tr("The experiment \"%1\" has unsaved changes.").arg(name),
                        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel,
                        m_dialog_parent);
        box.setInformativeText(tr("Save them before going on?"));
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
}

void ExperimentDocument::set_clean(const Experiment& snapshot, const QString& path) {
    m_snapshot = snapshot;
    m_path = path;
    if (m_modified) {
        m_modified = false;
        emit modified_changed(false);
    }
}

void ExperimentDocument::update(const Experiment& current) {
    const bool modified = !(current == m_snapshot);
    if (modified == m_modified) return;
    m_modified = modified;
    emit modified_changed(modified);
}

bool ExperimentDocument::maybe_save(const std::function<bool()>& save) {
    if (!m_modified) return true;
    switch (m_prompt(QString::fromStdString(m_snapshot.name))) {
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
