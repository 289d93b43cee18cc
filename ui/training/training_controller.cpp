// TrainingController and TrainingWorker: a RunSession runs on its own QThread and only appends
// value records to a locked buffer, which the UI thread drains every 40 ms and forwards as signals.
#include "ui/training/training_controller.h"

#include <QDir>
#include <QFileInfo>
#include <QMetaObject>
#include <QThread>
#include <QTimer>
#include <cmath>
#include <exception>
#include <mutex>
#include <utility>

#include "core/data/mnist.h"
#include "core/device/device_selection.h"
#include "core/error.h"
#include "core/export/weights_export.h"
#include "core/run/run_session.h"
#include "ui/runs/run_history.h"

namespace mantissa::ui {

namespace {

constexpr int kDrainIntervalMs = 40;

// Something that happened on the worker, in order; steps and epochs travel in their own vectors.
struct PendingEvent {
    enum class Kind { Started, Log, DeviceNotice, Finished, Failed };
    Kind kind = Kind::Log;
    int run_id = -1;
    QString text;         // Started: the device name; Log: the line; Failed: the message
    bool warning = false; // DeviceNotice: for the banner (else the status line)
    MemoryByCategory memory;
    qint64 steps_per_epoch = 0;
    RunSummary summary;
};

QString fixed(double value, int decimals) {
    return QString::number(value, 'f', decimals);
}

QString epoch_line(const EpochRecord& r, int epochs) {
    return QStringLiteral("Epoch %1/%2 · %3 steps · %4 s · loss %5 · acc %6 · val_loss %7 · "
                          "val_acc %8 · loss scale %9 · skipped %10")
        .arg(r.epoch)
        .arg(epochs)
        .arg(r.steps)
        .arg(fixed(r.seconds, 1))
        .arg(fixed(r.loss, 4))
        .arg(fixed(r.accuracy, 4))
        .arg(fixed(r.val_loss, 4))
        .arg(fixed(r.val_accuracy, 4))
        .arg(r.loss_scale, 0, 'g', 10)
        .arg(r.skipped_steps);
}

QString summary_line(const Experiment& e, const RunSummary& s) {
    QString line = QStringLiteral("%1 (%2): %3")
                       .arg(QString::fromStdString(e.name), QString::fromStdString(e.policy),
                            QString::fromLatin1(run_status_name(s.status)));
    if (!std::isnan(s.val_accuracy))
        line += QStringLiteral(" · test accuracy %1% · test loss %2")
                    .arg(fixed(100.0 * s.val_accuracy, 2), fixed(s.val_loss, 4));
    line += QStringLiteral(" · %1 steps · median %2 ms/step · %3 samples/s · %4 skipped steps")
                .arg(s.steps)
                .arg(fixed(s.median_step_ms, 2), fixed(s.samples_per_s, 0))
                .arg(s.skipped_steps);
    return line;
}

} // namespace

// Shared by the controller (UI thread) and the worker: the worker appends, drain() swaps out.
struct PendingMetrics {
    std::mutex mutex;
    QVector<StepRecord> steps;
    QVector<EpochRecord> epochs;
    QVector<GradientHistogram> histograms;
    QVector<QuantRecord> quant;
    QVector<PendingEvent> events;

    void push(PendingEvent event) {
        std::lock_guard lock(mutex);
        events.push_back(std::move(event));
    }
    void log(int run_id, const QString& line) {
        PendingEvent event;
        event.kind = PendingEvent::Kind::Log;
        event.run_id = run_id;
        event.text = line;
        push(std::move(event));
    }
    void device_notice(int run_id, const QString& text, bool warning) {
        PendingEvent event;
        event.kind = PendingEvent::Kind::DeviceNotice;
        event.run_id = run_id;
        event.text = text;
        event.warning = warning;
        push(std::move(event));
    }
};

// Lives on the controller's QThread and owns the RunSession for the length of one run. It never
// touches a widget; everything it learns goes through PendingMetrics. No signals, so no moc.
class TrainingWorker final : public QObject {
public:
    explicit TrainingWorker(std::shared_ptr<PendingMetrics> pending, QObject* parent = nullptr)
        : QObject(parent), m_pending(std::move(pending)) {}

