// ExperimentDocument: the open experiment as a document: its file, whether the controls differ
// from what was loaded or saved, and the Save / Discard / Cancel question before losing edits.
#pragma once

#include <QObject>
#include <QString>
#include <functional>

#include "core/train/experiment.h"

class QWidget;

namespace mantissa::ui {

class ExperimentDocument final : public QObject {
    Q_OBJECT

public:
    enum class Choice { Save, Discard, Cancel };
    // Asks what to do with the unsaved changes of the experiment named `name`.
    using Prompt = std::function<Choice(const QString& name)>;

    // `dialog_parent` parents the default prompt (a QMessageBox).
    explicit ExperimentDocument(QWidget* dialog_parent, QObject* parent = nullptr);

    void set_prompt(Prompt prompt) { m_prompt = std::move(prompt); } // tests answer it
    // The controls now show `snapshot`, as read from or written to `path` (empty: untitled or a
    // built-in preset, so Save asks for a file name).
    void set_clean(const Experiment& snapshot, const QString& path);
    void update(const Experiment& current); // after an edit: recomputes is_modified()
    bool is_modified() const { return m_modified; }
    QString path() const { return m_path; }

    // When modified, asks Save / Discard / Cancel; Save runs `save` (false: it was cancelled or
    // failed). Returns whether the caller may go on and replace or close the experiment.
    bool maybe_save(const std::function<bool()>& save);

signals:
    void modified_changed(bool modified);

private:
    QWidget* m_dialog_parent = nullptr;
    Prompt m_prompt;
    Experiment m_snapshot;
    QString m_path;
    bool m_modified = false;
};

} // namespace mantissa::ui
