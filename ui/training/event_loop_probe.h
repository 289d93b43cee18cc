// EventLoopProbe: measures how late the GUI thread's event loop answers a 10 ms timer while
// training runs, the number behind "the UI never freezes" (reported by `mantissa --report`).
#pragma once

#include <QElapsedTimer>
#include <QJsonObject>
#include <QObject>
#include <QVector>

class QTimer;

namespace mantissa::ui {

class EventLoopProbe final : public QObject {
    Q_OBJECT

public:
    explicit EventLoopProbe(QObject* parent = nullptr);

    void start(); // clears earlier samples
    void stop();
    bool running() const;

    // {"interval_ms", "ticks", "median_late_ms", "p99_late_ms", "max_late_ms"}: how much later
    // than asked each tick arrived. A frozen window shows up as a large max.
    QJsonObject summary() const;

private:
    void tick();

    static constexpr int kIntervalMs = 10;
    QTimer* m_timer = nullptr;
    QElapsedTimer m_clock;
    qint64 m_last_ns = 0;
    QVector<double> m_late_ms;
};

} // namespace mantissa::ui
