// PresentationMode: remembers what it changes and puts it back, so leaving the mode is exactly
// the layout the lecturer had before (see presentation_mode.h).
#include "ui/window/presentation_mode.h"

#include <QAction>
#include <QKeySequence>
#include <QMainWindow>
#include <QSplitter>
#include <QTabWidget>

#include "ui/charts/charts_panel.h"

namespace mantissa::ui {

PresentationMode::PresentationMode(const Parts& parts, QObject* parent)
    : QObject(parent), m_parts(parts) {
    m_action = new QAction(tr("&Presentation Mode"), this);
    m_action->setObjectName("presentation_mode");
    m_action->setCheckable(true);
    m_action->setShortcut(QKeySequence(Qt::Key_F11));
    m_action->setToolTip(tr("Full screen, the charts alone with larger text and thicker lines "
                            "(F11 again to leave)"));
    connect(m_action, &QAction::toggled, this, &PresentationMode::set_active);
}

void PresentationMode::set_active(bool on) {
    if (on == m_active) return;
    m_active = on;
    if (m_action->isChecked() != on) m_action->setChecked(on);
    QMainWindow* window = m_parts.window;
    if (on) {
        m_window_state = window->windowState();
        m_page_index.clear();
        for (const auto& [tabs, page] : m_parts.pages) {
            m_page_index.append(tabs->currentIndex());
            tabs->setCurrentWidget(page);
        }
        m_splitter_state.clear();
        for (QSplitter* splitter : m_parts.splitters)
            m_splitter_state.append(splitter->saveState());
        m_was_hidden.clear();
        for (QWidget* widget : m_parts.hide) {
            m_was_hidden.append(widget->isHidden());
            widget->hide();
        }
        if (m_parts.charts) m_parts.charts->set_presentation(true);
        window->setWindowState(m_window_state | Qt::WindowFullScreen);
        return;
    }
    if (m_parts.charts) m_parts.charts->set_presentation(false);
    for (int i = 0; i < m_parts.hide.size() && i < m_was_hidden.size(); ++i)
        m_parts.hide[i]->setHidden(m_was_hidden[i]);
    for (int i = 0; i < m_parts.splitters.size() && i < m_splitter_state.size(); ++i)
        m_parts.splitters[i]->restoreState(m_splitter_state[i]);
    for (int i = 0; i < m_parts.pages.size() && i < m_page_index.size(); ++i)
        m_parts.pages[i].first->setCurrentIndex(m_page_index[i]);
    window->setWindowState(m_window_state);
}

} // namespace mantissa::ui
