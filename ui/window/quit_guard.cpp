// The quit guard (quit_guard.h).
#include "ui/window/quit_guard.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QMessageBox>
#include <QPushButton>

#include "ui/runs/compare_queue.h"
#include "ui/runs/run_store.h"
#include "ui/training/training_controller.h"

namespace mantissa::ui {

QuitPrompt default_quit_prompt() {
    return [](QWidget* parent, const QString& text) {
        QMessageBox box(QMessageBox::Question, QObject::tr("Quit Mantissa"), text,
                        QMessageBox::NoButton, parent);
        QPushButton* stop = box.addButton(QObject::tr("Stop and quit"), QMessageBox::AcceptRole);
        QPushButton* keep = box.addButton(QObject::tr("Keep training"), QMessageBox::RejectRole);
        box.setDefaultButton(keep);
        box.exec();
        return box.clickedButton() == stop;
    };
}

bool stop_training_before_quit(QWidget* parent, TrainingController& controller, CompareQueue& queue,
                               const RunStore& store, const QuitPrompt& prompt, int wait_ms) {
    if (!controller.is_running()) return true;
    const RunRecord* run = store.run(controller.current_run());
    QString text = run ? QObject::tr("\"%1\" is still training.").arg(run->name)
                       : QObject::tr("A run is still training.");
    if (const int waiting = queue.pending(); waiting > 0)
        // No translations are loaded, so tr()'s %n plural would print "run(s)": spelled out.
        text += waiting == 1 ? QObject::tr(" 1 more run of this comparison or lesson has not "
                                           "started and will not run.")
                             : QObject::tr(" %1 more runs of this comparison or lesson have not "
                                           "started and will not run.")
                                   .arg(waiting);
    text += QObject::tr(" Stop it and quit? What it has trained so far (its metrics, and the run "
                        "in the runs list as stopped) is kept.");
    if (!prompt(parent, text)) return false;
    queue.cancel();
    controller.stop();
    // The worker ends the run after its current step; its report marks the run stopped (and
    // rewrites run.json) on this thread, so wait for it here rather than close under it.
    QElapsedTimer waited;
    waited.start();
    while (controller.is_running() && waited.elapsed() < wait_ms)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    return true;
}

} // namespace mantissa::ui
