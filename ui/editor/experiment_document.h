// ExperimentDocument: the open experiment as a document: where it came from (a file the user
// opened or saved, or something with no file of its own: New, a built-in preset, a lesson),
// whether the controls differ from what was loaded or saved, and the Save / Discard / Cancel
// question before losing edits.
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
    // Asks for a file to save to, suggesting `suggested`; empty when cancelled.
    using PathPrompt = std::function<QString(const QString& suggested)>;

    // `dialog_parent` parents the default prompts (a QMessageBox, a QFileDialog).
    explicit ExperimentDocument(QWidget* dialog_parent, QObject* parent = nullptr);

    void set_prompt(Prompt prompt) { m_prompt = std::move(prompt); } // tests answer it
    void set_path_prompt(PathPrompt prompt) { m_path_prompt = std::move(prompt); }
    // The controls now show `snapshot`, as read from or written to `path`. A built-in resource
    // (":/..."), or an empty path (New, a lesson: "Lesson 2 — float16 (pure)"), makes a document
    // with no file: Save asks for a new one and never writes over a file opened earlier.
    void set_clean(const Experiment& snapshot, const QString& path);
    void update(const Experiment& current); // after an edit: recomputes is_modified()
    bool is_modified() const { return m_modified; }
    // The user's file this document was read from or saved to; empty when it has none.
    QString path() const { return m_path; }
    bool has_file() const { return !m_path.isEmpty(); }
    QString name() const { return m_name; } // the experiment's name, as the prompt says it

    // The file Save writes: path() when the document has one, else the answer of the path
    // prompt (empty: cancelled), which starts in the last-used folder.
    QString save_target();
    // The file a Save As writes (always asks).
    QString ask_save_path();

    // When modified, asks Save / Discard / Cancel; Save runs `save` (false: it was cancelled or
    // failed). Returns whether the caller may go on and replace or close the experiment.
    bool maybe_save(const std::function<bool()>& save);

signals:
    void modified_changed(bool modified);

private:
    QWidget* m_dialog_parent = nullptr;
    Prompt m_prompt;
    PathPrompt m_path_prompt;
    Experiment m_snapshot;
    QString m_path;
    QString m_name;
    bool m_modified = false;
};

} // namespace mantissa::ui
