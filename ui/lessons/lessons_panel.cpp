// LessonsPanel: renders a lesson as simple HTML (title, a GPU note, paragraphs, the runs with
// their policy and loss scaling, and the points to look at) and enables its Run button.
#include "ui/lessons/lessons_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "core/optim/loss_scale.h"

namespace mantissa::ui {

namespace {

QString html(const std::string& text) {
    return QString::fromStdString(text).toHtmlEscaped();
}

// "mixed_float16 · loss scaling none · adam 0.001 · batch 128 · 300 steps"
QString run_summary(const Experiment& e) {
    QString scale = QString::fromLatin1(loss_scale_mode_name(e.loss_scale.mode));
    if (e.loss_scale.mode == LossScaleMode::Fixed || e.loss_scale.mode == LossScaleMode::Dynamic)
        scale += QStringLiteral(" from %1").arg(e.loss_scale.initial, 0, 'g', 8);
    QString optimizer = QString::fromLatin1(optimizer_type_name(e.optimizer.type));
    if (e.optimizer.convention != OptimizerConvention::Keras) // "rmsprop (tf_keras_2) 0.001"
        optimizer += QStringLiteral(" (%1)").arg(
            QString::fromLatin1(optimizer_convention_name(e.optimizer.convention)));
    QString s = QStringLiteral("%1 · loss scaling %2 · %3 %4 · batch %5")
                    .arg(QString::fromStdString(e.policy), scale, optimizer)
                    .arg(e.optimizer.learning_rate, 0, 'g', 4)
                    .arg(e.batch_size);
    s += e.max_steps > 0 ? QStringLiteral(" · %1 steps").arg(e.max_steps)
                         : QStringLiteral(" · %1 epochs").arg(e.epochs);
    if (e.tf32) s += QStringLiteral(" · TF32");
    return s;
}

} // namespace

LessonsPanel::LessonsPanel(QWidget* parent) : QWidget(parent) {
    m_list = new QListWidget;
    m_list->setObjectName("lesson_list");
    m_list->setMaximumHeight(170);
    m_list->setWordWrap(true); // long titles wrap instead of hiding behind a scroll bar
    // Lay the wrapped rows out again when the dock's width changes: with the default (Fixed) the
    // rows keep heights from an earlier width, and the last lesson was painted above the one
    // before it when the app opened on it.
    m_list->setResizeMode(QListView::Adjust);
    m_list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_text = new QTextBrowser;
    m_text->setObjectName("lesson_text");
    m_text->setOpenExternalLinks(false);
    m_errors = new QLabel;
    m_errors->setWordWrap(true);
    m_errors->setStyleSheet("color: #c0392b");
    m_errors->hide();
    m_run = new QPushButton(tr("Run this lesson"));
    m_run->setObjectName("lesson_run");
    m_run->setEnabled(false);

    m_back = new QPushButton(tr("Back to my runs"));
    m_back->setObjectName("lesson_back");
    m_back->setToolTip(tr("The charts show only this lesson's runs; this brings back the runs "
                          "they showed before the lesson (closing the Lessons panel does too)"));
    m_back->hide();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_list);
    layout->addWidget(m_errors);
    layout->addWidget(m_text, 1);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_run, 1);
    buttons->addWidget(m_back);
    layout->addLayout(buttons);

    connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0 && row != m_current) open_lesson(row);
    });
    connect(m_run, &QPushButton::clicked, this, [this] {
        if (const Lesson* lesson = current_lesson()) emit run_requested(*lesson);
    });
    connect(m_back, &QPushButton::clicked, this, &LessonsPanel::back_requested);
}

void LessonsPanel::set_focused(bool focused) {
    m_back->setVisible(focused);
}

void LessonsPanel::set_lessons(const QVector<Lesson>& lessons, const QStringList& errors) {
    m_lessons = lessons;
    m_current = -1;
    {
        const QSignalBlocker block(m_list);
        m_list->clear();
        for (int i = 0; i < m_lessons.size(); ++i)
            m_list->addItem(QStringLiteral("%1. %2").arg(i + 1).arg(
                QString::fromStdString(m_lessons[i].title)));
    }
    m_errors->setText(errors.join('\n'));
    m_errors->setVisible(!errors.isEmpty());
    m_text->setHtml(tr("<p>Pick a lesson. Opening one loads its experiment into the model and "
                       "settings, and the charts show only the lesson's runs; <b>Run this "
                       "lesson</b> trains them one after the other. <b>Back to my runs</b> (or "
                       "closing this panel) brings back the runs shown before.</p>"));
    m_run->setEnabled(false);
}

void LessonsPanel::set_gpu_available(bool available) {
    m_gpu = available;
    show_current();
}

void LessonsPanel::set_busy(bool busy) {
    m_busy = busy;
    m_run->setEnabled(!m_busy && current_lesson());
}

const Lesson* LessonsPanel::current_lesson() const {
    return m_current >= 0 && m_current < m_lessons.size() ? &m_lessons[m_current] : nullptr;
}

void LessonsPanel::open_lesson(int index) {
    if (index < 0 || index >= m_lessons.size()) return;
    m_current = index;
    {
        const QSignalBlocker block(m_list);
        m_list->setCurrentRow(index);
    }
    show_current();
    emit lesson_opened(m_lessons[index]);
}

QString LessonsPanel::shown_text() const {
    return m_text->toPlainText();
}

void LessonsPanel::show_current() {
    const Lesson* lesson = current_lesson();
    m_run->setEnabled(!m_busy && lesson);
    if (!lesson) return;
    QString out = QStringLiteral("<h3>%1</h3>").arg(html(lesson->title));
    if (lesson->needs_gpu)
        out += m_gpu ? tr("<p><i>This lesson measures the GPU. Pick the GPU in the Device box "
                          "before running it.</i></p>")
                     : tr("<p style='background:#fdf2d0; color:#5a4500; padding:4px'><b>Needs a "
                          "GPU.</b> This machine has none: the runs still train on the CPU and "
                          "the memory chart is exact, but the times are the CPU's, not what a "
                          "GPU shows.</p>");
    for (const std::string& paragraph : lesson->text)
        out += QStringLiteral("<p>%1</p>").arg(html(paragraph));
    out += tr("<p><b>Runs</b> (%1):</p><ol>").arg(lesson->experiments.size());
    for (const LessonExperiment& run : lesson->experiments)
        out += QStringLiteral("<li><b>%1</b><br><small>%2</small></li>")
                   .arg(html(run.label), run_summary(run.experiment).toHtmlEscaped());
    out += QStringLiteral("</ol><p><b>%1</b></p><ul>").arg(tr("Look at"));
    for (const std::string& point : lesson->look_at)
        out += QStringLiteral("<li>%1</li>").arg(html(point));
    out += QStringLiteral("</ul>");
    m_text->setHtml(out);
}

} // namespace mantissa::ui
