// MetricChart: a QChartView with one QLineSeries per visible run, filled with QXYSeries::replace()
// from min/max-decimated data; smoothing, log-y, hover values, rubber-band zoom and pan.
#include "ui/charts/metric_chart.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QCursor>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QScatterSeries>
#include <QSet>
#include <QSlider>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/charts/chart_style.h"
#include "ui/charts/decimate.h"

namespace mantissa::ui {

// The chart view: the rubber band zooms (left button); right or middle drag and the arrow keys
// pan; the wheel zooms around the centre.
class MetricChartView final : public QChartView {
public:
    explicit MetricChartView(QChart* chart, QWidget* parent = nullptr) : QChartView(chart, parent) {
        setRubberBand(QChartView::RectangleRubberBand);
        setRenderHint(QPainter::Antialiasing);
        setFocusPolicy(Qt::StrongFocus);
        setMouseTracking(true);
    }

protected:
    void mousePressEvent(QMouseEvent* event) override {
        if (event->button() == Qt::RightButton || event->button() == Qt::MiddleButton) {
            m_panning = true;
            m_last = event->position();
            setCursor(Qt::ClosedHandCursor);
            event->accept();
            return;
        }
        QChartView::mousePressEvent(event);
    }
    void mouseMoveEvent(QMouseEvent* event) override {
        if (m_panning) {
            const QPointF delta = event->position() - m_last;
            m_last = event->position();
            chart()->scroll(-delta.x(), delta.y());
            event->accept();
            return;
        }
        QChartView::mouseMoveEvent(event);
    }
    void mouseReleaseEvent(QMouseEvent* event) override {
        if (m_panning &&
            (event->button() == Qt::RightButton || event->button() == Qt::MiddleButton)) {
            m_panning = false;
            unsetCursor();
            event->accept();
            return;
        }
        QChartView::mouseReleaseEvent(event);
    }
    void keyPressEvent(QKeyEvent* event) override {
        const qreal step = 30;
        switch (event->key()) {
        case Qt::Key_Left:
            chart()->scroll(-step, 0);
            break;
        case Qt::Key_Right:
            chart()->scroll(step, 0);
            break;
        case Qt::Key_Up:
            chart()->scroll(0, step);
            break;
        case Qt::Key_Down:
            chart()->scroll(0, -step);
            break;
        case Qt::Key_Plus:
            chart()->zoom(1.25);
            break;
        case Qt::Key_Minus:
            chart()->zoom(0.8);
            break;
        default:
            QChartView::keyPressEvent(event);
            return;
        }
        event->accept();
    }
    void wheelEvent(QWheelEvent* event) override {
        if (event->angleDelta().y() == 0) return QChartView::wheelEvent(event);
        chart()->zoom(event->angleDelta().y() > 0 ? 1.2 : 1 / 1.2);
        event->accept();
    }

private:
    bool m_panning = false;
    QPointF m_last;
};

namespace {

constexpr int kFaintAlpha = 50; // the raw curve behind a smoothed one

// A 1, 2 or 5 times a power of ten near `range / ticks`: readable tick spacing.
double nice_interval(double range, int ticks) {
    const double raw = range / ticks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (raw <= m * magnitude) return m * magnitude;
    return 10 * magnitude;
}

// The points of `points` (sorted by x) inside [lo, hi], plus one neighbour on each side so the
// line runs to the plot's edges.
QVector<QPointF> slice(const QVector<QPointF>& points, double lo, double hi) {
    auto first = std::lower_bound(points.begin(), points.end(), lo,
                                  [](const QPointF& p, double x) { return p.x() < x; });
    auto last = std::upper_bound(points.begin(), points.end(), hi,
                                 [](double x, const QPointF& p) { return x < p.x(); });
    if (first != points.begin()) --first;
    if (last != points.end()) ++last;
    return QVector<QPointF>(first, last);
}

QVector<QPointF> positive_only(const QVector<QPointF>& points) {
    QVector<QPointF> out;
    out.reserve(points.size());
    for (const QPointF& p : points)
        if (p.y() > 0 && std::isfinite(p.y())) out.append(p);
    return out;
}

// The point of `points` nearest to x (points sorted by x, not empty).
const QPointF& nearest(const QVector<QPointF>& points, double x) {
    auto it = std::lower_bound(points.begin(), points.end(), x,
                               [](const QPointF& p, double v) { return p.x() < v; });
    if (it == points.end()) return points.back();
    if (it != points.begin() && x - (it - 1)->x() < it->x() - x) --it;
    return *it;
}

} // namespace

MetricChart::MetricChart(const QString& title, const QString& y_title, QWidget* parent)
    : QWidget(parent) {
    m_chart = new QChart;
    style_chart(m_chart, title);

    m_x = new QValueAxis;
    style_axis(m_x, tr("step"));
    m_x->setLabelFormat("%.0f");
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(0);
    m_x->setTickInterval(1);
    m_x->setRange(0, 1);
    m_chart->addAxis(m_x, Qt::AlignBottom);

    m_y_linear = new QValueAxis(this);
    style_axis(m_y_linear, y_title);
    m_y_linear->setLabelFormat("%.3g");
    m_y_log = new QLogValueAxis(this);
    style_axis(m_y_log, y_title);
    m_y_log->setLabelFormat("%.8g");
    m_y_log->setBase(10);
    m_y_log->setMinorTickCount(-1);
    attach_y_axis(m_y_linear);

    m_view = new MetricChartView(m_chart, this);
    m_view->setMinimumSize(320, 220);

    m_rescale_timer = new QTimer(this);
    m_rescale_timer->setSingleShot(true);
    m_rescale_timer->setInterval(30);
    connect(m_rescale_timer, &QTimer::timeout, this, &MetricChart::redraw);
    connect(m_x, &QValueAxis::rangeChanged, this, &MetricChart::on_user_range_change);
    connect(m_y_linear, &QValueAxis::rangeChanged, this, &MetricChart::on_user_range_change);
    connect(m_y_log, &QLogValueAxis::rangeChanged, this, &MetricChart::on_user_range_change);

    m_smoothing_slider = new QSlider(Qt::Horizontal, this);
    m_smoothing_slider->setRange(0, 99);
    m_smoothing_slider->setValue(static_cast<int>(std::lround(m_smoothing * 100)));
    m_smoothing_slider->setMaximumWidth(160);
    m_smoothing_slider->setToolTip(
        tr("Exponential moving average of the training curve, as in TensorBoard: "
           "the raw values stay faint behind the smoothed line."));
    m_smoothing_label = new QLabel(this);
    m_smoothing_label->setMinimumWidth(
        m_smoothing_label->fontMetrics().horizontalAdvance(QStringLiteral("Smoothing 0.00")));
    m_smoothing_label->setText(tr("Smoothing %1").arg(m_smoothing, 0, 'f', 2));
    connect(m_smoothing_slider, &QSlider::valueChanged, this,
            [this](int value) { set_smoothing(value / 100.0); });

    m_log_box = new QCheckBox(tr("Log y"), this);
    m_log_box->setToolTip(tr("Logarithmic y axis"));
    connect(m_log_box, &QCheckBox::toggled, this, &MetricChart::set_log_y);

    auto* reset = new QToolButton(this);
    reset->setText(tr("Reset zoom"));
    reset->setToolTip(tr("Drag with the left button to zoom; drag with the right or middle "
                         "button, or use the arrow keys, to pan."));
    connect(reset, &QToolButton::clicked, this, &MetricChart::reset_zoom);

    auto* controls = new QHBoxLayout;
    controls->setContentsMargins(8, 0, 8, 0);
    controls->addWidget(m_smoothing_label);
    controls->addWidget(m_smoothing_slider);
    controls->addStretch(1);
    controls->addWidget(m_log_box);
    controls->addWidget(reset);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 4);
    layout->setSpacing(2);
    layout->addWidget(m_view, 1);
    layout->addLayout(controls);
}

