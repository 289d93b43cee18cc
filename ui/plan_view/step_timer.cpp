// StepTimer: the worker lambda opens its own engine and data, so a timing shares nothing with a
// training run's worker; results come back through queued calls on this object's thread.
#include "ui/plan_view/step_timer.h"

#include <QMetaObject>
#include <QPointer>
#include <exception>

#include "core/data/mnist.h"
#include "core/data/synthetic_mnist.h"
#include "core/device/device_selection.h"
#include "core/error.h"
#include "core/run/step_profiler.h"

namespace mantissa::ui {

StepTimer::StepTimer(QObject* parent) : QObject(parent) {}

StepTimer::~StepTimer() {
    cancel();
    join();
}

void StepTimer::join() {
    if (m_thread.joinable()) m_thread.join();
}

void StepTimer::cancel() {
    if (m_cancel) m_cancel->store(true);
}

void StepTimer::start(const Experiment& experiment, int steps, int warmup,
                      const std::string& against) {
    if (m_running) return;
    join(); // the previous timing's thread has posted its result and is ending
    m_running = true;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    const QPointer<StepTimer> self(this);
    auto post = [self](auto call) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, call] {
                if (self) call(*self);
            },
            Qt::QueuedConnection);
    };
    m_thread = std::thread([experiment, steps, warmup, against, cancel = m_cancel, post] {
        try {
            DeviceChoice choice = open_device(experiment.device, {});
            TimedStep result;
            result.steps = steps;
            result.warmup = warmup;
            result.note = QString::fromStdString(choice.note);
            Mnist data;
            try {
                data = load_mnist(find_data_dir(""));
            } catch (const Error&) {
                // Step times depend on shapes, not pixels: a stand-in of the same size will do.
                data = synthetic_mnist(60000, 10000);
                result.note += QStringLiteral("%1No MNIST found: timed on synthetic images of "
                                              "the same shape.")
                                   .arg(result.note.isEmpty() ? "" : " ");
            }
            StepProfilerOptions options;
            options.steps = steps;
            options.warmup = warmup;
            options.cancelled = [cancel] { return cancel->load(); };
            // With a policy to time against, two timings: progress counts both.
            const int rounds = against.empty() ? 1 : 2;
            int round = 0;
            options.progress = [post, &round, rounds](int done, int total) {
                const int all = rounds * total, so_far = round * total + done;
                post([so_far, all](StepTimer& t) { emit t.progress(so_far, all); });
            };
            auto cancelled = [post] {
                post([](StepTimer& t) {
                    t.m_running = false;
                    emit t.cancelled();
                });
            };
            std::optional<StepProfile> profile =
                profile_training_step(experiment, *choice.backend, data, options);
            if (!profile) return cancelled();
            result.profile = std::move(*profile);
            if (!against.empty()) {
                // The other policy with its own defaults: a recipe belongs to its policy.
                Experiment other = experiment;
                other.policy = against;
                other.recipe.reset();
                round = 1;
                result.against = profile_training_step(other, *choice.backend, data, options);
                if (!result.against) return cancelled();
                result.against_policy = QString::fromStdString(against);
            }
            result.device = QString::fromStdString(choice.backend->info().name);
            post([result](StepTimer& t) {
                t.m_running = false;
                emit t.finished(result);
            });
        } catch (const std::exception& e) {
            const QString message = QString::fromUtf8(e.what());
            post([message](StepTimer& t) {
                t.m_running = false;
                emit t.failed(message);
            });
        }
    });
}

} // namespace mantissa::ui
