// MetricChart: a QChartView with one QLineSeries per visible run, filled with QXYSeries::replace()
// from min/max-decimated data; smoothing, log-y, hover values, rubber-band zoom and pan.
#include "ui/charts/metric_chart.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QCursor>
#include <QFontMetricsF>
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
#include <array>
#include <cmath>
#include <limits>

#include "ui/charts/axis_window.h"
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
        // Minimal updates repaint only the removed series' bounding rects, which miss the
        // antialiased edges of cosmetic pens: an unticked run's line lingered in fragments.
        setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
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

// The index of the point nearest to `x` in points sorted by x (not empty).
qsizetype nearest_index(const QVector<QPointF>& points, double x) {
    auto it = std::lower_bound(points.begin(), points.end(), x,
                               [](const QPointF& p, double v) { return p.x() < v; });
    if (it == points.end()) return points.size() - 1;
    if (it != points.begin() && x - (it - 1)->x() < it->x() - x) --it;
    return it - points.begin();
}

// The point itself.
const QPointF& nearest(const QVector<QPointF>& points, double x) {
    return points[nearest_index(points, x)];
}

} // namespace

MetricChart::MetricChart(const QString& title, const QString& y_title, QWidget* parent)
    : QWidget(parent) {
    m_chart = new QChart;
    style_chart(m_chart, title);
    m_full_title = title;

    m_x = new QValueAxis;
    style_axis(m_x, tr("step"));
    m_x->setLabelFormat("%.0f");
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(0);
    m_x->setTickInterval(1);
    m_x->setRange(0, 1);
    m_chart->addAxis(m_x, Qt::AlignBottom);

    m_y_linear = new QValueAxis(this);
    m_y_title = y_title;
    style_axis(m_y_linear, y_title);
    m_y_linear->setLabelFormat("%.3g");
    m_y_linear->setTickType(QValueAxis::TicksDynamic);
    m_y_linear->setTickAnchor(0);
    m_y_linear->setTickInterval(1);
    m_y_log = new QLogValueAxis(this);
    style_axis(m_y_log, y_title);
    m_y_log->setLabelFormat("%.8g");
    m_y_log->setBase(10);
    m_y_log->setMinorTickCount(-1);
    attach_y_axis(m_y_linear);

    m_view = new MetricChartView(m_chart, this);
    // Small enough for a 1280×720 window with four charts, the memory chart and the runs list;
    // the axes then show fewer ticks (tick_capacity) rather than labels elided to "...".
    m_view->setMinimumSize(240, 101); // two rows of them and the run legend fit 1366x768

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
    m_full_title = title;
    fit_title();
}

void MetricChart::fit_title() {
    if (!m_view->isVisible()) { // not laid out yet: its size says nothing about the screen
        if (m_chart->title() != m_full_title) m_chart->setTitle(m_full_title);
        return;
    }
    const QMargins margins = m_chart->margins();
    double width = m_chart->size().width();
    if (width < 1) width = m_view->width();
    // Qt Charts elides a title wider than the chart less its margins and the text item's own
    // 4-pixel margins; two pixels spare for rounding.
    width -= margins.left() + margins.right() + 8 + 2;
    const QString shown = fitted_title(title_candidates(m_full_title), m_chart->titleFont(), width);
    if (m_chart->title() != shown) m_chart->setTitle(shown);
    const QString tip = shown == m_full_title ? QString() : m_full_title;
    if (m_view->toolTip() != tip) m_view->setToolTip(tip);
    // Qt Charts gives the x axis at most 30% of the chart's height and elides what does not
    // fit: a short chart keeps its tick labels and drops the self-evident title "step".
    const double chart_height = m_chart->size().height();
    const double x_needed =
        vertical_label_pixels(m_x->labelsFont()) + QFontMetricsF(m_x->titleFont()).height() + 12;
    const QString x_title = chart_height * 0.3 >= x_needed ? tr("step") : QString();
    if (chart_height >= 1 && m_x->titleText() != x_title) m_x->setTitleText(x_title);
    // The y title runs along the plot's height: on a short plot, its short form ("%", "ms").
    const double height = m_chart->plotArea().height();
    if (height < 20) return;
    for (QAbstractAxis* axis :
         {static_cast<QAbstractAxis*>(m_y_linear), static_cast<QAbstractAxis*>(m_y_log)}) {
        const QString y_title =
            fitted_title(axis_title_candidates(m_y_title), axis->titleFont(), height - 8 - 2);
        if (axis->titleText() != y_title) axis->setTitleText(y_title);
    }
}