MetricChart::~MetricChart() = default;

void MetricChart::set_title(const QString& title) {
    if (m_chart->title() != title) m_chart->setTitle(title);
}

void MetricChart::set_smoothing_enabled(bool enabled) {
    m_smoothing_enabled = enabled;
    m_smoothing_slider->setVisible(enabled);
    m_smoothing_label->setVisible(enabled);
    set_lines([this] {
        QVector<ChartLine> lines;
        for (const Drawn& d : std::as_const(m_drawn)) lines.append(d.line);
        return lines;
    }());
}

void MetricChart::set_smoothing(double weight) {
    weight = std::clamp(weight, 0.0, 0.99);
    if (weight == m_smoothing) return;
    m_smoothing = weight;
    m_smoothing_label->setText(tr("Smoothing %1").arg(m_smoothing, 0, 'f', 2));
    const int value = static_cast<int>(std::lround(weight * 100));
    if (m_smoothing_slider->value() != value) m_smoothing_slider->setValue(value);
    for (Drawn& d : m_drawn)
        if (d.smoothed) d.smooth_points = smooth_ema(d.line.points, m_smoothing);
    redraw();
}

void MetricChart::set_log_y(bool on) {
    if (on == m_log_y) return;
    m_log_y = on;
    if (m_log_box->isChecked() != on) m_log_box->setChecked(on);
    attach_y_axis(on ? static_cast<QAbstractAxis*>(m_y_log) : m_y_linear);
    m_zoomed = false;
    redraw();
}

