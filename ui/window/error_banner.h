// ErrorBanner: a readable, dismissable message across the top of the window for errors the
// user must act on (out of memory, divergence, missing data, a bad experiment file).
#pragma once

#include <QFrame>

class QLabel;

namespace mantissa::ui {

class ErrorBanner final : public QFrame {
    Q_OBJECT

public:
    explicit ErrorBanner(QWidget* parent = nullptr);
    // `what` in bold, then `todo`: what to do about it.
    void show_error(const QString& what, const QString& todo);
    QString text() const;

private:
    QLabel* m_label = nullptr;
};

} // namespace mantissa::ui
