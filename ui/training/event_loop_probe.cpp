// EventLoopProbe (see event_loop_probe.h): a precise 10 ms timer on the GUI thread; each tick
// records how far past the interval it fired, which is how long the event loop was busy.
#include "ui/training/event_loop_probe.h"

#include <QTimer>
#include <algorithm>

namespace mantissa::ui {

EventLoopProbe::EventLoopProbe(QObject* parent) : QObject(parent) {
    m_timer = new QTimer(this);
    m_timer->setTimerType(Qt::PreciseTimer);
    m_timer->setInterval(kIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &EventLoopProbe::tick);
}

void EventLoopProbe::start() {
    m_late_ms.clear();
    m_clock.start();
    m_last_ns = 0;
    m_timer->start();
}

void EventLoopProbe::stop() {
    m_timer->stop();
}

bool EventLoopProbe::running() const {
    return m_timer->isActive();
}

void EventLoopProbe::tick() {
    const qint64 now = m_clock.nsecsElapsed();
    const double late = (now - m_last_ns) / 1e6 - kIntervalMs;
    m_last_ns = now;
    m_late_ms.append(std::max(0.0, late));
}

QJsonObject EventLoopProbe::summary() const {
    QVector<double> sorted = m_late_ms;
    std::sort(sorted.begin(), sorted.end());
    auto at = [&sorted](double q) {
        if (sorted.isEmpty()) return 0.0;
        return sorted[std::min<qsizetype>(sorted.size() - 1,
                                          static_cast<qsizetype>(q * (sorted.size() - 1) + 0.5))];
    };
    return QJsonObject{{"interval_ms", kIntervalMs},
                       {"ticks", static_cast<qint64>(sorted.size())},
                       {"median_late_ms", at(0.5)},
                       {"p99_late_ms", at(0.99)},
                       {"max_late_ms", sorted.isEmpty() ? 0.0 : sorted.back()}};
}

} // namespace mantissa::ui
