// ErrorBanner: a red-tinted frame with the message and a close button; hidden until needed.
// The text is selectable so a student can copy it into a question.
#include "ui/window/error_banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace mantissa::ui {

ErrorBanner::ErrorBanner(QWidget* parent) : QFrame(parent) {
    setObjectName("errorBanner");
    setStyleSheet(
        "#errorBanner { background: #fde8e6; border: 1px solid #d55e00; border-radius: 4px; }"
        "#errorBanner QLabel { color: #5a1a00; }");
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 6, 6, 6);
    m_label = new QLabel(this);
    m_label->setWordWrap(true);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* close = new QToolButton(this);
    close->setText("✕");
    close->setToolTip("Dismiss");
    close->setAutoRaise(true);
    connect(close, &QToolButton::clicked, this, &QWidget::hide);
    layout->addWidget(m_label, 1);
    layout->addWidget(close, 0, Qt::AlignTop);
    hide();
}

void ErrorBanner::show_error(const QString& what, const QString& todo) {
    m_label->setText("<b>" + what.toHtmlEscaped() + "</b>" +
                     (todo.isEmpty() ? QString() : "<br>" + todo.toHtmlEscaped()));
    show();
}

QString ErrorBanner::text() const {
    return m_label->text();
}

} // namespace mantissa::ui