void MetricChart::set_y_limits(double floor, double ceiling) {
    m_y_floor = floor;
    m_y_ceiling = ceiling;
    redraw();
}

void MetricChart::reset_zoom() {
    m_zoomed = false;
    redraw();
}

QString MetricChart::key(int run_id, const QString& role) {
    return QString::number(run_id) + QLatin1Char('/') + role;
}

QXYSeries* MetricChart::make_series(const ChartLine& line, bool faint, bool smoothed_curve) {
    QXYSeries* series = nullptr;
    if (line.style == ChartLine::Style::Markers) {
        auto* scatter = new QScatterSeries;
        scatter->setMarkerShape(QScatterSeries::MarkerShapeCircle);
        scatter->setMarkerSize(9);
        scatter->setColor(line.color);
        scatter->setBorderColor(line.color.darker(150));
        series = scatter;
    } else {
        series = new QLineSeries;
        QPen pen(line.color);
        pen.setWidthF(smoothed_curve ? 2.5 : 2.0);
        pen.setCosmetic(true);
        if (line.style == ChartLine::Style::LineWithMarkers) {
            pen.setStyle(Qt::DashLine);
            series->setPointsVisible(true);
            series->setMarkerSize(8);
        }
        if (faint) {
            QColor c = line.color;
            c.setAlpha(kFaintAlpha);
            pen.setColor(c);
            pen.setWidthF(1.2);
        }
        series->setPen(pen);
    }
    series->setName(line.name);
    m_setting_range = true; // attaching may touch the axes: not the user's zoom
    m_chart->addSeries(series);
    series->attachAxis(m_x);
    series->attachAxis(m_log_y ? static_cast<QAbstractAxis*>(m_y_log) : m_y_linear);
    m_setting_range = false;
    const QString k = key(line.run_id, line.role);
    connect(series, &QXYSeries::hovered, this, [this, k](const QPointF& point, bool state) {
        auto it = m_drawn.constFind(k);
        if (it != m_drawn.constEnd()) show_tooltip(*it, point, state);
    });
    return series;
}

void MetricChart::set_lines(QVector<ChartLine> lines) {
    QSet<QString> wanted;
    for (const ChartLine& line : lines) wanted.insert(key(line.run_id, line.role));
    for (auto it = m_drawn.begin(); it != m_drawn.end();) {
        if (wanted.contains(it.key())) {
            ++it;
            continue;
        }
        m_setting_range = true;
        for (QXYSeries* s : {it->raw, it->smoothed}) {
            if (!s) continue;
            m_chart->removeSeries(s);
            delete s;
        }
        it = m_drawn.erase(it);
        m_setting_range = false;
    }
    for (ChartLine& line : lines) {
        const QString k = key(line.run_id, line.role);
        const bool smooth = line.smooth && m_smoothing_enabled;
        Drawn& d = m_drawn[k];
        const bool restyle =
            !d.raw || d.line.color != line.color || (d.smoothed != nullptr) != smooth;
        if (restyle) {
            m_setting_range = true;
            for (QXYSeries* s : {d.raw, d.smoothed}) {
                if (!s) continue;
                m_chart->removeSeries(s);
                delete s;
            }
            d.raw = d.smoothed = nullptr;
            d.raw_drawn.clear();
            d.smooth_drawn.clear();
            m_setting_range = false;
        }
        if (!restyle && line.version != 0 && line.version == d.line.version &&
            line.style == d.line.style && line.name == d.line.name)
            continue; // same data: keep the copy and its smoothed curve
        d.line = std::move(line);
        if (!d.raw) {
            d.raw = make_series(d.line, smooth, false);
            if (smooth) d.smoothed = make_series(d.line, false, true);
        }
        d.smooth_points = smooth ? smooth_ema(d.line.points, m_smoothing) : QVector<QPointF>{};
    }
    redraw();
}

