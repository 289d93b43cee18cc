// PresentationMode: the View › Presentation toggle (F11). On: full screen, the charts page
// alone (the editor, the bottom tabs and the toolbar's neighbours hidden), larger chart fonts
// and thicker lines. Off: every hidden part, the splitters and the window state come back as
// they were.
#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPointer>

class QAction;
class QMainWindow;
class QSplitter;
class QTabWidget;
class QWidget;

namespace mantissa::ui {

class ChartsPanel;

class PresentationMode final : public QObject {
    Q_OBJECT

public:
    // What the mode changes: the window; tabs to switch to `page` (the charts, then the training
    // page that holds them); widgets to hide; splitters whose sizes to restore; the charts.
    struct Parts {
        QMainWindow* window = nullptr;
        QList<QPair<QTabWidget*, QWidget*>> pages;
        QList<QWidget*> hide;
        QList<QSplitter*> splitters;
        ChartsPanel* charts = nullptr;
    };

    explicit PresentationMode(const Parts& parts, QObject* parent = nullptr);

    QAction* action() const { return m_action; } // checkable, F11
    bool active() const { return m_active; }
    void set_active(bool on);

private:
    Parts m_parts;
    QAction* m_action = nullptr;
    bool m_active = false;
    // What to restore on leaving.
    Qt::WindowStates m_window_state;
    QList<int> m_page_index;
    QList<bool> m_was_hidden;
    QList<QByteArray> m_splitter_state;
};

} // namespace mantissa::ui
