// RunSession: the one place the sequence engine -> data -> Trainer -> weights -> metrics writer ->
// run -> summary is written; front ends only present what it reports.
#include "core/run/run_session.h"

#include <cmath>
#include <exception>

#include "core/error.h"
#include "core/export/weights_export.h"

namespace mantissa {

namespace {

SessionEngine open_engine(RunSessionOptions& options) {
    return SessionEngine(std::move(options.engine), options.experiment.device);
}

} // namespace

RunSession::RunSession(RunSessionOptions options)
    : m_engine(open_engine(options)), m_callbacks(std::move(options.callbacks)),
      m_comm(options.parallel.communicator) {
    if (options.data.data) {
        m_data = options.data.data;
    } else {
        m_owned_data = load_mnist(find_data_dir(options.data.dir));
        m_data = &*m_owned_data;
    }
    m_trainer = std::make_unique<Trainer>(options.experiment, *m_data, backend(), options.parallel);
    if (options.initial_weights) {
        const StartingWeights& w = *options.initial_weights;
        m_trainer->load_weights(w.weights, w.source, w.options);
    }
    if (options.metrics_path.empty() || !is_root()) return;
    try {
        m_metrics = std::make_unique<MetricsJsonlWriter>(options.metrics_path);
    } catch (const Error& error) {
        if (!m_callbacks.on_metrics_error) throw;
        m_callbacks.on_metrics_error(error.what());
        return;
    }
    DataParallelInfo info;
    if (m_comm) {
        info.ranks = m_comm->size();
        info.allreduce_dtype = std::string(dtype_name(options.parallel.allreduce_dtype));
        info.communicator = m_comm->name();
    }
    record([&](MetricsJsonlWriter& w) {
        w.write_header(m_trainer->experiment(), backend().info(), m_trainer->plan(),
                       m_trainer->memory(), m_comm ? &info : nullptr);
    });
}

RunSession::~RunSession() = default;

bool RunSession::is_root() const {
    return !m_comm || m_comm->rank() == 0;
}

// A disk problem ends the run unless the caller asked to hear about it instead: then the file is
// dropped once and training goes on.
template <typename Write>
void RunSession::record(Write&& write) {
    if (!m_metrics) return;
    if (!m_callbacks.on_metrics_error) {
        write(*m_metrics);
        return;
    }
    try {
        write(*m_metrics);
    } catch (const Error& error) {
        m_metrics.reset();
        m_callbacks.on_metrics_error(error.what());
    }
}

RunOutcome RunSession::run(TrainControl& control) {
    if (m_ran) throw Error(ErrorKind::Internal, "RunSession::run: a session runs once");
    m_ran = true;
    TrainerCallbacks callbacks;
    // The caller hears a record first: a callback that throws (a test's injected failure) stops
    // the run before the record is written, as a crash at that point would.
    callbacks.on_step = [this](const StepRecord& r) {
        if (m_callbacks.on_step) m_callbacks.on_step(r);
        record([&](MetricsJsonlWriter& w) {
            w.write_step(r);
            // If another rank dies, mpirun kills this one: what was written must be on disk.
            if (m_comm) w.flush();
        });
    };
    callbacks.on_epoch = [this](const EpochRecord& r) {
        record([&](MetricsJsonlWriter& w) { w.write_epoch(r); }); // flushes
        if (m_callbacks.on_epoch) m_callbacks.on_epoch(r);
    };
    // Histograms cost a forward+backward pass each: taken when someone keeps them.
    if (m_metrics || m_callbacks.on_histogram)
        callbacks.on_histogram = [this](const GradientHistogram& h) {
            record([&](MetricsJsonlWriter& w) { w.write_histogram(h); });
            if (m_callbacks.on_histogram) m_callbacks.on_histogram(h);
        };
    if (m_metrics || m_callbacks.on_quant)
        callbacks.on_quant = [this](const QuantRecord& q) {
            record([&](MetricsJsonlWriter& w) { w.write_quant(q); });
            if (m_callbacks.on_quant) m_callbacks.on_quant(q);
        };
    callbacks.on_log = [this](const std::string& line) {
        record([&](MetricsJsonlWriter& w) { w.write_log(line); });
        if (m_callbacks.on_log) m_callbacks.on_log(line);
    };
    RunOutcome outcome;
    try {
        outcome.summary = m_trainer->run(control, callbacks);
    } catch (const std::exception& error) {
        // The history shows why the run ended; the writer's own failure must not hide this one.
        if (m_metrics) {
            RunSummary failed;
            failed.status = RunStatus::Failed;
            failed.message = dynamic_cast<const Error*>(&error)
                                 ? std::string(error.what())
                                 : std::string("unexpected error: ") + error.what();
            failed.train_loss = failed.train_accuracy = std::nan("");
            failed.val_loss = failed.val_accuracy = std::nan("");
            try {
                m_metrics->write_summary(failed);
            } catch (const std::exception&) {
            }
        }
        throw;
    }
    record([&](MetricsJsonlWriter& w) { w.write_summary(outcome.summary); });
    outcome.model =
        trained_model(*m_trainer, outcome.summary.val_loss, outcome.summary.val_accuracy);
    return outcome;
}

} // namespace mantissa