int MetricChart::plot_columns() const {
    const qreal w = m_chart->plotArea().width();
    int columns = w >= 20 ? static_cast<int>(w) : m_view->width() - 80;
    return std::max(columns, 50);
}

void MetricChart::redraw() {
    const int columns = plot_columns();
    const bool zoomed = m_zoomed;
    const double lo = zoomed ? m_x->min() : -std::numeric_limits<double>::infinity();
    const double hi = zoomed ? m_x->max() : std::numeric_limits<double>::infinity();
    double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min;
    double y_min = x_min, y_max = -x_min;
    auto prepare = [&](const QVector<QPointF>& points) {
        QVector<QPointF> out = decimate_min_max(zoomed ? slice(points, lo, hi) : points, columns);
        if (m_log_y) out = positive_only(out);
        for (const QPointF& p : out) {
            if (!std::isfinite(p.y())) continue;
            x_min = std::min(x_min, p.x());
            x_max = std::max(x_max, p.x());
            y_min = std::min(y_min, p.y());
            y_max = std::max(y_max, p.y());
        }
        return out;
    };
    for (Drawn& d : m_drawn) {
        const bool smoothing = d.smoothed && m_smoothing > 0;
        // replace() makes Qt Charts rebuild the line's geometry (the costly part of a redraw):
        // skip it when the decimated points did not change, e.g. for a finished run.
        QVector<QPointF> raw = prepare(d.line.points);
        if (raw != d.raw_drawn) {
            d.raw->replace(raw);
            d.raw_drawn = std::move(raw);
        }
        if (d.smoothed) {
            QVector<QPointF> smooth = smoothing ? prepare(d.smooth_points) : QVector<QPointF>{};
            if (smooth != d.smooth_drawn) {
                d.smoothed->replace(smooth);
                d.smooth_drawn = std::move(smooth);
            }
            QPen pen = d.raw->pen();
            QColor c = d.line.color;
            c.setAlpha(smoothing ? kFaintAlpha : 255);
            pen.setColor(c);
            pen.setWidthF(smoothing ? 1.2 : 2.0);
            if (pen != d.raw->pen()) d.raw->setPen(pen);
        }
    }
    if (zoomed) return;

    m_setting_range = true;
    if (!(x_min <= x_max)) {
        x_min = 0;
        x_max = 1;
    }
    if (x_min > 0 && x_min <= 0.02 * x_max) x_min = 0; // start at step 0, not step 1
    if (x_max - x_min < 1) x_max = x_min + 1;
    // The interval grows before the range does: never a moment with thousands of ticks.
    const double interval = std::max(1.0, nice_interval(x_max - x_min, 5));
    m_x->setTickInterval(std::max(interval, m_x->tickInterval()));
    m_x->setRange(x_min, x_max);
    m_x->setTickInterval(interval);
    if (m_log_y) {
        if (!(y_min <= y_max)) y_min = y_max = 1;
        // One tick per power of the base; over a wide range, ticks every k-th power instead.
        const double base = 10.0;
        double e_lo = std::floor(std::log(y_min) / std::log(base));
        double e_hi = std::ceil(std::log(y_max) / std::log(base));
        if (e_hi <= e_lo) e_hi = e_lo + 1;
        const double k = std::max(1.0, std::ceil((e_hi - e_lo) / 10));
        e_lo = std::floor(e_lo / k) * k;
        e_hi = std::ceil(e_hi / k) * k;
        if (m_y_log->base() != std::pow(base, k)) m_y_log->setBase(std::pow(base, k));
        m_y_log->setRange(std::pow(base, e_lo), std::pow(base, e_hi));
    } else {
        if (!(y_min <= y_max)) {
            y_min = 0;
            y_max = 1;
        }
        double pad = (y_max - y_min) * 0.05;
        // A constant series (a fixed loss scale, log2 = 0) gets a unit-sized window, so the axis
        // shows readable ticks rather than 1e-06 steps.
        if (pad <= 0) pad = std::max(std::abs(y_max) * 0.05, 1.0);
        // Padding and nice numbers never cross zero (for data that does not) or the metric's
        // own limits (accuracy stays within 0..100).
        double floor = y_min >= 0 ? 0.0 : -std::numeric_limits<double>::infinity();
        floor = std::max(floor, std::min(m_y_floor, y_min));
        const double ceiling = std::max(m_y_ceiling, y_max);
        m_y_linear->setRange(std::max(y_min - pad, floor), std::min(y_max + pad, ceiling));
        m_y_linear->applyNiceNumbers();
        if (m_y_linear->min() < floor || m_y_linear->max() > ceiling)
            m_y_linear->setRange(std::max(m_y_linear->min(), floor),
                                 std::min(m_y_linear->max(), ceiling));
    }
    m_setting_range = false;
}

