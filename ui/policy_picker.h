// The "Compare policies…" dialog: one checkbox per dtype policy (float32, mixed_float16 and
// mixed_bfloat16 preselected), each with its one-sentence description.
#pragma once

#include <QStringList>

class QWidget;

namespace mantissa::ui {

// Empty when the user cancels.
QStringList ask_policies(QWidget* parent);

} // namespace mantissa::ui