void MetricChart::set_presentation_scale(double font_scale, double line_scale) {
    if (font_scale == m_font_scale && line_scale == m_line_scale) return;
    m_font_scale = font_scale;
    m_line_scale = line_scale;
    apply_chart_fonts(m_chart, font_scale, {m_y_linear, m_y_log});
    for (Drawn& d : m_drawn) {
        if (d.raw && d.line.style != ChartLine::Style::Markers)
            d.raw->setPen(line_pen(d.line, d.smoothed != nullptr && m_smoothing > 0, false));
        if (d.smoothed) d.smoothed->setPen(line_pen(d.line, false, true));
    }
    m_last_range_request.fill(std::nan("")); // tick capacities change with the font
    fit_title();
    redraw();
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
        if (d.smoothed) extend_ema(d.line.points, m_smoothing, d.ema, d.smooth_points);
    redraw();
}

void MetricChart::set_log_y(bool on) {
    if (on == m_log_y) return;
    m_log_y = on;
    if (m_log_box->isChecked() != on) m_log_box->setChecked(on);
    attach_y_axis(on ? static_cast<QAbstractAxis*>(m_y_log) : m_y_linear);
    m_zoomed = false;
    m_last_range_request.fill(std::nan(""));
    redraw();
}

void MetricChart::set_ignore_outliers(bool on) {
    if (on == m_ignore_outliers) return;
    m_ignore_outliers = on;
    m_zoomed = false;
    m_last_range_request.fill(std::nan(""));
    redraw();
}

int MetricChart::points_off_the_axis() const {
    if (m_zoomed || m_log_y) return 0;
    const double lo = m_y_linear->min(), hi = m_y_linear->max();
    int off = 0;
    for (const Drawn& d : m_drawn)
        for (const QPointF& p : d.line.points)
            if (std::isfinite(p.y()) && (p.y() < lo || p.y() > hi)) ++off;
    return off;
}

void MetricChart::set_y_limits(double floor, double ceiling) {
    m_y_floor = floor;
    m_y_ceiling = ceiling;
    m_last_range_request.fill(std::nan(""));
    redraw();
}

void MetricChart::reset_zoom() {
    m_zoomed = false;
    m_last_range_request.fill(std::nan("")); // the user moved the axes: set them again
    redraw();
}

QPen MetricChart::line_pen(const ChartLine& line, bool faint, bool smoothed_curve) const {
    QPen pen(line.color);
    pen.setWidthF((smoothed_curve ? 2.5 : 2.0) * m_line_scale);
    pen.setCosmetic(true);
    if (line.style == ChartLine::Style::LineWithMarkers) pen.setStyle(Qt::DashLine);
    if (faint) {
        QColor c = line.color;
        c.setAlpha(kFaintAlpha);
        pen.setColor(c);
        pen.setWidthF(1.2 * m_line_scale);
    }
    return pen;
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
        if (line.style == ChartLine::Style::LineWithMarkers) {
            // Validation: a dashed line, as the titles say, with small dots on the epochs (large
            // ones hid the dashes between them).
            series->setPointsVisible(true);
            series->setMarkerSize(4 * m_line_scale);
        }
        series->setPen(line_pen(line, faint, smoothed_curve));
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
            d.prepared_version = 0; // new series: fill them
            m_setting_range = false;
        }
        if (!restyle && line.version != 0 && line.version == d.line.version &&
            line.style == d.line.style && line.name == d.line.name)
            continue; // same data: keep the copy and its smoothed curve
        // Runs only grow: when the new points extend the old ones, smooth just the new ones.
        const qsizetype kept = d.smooth_points.size();
        // at(), not []: a non-const [] would detach, copying the whole shared vector.
        const bool extends = kept > 0 && kept <= line.points.size() &&
                             kept <= d.line.points.size() &&
                             line.points.at(kept - 1) == d.line.points.at(kept - 1);
        if (!extends) d.smooth_points.clear();
        // The chart keeps its own copy of the points, extended by the new ones only. Holding the
        // caller's vector would share it with RunLineCache, whose next append would then copy
        // all of it (100,000 points per line per live tick) instead of appending in place.
        QVector<QPointF> own = std::move(d.line.points);
        const qsizetype have = own.size();
        const bool grows = have > 0 && have <= line.points.size() &&
                           own.constFirst() == line.points.at(0) &&
                           own.constLast() == line.points.at(have - 1);
        if (grows) {
            const QPointF* added = line.points.constData();
            for (qsizetype i = have; i < line.points.size(); ++i) own.append(added[i]);
        } else {
            own = QVector<QPointF>(line.points.constBegin(), line.points.constEnd());
        }
        d.line = std::move(line);
        d.line.points = std::move(own);
        if (!d.raw) {
            d.raw = make_series(d.line, smooth, false);
            if (smooth) d.smoothed = make_series(d.line, false, true);
        }
        if (smooth)
            extend_ema(d.line.points, m_smoothing, d.ema, d.smooth_points);
        else
            d.smooth_points.clear();
    }
    redraw();
}