void MetricChart::on_user_range_change() {
    if (m_setting_range) return;
    m_zoomed = true;
    // Keep about five readable ticks in the new window (a fixed interval could mean thousands).
    if (m_x->max() > m_x->min())
        m_x->setTickInterval(std::max(1.0, nice_interval(m_x->max() - m_x->min(), 5)));
    m_rescale_timer->start(); // re-decimate for the new window
}

void MetricChart::attach_y_axis(QAbstractAxis* axis) {
    const auto current = m_chart->axes(Qt::Vertical);
    if (current.contains(axis)) return;
    m_setting_range = true;
    // Empty the series first: a log axis must never see the zero or negative values they hold.
    for (Drawn& d : m_drawn) {
        for (QXYSeries* s : {d.raw, d.smoothed})
            if (s) s->clear();
        d.raw_drawn.clear();
        d.smooth_drawn.clear();
    }
    for (QAbstractAxis* old : current) {
        for (QAbstractSeries* s : m_chart->series()) s->detachAxis(old);
        m_chart->removeAxis(old);
        old->setParent(this);
    }
    m_chart->addAxis(axis, Qt::AlignLeft);
    for (QAbstractSeries* s : m_chart->series()) s->attachAxis(axis);
    m_setting_range = false;
}

void MetricChart::show_tooltip(const Drawn& drawn, const QPointF& point, bool state) {
    if (!state || drawn.line.points.isEmpty()) {
        QToolTip::hideText();
        return;
    }
    const QPointF& p = nearest(drawn.line.points, point.x());
    QString text = QStringLiteral("<b>%1</b><br>step %2<br>%3: %4")
                       .arg(drawn.line.name.toHtmlEscaped())
                       .arg(static_cast<qint64>(p.x()))
                       .arg(drawn.line.role)
                       .arg(p.y(), 0, 'g', 6);
    if (drawn.smoothed && m_smoothing > 0 && !drawn.smooth_points.isEmpty())
        text += QStringLiteral("<br>smoothed: %1")
                    .arg(nearest(drawn.smooth_points, p.x()).y(), 0, 'g', 6);
    QToolTip::showText(QCursor::pos(), text, m_view);
}

int MetricChart::drawn_points(int run_id) const {
    int total = 0;
    const QString prefix = QString::number(run_id) + QLatin1Char('/');
    for (auto it = m_drawn.constBegin(); it != m_drawn.constEnd(); ++it) {
        if (!it.key().startsWith(prefix)) continue;
        for (QXYSeries* s : {it->raw, it->smoothed})
            if (s) total += s->count();
    }
    return total;
}

int MetricChart::drawn_points(int run_id, const QString& role) const {
    auto it = m_drawn.constFind(key(run_id, role));
    if (it == m_drawn.constEnd()) return 0;
    return it->raw->count() + (it->smoothed ? it->smoothed->count() : 0);
}

void MetricChart::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    m_rescale_timer->start();
}

} // namespace mantissa::ui
