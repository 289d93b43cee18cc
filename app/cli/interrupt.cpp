// The handlers behind StopOnInterrupt. They only store to lock-free atomics and write(2), the
// async-signal-safe subset; the training thread notices the stop between steps.
#include "app/cli/interrupt.h"

#include <atomic>
#include <csignal>
#include <unistd.h>

namespace mantissa::cli {

namespace {

static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free &&
                  std::atomic<TrainControl*>::is_always_lock_free,
              "the signal handler may only touch lock-free atomics");

std::atomic<TrainControl*> g_control{nullptr};
std::atomic<int> g_signal{0};
struct sigaction g_previous_int, g_previous_term;

void on_signal(int sig) {
    int none = 0;
    if (!g_signal.compare_exchange_strong(none, sig)) {
        // The second Ctrl-C: the user does not want to wait for the step. Die of the signal.
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    if (TrainControl* control = g_control.load()) control->request_stop();
    static const char message[] =
        "\nmantissa-cli: stopping after this step; the summary and exports are still written "
        "(press Ctrl-C again to quit at once)\n";
    const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
}

} // namespace

StopOnInterrupt::StopOnInterrupt(TrainControl& control) {
    g_signal.store(0);
    g_control.store(&control);
    struct sigaction action = {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART; // a write to the metrics file is not cut short by the signal
    sigaction(SIGINT, &action, &g_previous_int);
    sigaction(SIGTERM, &action, &g_previous_term);
}

StopOnInterrupt::~StopOnInterrupt() {
    sigaction(SIGINT, &g_previous_int, nullptr);
    sigaction(SIGTERM, &g_previous_term, nullptr);
    g_control.store(nullptr);
}

int StopOnInterrupt::signal_received() const {
    return g_signal.load();
}

} // namespace mantissa::cli
