// The "Compare policies…" dialog: one checkbox per dtype policy (float32, mixed_float16 and
// mixed_bfloat16 preselected), each with its one-sentence description, and a repeat count.
#pragma once

#include <QStringList>

class QWidget;

namespace mantissa::ui {

// Empty when the user cancels. With `repeats`, the dialog also asks how many runs per policy
// (1-10, default 1) and stores the answer there.
QStringList ask_policies(QWidget* parent, int* repeats = nullptr);

} // namespace mantissa::ui
