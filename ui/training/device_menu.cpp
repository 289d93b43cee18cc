// DeviceMenu: engine states from core/device, a combo whose unusable entries are disabled, and a
// GPU check run on a QThread whose progress reaches the UI thread as queued calls.
#include "ui/training/device_menu.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QStandardItemModel>
#include <QThread>
#include <QToolButton>

namespace mantissa::ui {

DeviceMenu::DeviceMenu(DeviceOpenOptions options, QWidget* parent)
    : QWidget(parent), m_options(std::move(options)) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    m_combo = new QComboBox;
    // Wide enough for a GPU's name and state; the popup widens to the longest entry, so a long
    // reason never pushes the toolbar's other actions off a 1280-pixel screen.
    m_combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_combo->setMinimumContentsLength(26);
    m_combo->setToolTip("Where to train: the CPU engine emulates every format bit for bit; a GPU "
                        "is used once the CUDA engine has passed its check on it");
    m_check = new QToolButton;
    m_check->setText("Check now");
    m_check->setToolTip("Check the CUDA engine on this GPU: every op case against the CPU engine, "
                        "then a short training run (under 30 s)");
    layout->addWidget(m_combo);
    layout->addWidget(m_check);
    connect(m_combo, &QComboBox::currentIndexChanged, this, [this] {
        update_check_button();
        emit device_changed();
    });
    connect(m_check, &QToolButton::clicked, this, &DeviceMenu::check_now);
    refresh();
    const int index = m_combo->findData(default_id());
    m_combo->setCurrentIndex(index >= 0 ? index : 0);
}

DeviceMenu::~DeviceMenu() {
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

QString DeviceMenu::current_id() const {
    return m_combo->currentData().toString();
}

QString DeviceMenu::default_id() const {
    for (const DeviceState& s : m_states)
        if (s.qualified && s.id != "cpu") return QString::fromStdString(s.id);
    return "cpu";
}

void DeviceMenu::refresh() {
    const QString keep = m_combo->count() ? current_id() : QString();
    m_states = device_states(m_options);
    const QSignalBlocker block(m_combo);
    m_combo->clear();
    auto* model = qobject_cast<QStandardItemModel*>(m_combo->model());
    for (const DeviceState& s : m_states) {
        m_combo->addItem(QString::fromStdString(s.label), QString::fromStdString(s.id));
        const int row = m_combo->count() - 1;
        m_combo->setItemData(row, QString::fromStdString(s.detail), Qt::ToolTipRole);
        if (!s.selectable && model) model->item(row)->setEnabled(false);
    }
    m_combo->view()->setMinimumWidth(m_combo->view()->sizeHintForColumn(0) + 24);
    const int index = keep.isEmpty() ? -1 : m_combo->findData(keep);
    m_combo->setCurrentIndex(index >= 0 ? index : m_combo->findData(default_id()));
    update_check_button();
    m_combo->setToolTip(m_combo->itemData(m_combo->currentIndex(), Qt::ToolTipRole).toString());
}

QString DeviceMenu::select_for_experiment(const QString& device) {
    if (device.isEmpty() || device == "auto") {
        m_combo->setCurrentIndex(m_combo->findData(default_id()));
        return {};
    }
    QString id = device == "cuda" ? "cuda:0" : device;
    const int index = m_combo->findData(id);
    if (index >= 0) {
        m_combo->setCurrentIndex(index);
        return {};
    }
    m_combo->setCurrentIndex(m_combo->findData("cpu"));
    QString why;
    for (const DeviceState& s : m_states)
        if (s.id.empty()) why = QString::fromStdString(s.detail);
    if (why.isEmpty())
        why = QStringLiteral("This machine has %1 CUDA device(s).").arg(m_combo->count() - 1);
    return QStringLiteral("This experiment asks for the device '%1', which this machine cannot "
                          "give. %2 It will train on the CPU engine; pick another device in the "
                          "toolbar to change that.")
        .arg(device, why);
}

void DeviceMenu::update_check_button() {
    bool unqualified_gpu = false;
    for (const DeviceState& s : m_states)
        if (QString::fromStdString(s.id) == current_id() && s.id != "cpu") unqualified_gpu = true;
    m_check->setVisible(unqualified_gpu || m_checking);
    m_check->setEnabled(!m_checking);
    m_check->setText(m_checking ? "Checking…" : "Check now");
}

void DeviceMenu::check_now() {
    if (m_checking || !gpu_selected()) return;
    m_checking = true;
    update_check_button();
    const std::string device = current_id().toStdString();
    DeviceOpenOptions options = m_options;
    // The check runs on its own thread; each progress line is handed to the UI thread.
    options.progress = [this](const QualificationProgress& p) {
        const QString text =
            QString::fromStdString(p.message) +
            (p.total > 0 ? QStringLiteral(" (%1/%2)").arg(p.done).arg(p.total) : QString());
        QMetaObject::invokeMethod(
            this, [this, text] { emit check_progress(text); }, Qt::QueuedConnection);
    };
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
    m_thread = QThread::create([this, device, options] {
        bool passed = false;
        QString message;
        try {
            const QualificationRecord r = qualify_device(device, options);
            passed = r.passed;
            message = passed ? QStringLiteral("The CUDA engine passed its check on %1 (%2 cases, "
                                              "%3 s).")
                                   .arg(QString::fromStdString(r.gpu.name))
                                   .arg(r.cases)
                                   .arg(r.seconds, 0, 'f', 1)
                             : QStringLiteral("The CUDA engine failed its check on %1: %2. "
                                              "Training stays on the CPU engine unless you pick "
                                              "the GPU by name. Details: mantissa-cli selftest")
                                   .arg(QString::fromStdString(r.gpu.name),
                                        QString::fromStdString(r.first_failure));
        } catch (const std::exception& err) {
            message = QStringLiteral("The GPU could not be checked: %1").arg(err.what());
        }
        QMetaObject::invokeMethod(
            this,
            [this, passed, message] {
                m_checking = false;
                refresh();
                emit check_finished(passed, message);
            },
            Qt::QueuedConnection);
    });
    m_thread->start();
}

} // namespace mantissa::ui
