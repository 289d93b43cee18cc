// Help menu: message boxes with plain text (a projector shows them to a class; nothing to click
// away to). The shortcut list is read from the window's actions at the moment it is shown.
#include "ui/window/help_menu.h"

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QVBoxLayout>
#include <map>

namespace mantissa::ui {

namespace {

void show_text(QWidget* parent, const QString& title, const QString& html, const char* name) {
    QDialog dialog(parent);
    dialog.setObjectName(QString::fromLatin1(name));
    dialog.setWindowTitle(title);
    auto* layout = new QVBoxLayout(&dialog);
    auto* label = new QLabel(html, &dialog);
    label->setObjectName("help_text");
    label->setTextFormat(Qt::RichText);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setMinimumWidth(460);
    layout->addWidget(label);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog.exec();
}

} // namespace

QString gpu_history_text() {
    // Keep in step with README.md, "The GPU: what has run, and what protects you".
    return QObject::tr(
        "Mantissa has two engines. The CPU engine emulates float16, bfloat16, FP8, MX and NVFP4 "
        "bit for bit; the lessons' measurements were made with it, and the test suite "
        "re-measures them.\n"
        "The CUDA engine (cuBLASLt, cuDNN and Mantissa's own kernels) has run on an NVIDIA H100 "
        "and an H200 (27 November to 30 November 2026): it passed its whole check there (every "
        "op against the CPU engine, bit for bit where the arithmetic allows; training steps from "
        "float64 to nvfp4; CUDA Graph replay), and its accuracies equal the CPU engine's. Its "
        "step times against PyTorch are in bench/RESULTS.md: mixed_bfloat16 trains the seed "
        "model in 0.79 of the time of PyTorch's best; FP8 takes 1.35 times mixed_bfloat16's "
        "step, MX formats (emulated: Hopper has no MX tensor cores) 1.7 times and NVFP4 5 "
        "times: correct, but their quantise kernels still cost more than the format saves.\n"
        "Not yet run on a GPU: training across several GPUs (NCCL), this app on the CUDA "
        "engine (its Plan view timing included; the command line's profile has run), and the "
        "faster quantise kernels, quantised convolutions and one-pass FP8 ReLU gradient written "
        "on 30 November (they pass the whole check in an emulator that runs the CUDA engine's "
        "kernels on the CPU; only a GPU shows their speed).\n"
        "Before the app trusts a GPU, the CUDA engine checks itself on it against the CPU engine "
        "(Check now, beside the Device box, or `mantissa-cli selftest --qualify`); the Device box "
        "shows each engine's verdict.");
}

QStringList keyboard_shortcuts(const QMainWindow* window) {
    std::map<QString, QString> by_key; // one line per key sequence, sorted
    for (const QAction* action : window->findChildren<QAction*>()) {
        const QKeySequence key = action->shortcut();
        // Widget-local keys (the layer editor's undo / redo) are described in the lines below.
        if (key.isEmpty() || action->shortcutContext() == Qt::WidgetWithChildrenShortcut) continue;
        QString text = action->text();
        text.remove(QLatin1Char('&'));
        if (text.isEmpty()) continue;
        by_key.emplace(key.toString(QKeySequence::NativeText), text);
    }
    QStringList lines;
    for (const auto& [key, text] : by_key) lines << key + QLatin1Char('\t') + text;
    lines << QObject::tr("Delete\tRemove the selected layer (Model tab)")
          << QObject::tr("Ctrl+Up / Ctrl+Down\tMove the selected layer (Model tab)")
          << QObject::tr("Ctrl+Z / Ctrl+Shift+Z\tUndo / redo a layer-stack edit (Model tab)");
    return lines;
}

QMenu* add_help_menu(QMainWindow* window, const QStringList& lesson_titles,
                     const std::function<void(int)>& open_lesson) {
    QMenu* help = window->menuBar()->addMenu(QObject::tr("&Help"));
    help->setObjectName("help_menu");
    QMenu* lessons = help->addMenu(QObject::tr("&Lessons"));
    lessons->setObjectName("help_lessons");
    for (int i = 0; i < lesson_titles.size(); ++i)
        lessons->addAction(QStringLiteral("%1. %2").arg(i + 1).arg(lesson_titles[i]), window,
                           [open_lesson, i] { open_lesson(i + 1); });
    help->addAction(QObject::tr("&Keyboard Shortcuts"), window, [window] {
        QString html = QStringLiteral("<table cellspacing='6'>");
        for (const QString& line : keyboard_shortcuts(window)) {
            const QStringList parts = line.split(QLatin1Char('\t'));
            html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                        .arg(parts.value(0).toHtmlEscaped(), parts.value(1).toHtmlEscaped());
        }
        show_text(window, QObject::tr("Keyboard shortcuts"), html + QStringLiteral("</table>"),
                  "shortcuts_dialog");
    });
    help->addAction(QObject::tr("What Has Run on a &GPU"), window, [window] {
        QString html;
        for (const QString& paragraph : gpu_history_text().split(QLatin1Char('\n')))
            html += QStringLiteral("<p>%1</p>").arg(paragraph.toHtmlEscaped());
        show_text(window, QObject::tr("What has run on a GPU"), html, "gpu_dialog");
    });
    help->addSeparator();
    help->addAction(QObject::tr("&About Mantissa"), window, [window] {
        QMessageBox::about(
            window, QObject::tr("About Mantissa"),
            QObject::tr("<h3>Mantissa %1</h3><p>A desktop studio for learning and comparing "
                        "mixed-precision training: build a model, pick a dtype policy and loss "
                        "scaling, train it on MNIST and watch what 16-bit floats do to the "
                        "loss, the gradients and the memory.</p><p>Guided lessons: Help › "
                        "Lessons. The Float Lab shows any value in float32, float16, bfloat16 "
                        "and float8.</p>")
                .arg(QApplication::applicationVersion().toHtmlEscaped()));
    });
    return help;
}

} // namespace mantissa::ui
