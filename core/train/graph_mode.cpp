// The graph flag's decision and message (see graph_mode.h).
#include "core/train/graph_mode.h"

namespace mantissa {

GraphMode graph_mode(bool flag, bool engine_captures, const std::string& engine_note,
                     bool has_dropout, bool stochastic_rounding) {
    GraphMode mode;
    if (!flag) return mode;
    if (!engine_captures) {
        mode.note = engine_note;
        return mode;
    }
    if (has_dropout) {
        mode.note = "graph: the model has dropout, whose masks change every step; the experiment's "
                    "graph flag has no effect (steps are enqueued eagerly)";
        return mode;
    }
    if (stochastic_rounding) {
        mode.note = "graph: the policy rounds stochastically, with a new random stream every step; "
                    "the experiment's graph flag has no effect (steps are enqueued eagerly)";
        return mode;
    }
    mode.capture = true;
    mode.note = "graph: a training step is captured once per batch size (CUDA Graphs; the batch's "
                "position is read on the device) and replayed; the first step runs eagerly";
    return mode;
}

} // namespace mantissa
