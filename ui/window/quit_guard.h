// Quitting while a run trains (issue 28): the window asks first (Stop and quit / Keep training),
// saying what would end (the run, and any runs of a comparison or lesson still waiting); on
// "stop" it stops the run and waits for the worker to report it, so the run is recorded as
// stopped (its run.json, metrics and weights so far) before the window goes. Nothing is dropped
// without a word.
#pragma once

#include <QString>
#include <functional>

class QWidget;

namespace mantissa::ui {

class CompareQueue;
class RunStore;
class TrainingController;

// Asks the question `text`; true means "stop and quit". The default shows a message box; tests
// answer without one.
using QuitPrompt = std::function<bool(QWidget* parent, const QString& text)>;
QuitPrompt default_quit_prompt();

// True when the window may close: nothing was training, or the user chose to stop and the run
// has ended (waiting at most `wait_ms` for the worker). False: keep the window and the run.
bool stop_training_before_quit(QWidget* parent, TrainingController& controller, CompareQueue& queue,
                               const RunStore& store, const QuitPrompt& prompt,
                               int wait_ms = 60000);

} // namespace mantissa::ui
