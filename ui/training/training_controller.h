// TrainingController (UI thread) and its worker (a QObject on a QThread that owns a RunSession):
// the worker never touches a widget; it appends value-type records to a mutex-guarded buffer
// that the controller drains every 40 ms and forwards as signals.
#pragma once

#include <QObject>
#include <QString>
#include <QVector>
#include <functional>
#include <memory>

#include "core/io/model_weights.h"
#include "core/train/experiment.h"
#include "core/train/gradient_histogram.h"
#include "core/train/metrics.h"
#include "core/train/quant_record.h"
#include "core/train/train_control.h"

class QThread;
class QTimer;

namespace mantissa::ui {

class TrainingWorker;
struct PendingMetrics;

// Weights a run starts from instead of its random initialisation, and the file they came from.
struct InitialWeights {
    ModelWeights weights;
    QString source;
};

class TrainingController final : public QObject {
    Q_OBJECT

public:
    explicit TrainingController(QObject* parent = nullptr);
    ~TrainingController() override; // stops a running run and joins the thread

    bool is_running() const { return m_running; }
    bool is_paused() const { return m_paused; }
    // Paused, and the worker has finished its step in flight and is waiting between steps.
    bool is_parked() const { return m_paused && m_control && m_control->parked(); }
    int current_run() const { return m_run_id; }
    // Where each run's metrics JSONL goes (the run history's folder); called once as a run starts.
    // An empty path, or no provider, keeps the metrics in memory only. The worker writes the
    // file, so the UI thread never waits on the disk.
    void set_metrics_path_provider(std::function<QString(int run_id)> provider) {
        m_metrics_path = std::move(provider);
    }
    // The next start() loads these into its run before the first step (then forgets them), so
    // imported weights continue training. A mismatch with the model fails that run, naming the
    // tensor.
    void set_initial_weights(std::shared_ptr<const InitialWeights> weights) {
        m_initial = std::move(weights);
    }
    // Called on the worker thread as each later run enters a phase, inside that phase (see
    // TrainControl::set_phase_observer): tests hold a run there to stop it at a known point.
    void set_phase_observer(std::function<void(int run_id, mantissa::RunPhase)> observer) {
        m_phase_observer = std::move(observer);
    }

public slots:
    // Starts `experiment` as run `run_id` on the worker thread. MNIST is loaded once and kept.
    // Ignored (with a log line) while another run is active.
    void start(const mantissa::Experiment& experiment, int run_id);
    void pause();
    void resume();
    void stop();
    // Forwards what the worker has reported so far (the 40 ms timer calls this too).
    void drain();

signals:
    void run_started(int run_id, const QString& device, const mantissa::MemoryByCategory& memory,
                     qint64 steps_per_epoch);
    void steps_arrived(int run_id, const QVector<mantissa::StepRecord>& steps);
    void epoch_finished(int run_id, const mantissa::EpochRecord& epoch);
    // Gradient histograms (experiment.histogram_every), oldest first.
    void histograms_arrived(int run_id, const QVector<mantissa::GradientHistogram>& histograms);
    // Quantised policies' quant records (experiment.quant_every), oldest first.
    void quant_arrived(int run_id, const QVector<mantissa::QuantRecord>& records);
    void run_finished(int run_id, const mantissa::RunSummary& summary);
    // Any error (bad stack, missing data, out of memory): a readable message; the app stays usable.
    void run_failed(int run_id, const QString& message);
    void log_line(const QString& line);
    // The engine's choice: a GPU check's progress (warning false: for the status line), or a
    // fallback to the CPU / an unchecked GPU used by name (warning true: for the banner).
    void device_notice(int run_id, const QString& text, bool warning);
    void state_changed(); // running / paused changed
    // The running run moved to another phase (sampled at each drain, so brief phases may be
    // missed): the status line says "validating" or "saving the weights".
    void phase_changed(int run_id, mantissa::RunPhase phase);

private:
    QThread* m_thread = nullptr;
    TrainingWorker* m_worker = nullptr;
    QTimer* m_drain_timer = nullptr;
    std::shared_ptr<PendingMetrics> m_pending;
    std::shared_ptr<TrainControl> m_control; // fresh per run; shared with the worker
    std::function<QString(int)> m_metrics_path;
    std::shared_ptr<const InitialWeights> m_initial;
    std::function<void(int, RunPhase)> m_phase_observer;
    RunPhase m_phase = RunPhase::Preparing; // as last reported by phase_changed
    bool m_running = false;
    bool m_paused = false;
    int m_run_id = -1;
};

} // namespace mantissa::ui

Q_DECLARE_METATYPE(mantissa::Experiment)
Q_DECLARE_METATYPE(mantissa::StepRecord)
Q_DECLARE_METATYPE(mantissa::EpochRecord)
Q_DECLARE_METATYPE(mantissa::RunSummary)
Q_DECLARE_METATYPE(mantissa::MemoryByCategory)
Q_DECLARE_METATYPE(mantissa::GradientHistogram)
Q_DECLARE_METATYPE(mantissa::QuantRecord)
Q_DECLARE_METATYPE(mantissa::RunPhase)