int MetricChart::plot_columns() const {
    const qreal w = m_chart->plotArea().width();
    int columns = w >= 20 ? static_cast<int>(w) : m_view->width() - 80;
    return std::max(columns, 50);
}

quint64 MetricChart::view_signature(int columns) const {
    // A hash, not a proof of equality: a collision would only keep a stale decimation until the
    // next change, and the inputs are few small integers.
    const QString signature = QStringLiteral("%1|%2|%3|%4|%5|%6|%7")
                                  .arg(columns)
                                  .arg(m_zoomed ? m_x->min() : 0.0, 0, 'g', 17)
                                  .arg(m_zoomed ? m_x->max() : 0.0, 0, 'g', 17)
                                  .arg(int(m_zoomed))
                                  .arg(int(m_log_y))
                                  .arg(m_smoothing, 0, 'g', 17)
                                  .arg(int(m_ignore_outliers));
    return qHash(signature) + 1;
}

void MetricChart::redraw() {
    const int columns = plot_columns();
    const bool zoomed = m_zoomed;
    const double lo = zoomed ? m_x->min() : -std::numeric_limits<double>::infinity();
    const double hi = zoomed ? m_x->max() : std::numeric_limits<double>::infinity();
    double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min;
    double y_min = x_min, y_max = -x_min;
    auto include = [&](const Drawn& d) {
        x_min = std::min(x_min, d.x_min);
        x_max = std::max(x_max, d.x_max);
        const bool bulk = !d.bulk.empty() && d.x_min <= d.x_max; // a drawn line, outliers left out
        y_min = std::min(y_min, bulk ? d.bulk.lo : d.y_min);
        y_max = std::max(y_max, bulk ? d.bulk.hi : d.y_max);
    };
    // Decimates `points` to the plot's columns and widens d's data range by what is drawn.
    // Qt Charts' cost is per drawn point (it strokes each line's outline for hovering), so the
    // raw data keeps a min and a max per two pixels, and the smooth EMA curve half of that.
    const int raw_buckets = std::max(columns / 2, 50);
    const int smooth_buckets = std::max(columns / 4, 25);
    auto prepare = [&](const QVector<QPointF>& points, Drawn& d, int buckets) {
        QVector<QPointF> out = decimate_min_max(zoomed ? slice(points, lo, hi) : points, buckets);
        if (m_log_y) out = positive_only(out);
        for (const QPointF& p : out) {
            if (!std::isfinite(p.y())) continue;
            d.x_min = std::min(d.x_min, p.x());
            d.x_max = std::max(d.x_max, p.x());
            d.y_min = std::min(d.y_min, p.y());
            d.y_max = std::max(d.y_max, p.y());
        }
        return out;
    };
    const quint64 view = view_signature(columns);
    // Decimate first, set the axes next, replace the series last: every range change and every
    // replace() makes Qt Charts lay a series out again, so each series is laid out once.
    struct Pending {
        QXYSeries* series;
        QVector<QPointF>* drawn;
        QVector<QPointF> points;
    };
    QVector<Pending> pending;
    for (Drawn& d : m_drawn) {
        const bool smoothing = d.smoothed && m_smoothing > 0;
        const bool unchanged =
            d.line.version != 0 && d.prepared_version == d.line.version && d.prepared_view == view;
        if (unchanged) { // a finished run, or a line that did not grow: nothing to decimate
            include(d);
            continue;
        }
        d.x_min = d.y_min = std::numeric_limits<double>::infinity();
        d.x_max = d.y_max = -std::numeric_limits<double>::infinity();
        d.bulk = {};
        if (m_ignore_outliers && !m_log_y && d.line.style != ChartLine::Style::Markers) {
            // From the full-resolution line: decimation keeps each column's extremes, which
            // would make every spike look like a fifth of the data.
            std::vector<double> ys;
            ys.reserve(static_cast<std::size_t>(d.line.points.size()));
            for (const QPointF& p : d.line.points) ys.push_back(p.y());
            d.bulk = bulk_band(std::move(ys));
        }
        QVector<QPointF> raw = prepare(d.line.points, d, raw_buckets);
        if (raw != d.raw_drawn) pending.append({d.raw, &d.raw_drawn, std::move(raw)});
        if (d.smoothed) {
            QVector<QPointF> smooth =
                smoothing ? prepare(d.smooth_points, d, smooth_buckets) : QVector<QPointF>{};
            if (smooth != d.smooth_drawn)
                pending.append({d.smoothed, &d.smooth_drawn, std::move(smooth)});
            const QPen pen = line_pen(d.line, smoothing, false);
            if (pen != d.raw->pen()) d.raw->setPen(pen);
        }
        d.prepared_version = d.line.version;
        d.prepared_view = view;
        include(d);
    }
    if (!zoomed) update_axes(x_min, x_max, y_min, y_max);
    fit_title();
    for (Pending& p : pending) {
        p.series->replace(p.points);
        *p.drawn = std::move(p.points);
    }
}

