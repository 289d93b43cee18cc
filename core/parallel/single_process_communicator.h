// SingleProcessCommunicator: the one-rank group. Every collective is the identity, so a trainer
// that talks to it behaves exactly like one that has no communicator at all.
#pragma once

#include "core/parallel/communicator.h"

namespace mantissa {

class SingleProcessCommunicator final : public Communicator {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    std::string name() const override { return "single process"; }
    void allreduce_sum(void* data, std::size_t count, DType dtype) override;
    std::int64_t allreduce_max(std::int64_t value) override { return value; }
    void allgather(std::span<const double> mine, std::span<double> all) override;
    void barrier() override {}
    void abort(int exit_code) override { (void)exit_code; }
};

} // namespace mantissa
