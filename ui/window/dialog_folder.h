// Where file dialogs start: the folder the user last chose a file in, else their Documents folder.
// Never the working directory, which is the source checkout when the app runs from its build.
#pragma once

#include <QString>

namespace mantissa::ui {

// The folder the next file dialog opens in (remembered across sessions in QSettings).
QString dialog_folder();
// `name` inside dialog_folder(): the suggested path of a Save dialog.
QString dialog_path(const QString& name);
// Remembers the folder of `path` (a file, or a folder itself) for the next dialog; an empty
// path (a cancelled dialog) or a built-in resource (":/...") changes nothing.
void remember_dialog_folder(const QString& path);

} // namespace mantissa::ui