void MetricChart::update_axes(double x_min, double x_max, double y_min, double y_max) {
    // Axis ranges snap to whole tick intervals, so while a run grows they change only now and
    // then, and a redraw is mostly the replace() of the growing run's series.
    // As many tick labels as the plot has room for: Qt Charts elides a label that gets less
    // than its height (y) or width (x) to "...".
    const int y_labels = y_label_capacity();
    const int x_labels = x_label_capacity(x_max);
    const std::array<double, 7> request = {
        x_min, x_max, y_min, y_max, m_log_y ? 1.0 : 0.0, double(y_labels), double(x_labels)};
    if (request == m_last_range_request) return;
    m_last_range_request = request;

    m_setting_range = true;
    if (!(x_min <= x_max)) {
        x_min = 0;
        x_max = 1;
    }
    if (x_min > 0 && x_min <= 0.02 * x_max) x_min = 0; // start at step 0, not step 1
    if (x_max - x_min < 1) x_max = x_min + 1;
    const double interval = fitted_interval(x_min, x_max, x_labels, 1.0);
    const double x_lo = std::floor(x_min / interval) * interval;
    const double x_hi = std::ceil(x_max / interval) * interval;
    if (m_x->min() != x_lo || m_x->max() != x_hi || m_x->tickInterval() != interval) {
        // The interval grows before the range does: never a moment with thousands of ticks.
        m_x->setTickInterval(std::max(interval, m_x->tickInterval()));
        m_x->setRange(x_lo, x_hi);
        m_x->setTickInterval(interval);
    }
    if (m_log_y) {
        if (!(y_min <= y_max)) y_min = y_max = 1;
        // One tick per power of the base; over a wide range, ticks every k-th power instead.
        const double base = 10.0;
        double e_lo = std::floor(std::log(y_min) / std::log(base));
        double e_hi = std::ceil(std::log(y_max) / std::log(base));
        if (e_hi <= e_lo) e_hi = e_lo + 1;
        const double k =
            std::max(1.0, std::ceil((e_hi - e_lo) / std::max(1, std::min(10, y_labels - 1))));
        e_lo = std::floor(e_lo / k) * k;
        e_hi = std::ceil(e_hi / k) * k;
        if (m_y_log->base() != std::pow(base, k)) m_y_log->setBase(std::pow(base, k));
        if (m_y_log->min() != std::pow(base, e_lo) || m_y_log->max() != std::pow(base, e_hi))
            m_y_log->setRange(std::pow(base, e_lo), std::pow(base, e_hi));
    } else {
        const AxisWindow w = linear_window(y_min, y_max, m_y_floor, m_y_ceiling, y_labels);
        if (m_y_linear->min() != w.lo || m_y_linear->max() != w.hi ||
            m_y_linear->tickInterval() != w.step) {
            // As on x: the interval grows first, so no intermediate state has thousands of ticks.
            m_y_linear->setTickInterval(std::max(w.step, m_y_linear->tickInterval()));
            m_y_linear->setRange(w.lo, w.hi);
            m_y_linear->setTickInterval(w.step);
        }
    }
    m_setting_range = false;
}