    void run(const Experiment& experiment, int run_id, const std::shared_ptr<TrainControl>& control,
             const QString& metrics_path, const std::shared_ptr<const InitialWeights>& initial);

private:
    void write_weights(const TrainedModel& model, const QString& path, int run_id);
    void finish(int run_id, const RunSummary& summary);
    void fail(int run_id, const QString& message);

    std::shared_ptr<PendingMetrics> m_pending;
    std::unique_ptr<Mnist> m_data; // loaded on the first run, kept for every later one
};

void TrainingWorker::run(const Experiment& experiment, int run_id,
                         const std::shared_ptr<TrainControl>& control, const QString& metrics_path,
                         const std::shared_ptr<const InitialWeights>& initial) {
    PendingMetrics& pending = *m_pending;
    try {
        if (!m_data) {
            const std::string dir = find_data_dir("");
            pending.log(run_id,
                        QStringLiteral("Loading MNIST from %1").arg(QString::fromStdString(dir)));
            m_data = std::make_unique<Mnist>(load_mnist(dir));
        }
        if (control->stop_requested()) {
            RunSummary summary;
            summary.status = RunStatus::Stopped;
            summary.message = "stopped by the user before the first step";
            summary.val_loss = summary.val_accuracy = std::nan("");
            finish(run_id, summary);
            return;
        }
        control->enter_phase(RunPhase::Preparing); // the engine and the plan's compilation
        RunSessionOptions options;
        options.experiment = experiment;
        options.data.data = m_data.get();
        // "auto" may check an unchecked GPU first (seconds): its progress goes to the status
        // line; a fallback to the CPU and any warning go to the banner, even if the plan fails.
        DeviceOpenOptions device_options;
        device_options.progress = [&pending, run_id](const QualificationProgress& p) {
            pending.device_notice(run_id, QString::fromStdString(p.message), false);
        };
        DeviceChoice choice = open_device(experiment.device, device_options);
        if (!choice.note.empty())
            pending.log(run_id,
                        QStringLiteral("note: %1").arg(QString::fromStdString(choice.note)));
        if (choice.fell_back)
            pending.device_notice(run_id, QString::fromStdString(choice.note), true);
        for (const std::string& warning : choice.warnings)
            pending.device_notice(run_id, QString::fromStdString(warning), true);
        options.engine.device = std::move(choice); // the session owns it from here
        if (initial) {
            // Rounding is allowed so weights trained under a mixed policy can continue under pure
            // float16; the log line says where the weights came from.
            options.initial_weights =
                StartingWeights{initial->weights, initial->source.toStdString(),
                                LoadWeightsOptions{.allow_rounding = true}};
        }
        // The run's history file. A disk problem costs the file, never the run: it is logged once
        // and the file dropped, while training and the charts go on.
        options.metrics_path = metrics_path.toStdString();
        RunCallbacks& callbacks = options.callbacks;
        callbacks.on_metrics_error = [&pending, run_id](const std::string& error) {
            pending.log(run_id, QStringLiteral("Run history: %1; this run's metrics are kept in "
                                               "memory only")
                                    .arg(QString::fromStdString(error)));
        };
        // The Log names where a skipped step overflowed (the ledger), for the first
        // kLoggedSkips of a run; the Loss scale chart's markers say it for every one.
        constexpr int kLoggedSkips = 20;
        callbacks.on_step = [&pending, run_id, skips = 0](const StepRecord& step) mutable {
            {
                std::lock_guard lock(pending.mutex);
                pending.steps.push_back(step);
            }
            if (!step.skipped || skips > kLoggedSkips) return;
            pending.log(run_id, ++skips <= kLoggedSkips
                                    ? QString::fromStdString(skipped_step_text(step))
                                    : QStringLiteral("More skipped steps: hover their markers on "
                                                     "the Loss scale chart for where each "
                                                     "overflowed."));
        };
        callbacks.on_epoch = [&pending, &experiment, run_id](const EpochRecord& epoch) {
            {
                std::lock_guard lock(pending.mutex);
                pending.epochs.push_back(epoch);
            }
            pending.log(run_id, epoch_line(epoch, experiment.epochs));
        };
        callbacks.on_histogram = [&pending](const GradientHistogram& histogram) {
            std::lock_guard lock(pending.mutex);
            pending.histograms.push_back(histogram);
        };
        callbacks.on_quant = [&pending](const QuantRecord& record) {
            std::lock_guard lock(pending.mutex);
            pending.quant.push_back(record);
        };
        callbacks.on_log = [&pending, run_id](const std::string& line) {
            pending.log(run_id, QString::fromStdString(line));
        };
        RunSession session(std::move(options));
        if (initial)
            pending.log(run_id, QStringLiteral("Starting from the weights in %1 (converted to the "
                                               "model's variable dtype where it differs)")
                                    .arg(initial->source));
        const QString device = QString::fromStdString(session.backend().info().name);

        PendingEvent started;
        started.kind = PendingEvent::Kind::Started;
        started.run_id = run_id;
        started.text = device;
        started.memory = session.memory();
        started.steps_per_epoch = session.steps_per_epoch();
        pending.push(std::move(started));
        pending.log(run_id, QStringLiteral("Mantissa: %1 (%2) on %3")
                                .arg(QString::fromStdString(experiment.name),
                                     QString::fromStdString(experiment.policy), device));

        const RunOutcome outcome = session.run(*control);
        const RunSummary& summary = outcome.summary;
        if (!metrics_path.isEmpty()) {
            control->enter_phase(RunPhase::Saving);
            write_weights(outcome.model,
                          QFileInfo(metrics_path).dir().filePath(RunHistory::kWeightsFile), run_id);
        }
        pending.log(run_id, summary_line(experiment, summary));
        if (!summary.message.empty() && summary.status != RunStatus::Diverged)
            pending.log(run_id, QString::fromStdString(summary.message));
        finish(run_id, summary);
    } catch (const Error& error) {
        fail(run_id, QString::fromStdString(error.what()));
    } catch (const std::exception& error) {
        fail(run_id,
             QStringLiteral("unexpected error: %1").arg(QString::fromStdString(error.what())));
    } catch (...) {
        fail(run_id, QStringLiteral("unexpected error of an unknown type"));
    }
}

// The run's final weights next to its metrics, in the stored dtype (float32 masters under a mixed
// policy), with the experiment and test metrics in the metadata. A failed write costs the file,
// never the run: it is a log line.
void TrainingWorker::write_weights(const TrainedModel& model, const QString& path, int run_id) {
    try {
        export_weights(model, path.toStdString());
    } catch (const std::exception& error) {
        m_pending->log(run_id, QStringLiteral("Run history: the weights were not saved: %1")
                                   .arg(QString::fromStdString(error.what())));
    }
}

void TrainingWorker::finish(int run_id, const RunSummary& summary) {
    PendingEvent event;
    event.kind = PendingEvent::Kind::Finished;
    event.run_id = run_id;
    event.summary = summary;
    m_pending->push(std::move(event));
}

void TrainingWorker::fail(int run_id, const QString& message) {
    m_pending->log(run_id, QStringLiteral("Run failed: %1").arg(message));
    PendingEvent event;
    event.kind = PendingEvent::Kind::Failed;
    event.run_id = run_id;
    event.text = message;
    m_pending->push(std::move(event));
}

TrainingController::TrainingController(QObject* parent)
    : QObject(parent), m_pending(std::make_shared<PendingMetrics>()) {
    qRegisterMetaType<mantissa::Experiment>();
    qRegisterMetaType<mantissa::StepRecord>();
    qRegisterMetaType<mantissa::EpochRecord>();
    qRegisterMetaType<mantissa::RunSummary>();
    qRegisterMetaType<mantissa::MemoryByCategory>();
    qRegisterMetaType<mantissa::RunPhase>();
    qRegisterMetaType<QVector<mantissa::StepRecord>>();
    qRegisterMetaType<QVector<mantissa::GradientHistogram>>();
    qRegisterMetaType<QVector<mantissa::QuantRecord>>();

    m_thread = new QThread(this);
    m_thread->setObjectName(QStringLiteral("mantissa-training"));
    m_worker = new TrainingWorker(m_pending); // no parent: it moves to m_thread
    m_worker->moveToThread(m_thread);
    m_thread->start();

    m_drain_timer = new QTimer(this);
    m_drain_timer->setInterval(kDrainIntervalMs);
    connect(m_drain_timer, &QTimer::timeout, this, &TrainingController::drain);
}

TrainingController::~TrainingController() {
    if (m_control) {
        m_control->request_stop();
        m_control->set_paused(false);
    }
    m_thread->quit(); // the event loop ends once the current run (if any) has returned
    m_thread->wait();
    delete m_worker; // its thread has finished, so deleting it here is safe
    m_worker = nullptr;
}

void TrainingController::start(const mantissa::Experiment& experiment, int run_id) {
    if (m_running) {
        emit log_line(QStringLiteral("Run %1 is still active; stop it before starting run %2.")
                          .arg(m_run_id)
                          .arg(run_id));
        return;
    }
    m_run_id = run_id;
    m_running = true;
    m_paused = false;
    m_control = std::make_shared<TrainControl>();
    m_phase = RunPhase::Preparing;
    if (m_phase_observer)
        m_control->set_phase_observer(
            [observer = m_phase_observer, run_id](RunPhase phase) { observer(run_id, phase); });
    const QString metrics_path = m_metrics_path ? m_metrics_path(run_id) : QString();
    std::shared_ptr<const InitialWeights> initial = std::exchange(m_initial, nullptr);
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, experiment, run_id, control = m_control, metrics_path, initial] {
            worker->run(experiment, run_id, control, metrics_path, initial);
        },
        Qt::QueuedConnection);
    m_drain_timer->start();
    emit state_changed();
}