int MetricChart::y_label_capacity() const {
    const QAbstractAxis* axis = m_log_y ? static_cast<QAbstractAxis*>(m_y_log) : m_y_linear;
    const double height = m_chart->plotArea().height();
    return tick_capacity(height >= 20 ? height : m_view->height() - 90,
                         vertical_label_pixels(axis->labelsFont()));
}

int MetricChart::x_label_capacity(double x_max) const {
    const double width = m_chart->plotArea().width();
    // The widest label is about as wide as the largest step number.
    const QString widest = QString::number(static_cast<qint64>(std::max(10.0, x_max * 1.2)));
    return tick_capacity(width >= 20 ? width : m_view->width() - 80,
                         horizontal_label_pixels(m_x->labelsFont(), widest));
}

void MetricChart::on_user_range_change() {
    if (m_setting_range) return;
    m_zoomed = true;
    m_last_range_request.fill(std::nan(""));
    // Keep about five readable ticks in the new window (a fixed interval could mean thousands).
    if (m_x->max() > m_x->min())
        m_x->setTickInterval(
            fitted_interval(m_x->min(), m_x->max(), x_label_capacity(m_x->max()), 1.0));
    // On y the step also stays above the values' own precision, however far the user zooms in.
    if (!m_log_y && m_y_linear->max() > m_y_linear->min()) {
        const double lo = m_y_linear->min(), hi = m_y_linear->max();
        m_y_linear->setTickInterval(std::max(fitted_interval(lo, hi, y_label_capacity(), 0.0),
                                             1e-9 * std::max(std::abs(lo), std::abs(hi))));
    }
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
    QString text = hover_text(drawn.line, point.x());
    if (drawn.smoothed && m_smoothing > 0 && !drawn.smooth_points.isEmpty())
        text +=
            QStringLiteral("<br>smoothed: %1")
                .arg(nearest(drawn.smooth_points, nearest(drawn.line.points, point.x()).x()).y(), 0,
                     'g', 6);
    QToolTip::showText(QCursor::pos(), text, m_view);
}

QString MetricChart::hover_text(const ChartLine& line, double x) {
    if (line.points.isEmpty()) return {};
    const qsizetype i = nearest_index(line.points, x);
    const QPointF& p = line.points[i];
    QString text = QStringLiteral("<b>%1</b><br>step %2<br>%3: %4")
                       .arg(line.name.toHtmlEscaped())
                       .arg(static_cast<qint64>(p.x()))
                       .arg(line.role)
                       .arg(p.y(), 0, 'g', 6);
    if (i < line.notes.size() && !line.notes[i].isEmpty())
        text += QStringLiteral("<br>") + line.notes[i].toHtmlEscaped();
    return text;
}

QString MetricChart::hover_text(int run_id, const QString& role, double x) const {
    auto it = m_drawn.constFind(key(run_id, role));
    return it == m_drawn.constEnd() ? QString() : hover_text(it->line, x);
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

void MetricChart::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() != QEvent::PaletteChange) return;
    apply_palette(m_chart);
    apply_palette(m_y_linear); // one of the two y axes is detached at any time
    apply_palette(m_y_log);
}

void MetricChart::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    m_rescale_timer->start();
}

} // namespace mantissa::ui