void TrainingController::pause() {
    if (!m_running || m_paused || !m_control) return;
    m_paused = true;
    m_control->set_paused(true);
    emit state_changed();
}

void TrainingController::resume() {
    if (!m_running || !m_paused || !m_control) return;
    m_paused = false;
    m_control->set_paused(false);
    emit state_changed();
}

void TrainingController::stop() {
    if (!m_running || !m_control) return;
    m_control->request_stop();
    m_control->set_paused(false);
    if (m_paused) {
        m_paused = false;
        emit state_changed();
    }
}

void TrainingController::drain() {
    QVector<StepRecord> steps;
    QVector<EpochRecord> epochs;
    QVector<GradientHistogram> histograms;
    QVector<QuantRecord> quant;
    QVector<PendingEvent> events;
    {
        std::lock_guard lock(m_pending->mutex);
        steps.swap(m_pending->steps);
        epochs.swap(m_pending->epochs);
        histograms.swap(m_pending->histograms);
        quant.swap(m_pending->quant);
        events.swap(m_pending->events);
    }
    // Steps and epochs come after this drain's start and before its end, as they happened.
    bool flushed = false;
    auto flush = [&] {
        if (flushed) return;
        flushed = true;
        if (!steps.isEmpty()) emit steps_arrived(m_run_id, steps);
        if (!histograms.isEmpty()) emit histograms_arrived(m_run_id, histograms);
        if (!quant.isEmpty()) emit quant_arrived(m_run_id, quant);
        for (const EpochRecord& epoch : std::as_const(epochs)) emit epoch_finished(m_run_id, epoch);
    };
    bool ended = false;
    for (const PendingEvent& event : std::as_const(events)) {
        switch (event.kind) {
        case PendingEvent::Kind::Started:
            emit run_started(event.run_id, event.text, event.memory, event.steps_per_epoch);
            break;
        case PendingEvent::Kind::Log:
            emit log_line(event.text);
            break;
        case PendingEvent::Kind::DeviceNotice:
            emit device_notice(event.run_id, event.text, event.warning);
            break;
        case PendingEvent::Kind::Finished:
        case PendingEvent::Kind::Failed:
            flush();
            // Idle before the signal, so a slot may start the next run straight away.
            m_running = false;
            m_paused = false;
            m_control.reset();
            ended = true;
            if (event.kind == PendingEvent::Kind::Finished)
                emit run_finished(event.run_id, event.summary);
            else
                emit run_failed(event.run_id, event.text);
            emit state_changed();
            break;
        }
    }
    flush();
    // The phase is sampled, not queued: a status line needs where the run is now, and a phase
    // shorter than a drain interval is not worth showing. After the steps, so that their progress
    // line does not overwrite "validating".
    if (m_running && m_control && m_control->phase() != m_phase) {
        m_phase = m_control->phase();
        emit phase_changed(m_run_id, m_phase);
    }
    if (ended && !m_running) m_drain_timer->stop();
}

} // namespace mantissa::ui
