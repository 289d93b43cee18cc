// Data-parallel training without MPI: the batch shards, the one-process communicator, and two
// Trainers in two threads joined by an in-process communicator, against one Trainer on the same
// global batch. Runs in every build, sanitizers included (tst_data_parallel needs mpirun).

#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/mnist.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/parallel/shard.h"
#include "core/parallel/single_process_communicator.h"
#include "core/plan/compile.h"
#include "core/train/gradient_sync.h"
#include "core/train/trainer.h"
#include "tests/test_support.h"
#include "tests/unit/check_throws.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {

// The synthetic stand-in: small enough that five two-rank runs, each with its evaluation, take a
// couple of seconds even under the sanitizers.
const Mnist& mnist() {
    static const Mnist data = synthetic_mnist(4096, 512);
    return data;
}

// Ranks that are threads of this process: every collective deposits each rank's bytes, waits for
// all of them, and reads them all back, so every rank computes the same result in rank order.
class LoopbackGroup {
public:
    explicit LoopbackGroup(int size) : m_size(size), m_slots(static_cast<std::size_t>(size)) {}
    int size() const { return m_size; }

    std::vector<std::vector<unsigned char>> exchange(int rank, const void* data,
                                                     std::size_t bytes) {
        std::unique_lock lock(m_mutex);
        const auto* p = static_cast<const unsigned char*>(data);
        m_slots[static_cast<std::size_t>(rank)].assign(p, p + bytes);
        barrier(lock);
        std::vector<std::vector<unsigned char>> all = m_slots;
        barrier(lock); // nobody overwrites a slot before every rank has read it
        return all;
    }

private:
    void barrier(std::unique_lock<std::mutex>& lock) {
        const long generation = m_generation;
        if (++m_arrived == m_size) {
            m_arrived = 0;
            ++m_generation;
            m_cv.notify_all();
        } else {
            m_cv.wait(lock, [&] { return m_generation != generation; });
        }
    }

    int m_size;
    std::vector<std::vector<unsigned char>> m_slots;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    int m_arrived = 0;
    long m_generation = 0;
};

// `device`: reports reduces_on_device(), so GradientSync takes its NCCL path (engine casts, a
// bucket, the found-inf MAX in place); the CPU engine's memory is host memory, so it still runs.
class LoopbackCommunicator final : public Communicator {
public:
    LoopbackCommunicator(LoopbackGroup& group, int rank, bool device = false)
        : m_group(group), m_rank(rank), m_device(device) {}
    bool reduces_on_device() const override { return m_device; }
    int rank() const override { return m_rank; }
    int size() const override { return m_group.size(); }
    std::string name() const override { return "loopback"; }

    // Like the MPI sum ops: float32 sums (float64 for float64), rounded to `dtype` after each add.
    void allreduce_sum(void* data, std::size_t count, DType dtype) override {
        const auto all = m_group.exchange(m_rank, data, count * dtype_size(dtype));
        if (dtype == DType::Float64) {
            std::vector<double> sum(count), next(count);
            std::memcpy(sum.data(), all[0].data(), count * sizeof(double));
            for (std::size_t r = 1; r < all.size(); ++r) {
                std::memcpy(next.data(), all[r].data(), count * sizeof(double));
                for (std::size_t i = 0; i < count; ++i) sum[i] += next[i];
            }
            std::memcpy(data, sum.data(), count * sizeof(double));
            return;
        }
        std::vector<float> sum(count), next(count);
        convert_to_float(all[0].data(), dtype, sum.data(), count);
        for (std::size_t r = 1; r < all.size(); ++r) {
            convert_to_float(all[r].data(), dtype, next.data(), count);
            for (std::size_t i = 0; i < count; ++i) sum[i] += next[i];
            round_in_place(sum.data(), count, dtype);
        }
        convert_from_float(sum.data(), data, dtype, count);
    }
    std::int64_t allreduce_max(std::int64_t value) override {
        std::int64_t best = value;
        for (const auto& v : m_group.exchange(m_rank, &value, sizeof value)) {
            std::int64_t x = 0;
            std::memcpy(&x, v.data(), sizeof x);
            best = std::max(best, x);
        }
        return best;
    }
    void allgather(std::span<const double> mine, std::span<double> all) override {
        const auto deposits = m_group.exchange(m_rank, mine.data(), mine.size_bytes());
        for (std::size_t r = 0; r < deposits.size(); ++r)
            std::memcpy(all.data() + r * mine.size(), deposits[r].data(), mine.size_bytes());
    }
    void barrier() override { m_group.exchange(m_rank, nullptr, 0); }
    void abort(int) override {}

private:
    LoopbackGroup& m_group;
    int m_rank;
    bool m_device;
};

Experiment experiment(const char* policy, std::int64_t steps) {
    Experiment e;
    e.name = "mlp-small";
    e.model = mlp_small();
    e.policy = policy;
    e.optimizer = optimizer_defaults(OptimizerType::RMSprop);
    e.batch_size = 128;
    e.epochs = 1;
    e.max_steps = steps;
    e.device = "cpu";
    e.histogram_every = 0;
    return e;
}

std::vector<StepRecord> train(const Experiment& e, const DataParallelOptions& options = {}) {
    CpuBackend backend;
    Trainer trainer(e, mnist(), backend, options);
    TrainControl control;
    std::vector<StepRecord> steps;
    TrainerCallbacks callbacks;
    callbacks.on_step = [&](const StepRecord& r) { steps.push_back(r); };
    trainer.run(control, callbacks);
    return steps;
}

// Two ranks in two threads; returns each rank's step records.
std::vector<std::vector<StepRecord>> train_two_ranks(const Experiment& e, DType wire,
                                                     int inject_rank = -1,
                                                     std::int64_t inject_step = 0,
                                                     bool device_path = false) {
    mnist(); // load once, before the threads
    LoopbackGroup group(2);
    std::vector<std::vector<StepRecord>> out(2);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < 2; ++rank)
        threads.emplace_back([&, rank] {
            LoopbackCommunicator comm(group, rank, device_path);
            DataParallelOptions options;
            options.communicator = &comm;
            options.allreduce_dtype = wire;
            options.inject_nonfinite_rank = inject_rank;
            options.inject_nonfinite_step = inject_step;
            out[static_cast<std::size_t>(rank)] = train(e, options);
        });
    for (std::thread& t : threads) t.join();
    return out;
}

} // namespace

class TestParallel {
public:
    void shardsSplitTheGlobalBatch() {
        // A full batch of 128 on 2 ranks: rows 0-63 and 64-127, half the mean each.
        const BatchShard a = batch_shard(256, 128, 64, 0), b = batch_shard(256, 128, 64, 1);
        CHECK_EQ(a.offset, std::int64_t(256));
        CHECK_EQ(a.count, std::int64_t(64));
        CHECK_EQ(b.offset, std::int64_t(320));
        CHECK_EQ(b.count, std::int64_t(64));
        CHECK_EQ(a.weight, 0.5);
        CHECK_EQ(b.weight, 0.5);
        // The short last batch of an epoch (96 rows) on 4 ranks of 32: the last rank has none,
        // keeps an in-range offset, and the weights still add up to one.
        double total = 0;
        for (int r = 0; r < 4; ++r) {
            const BatchShard s = batch_shard(59904, 96, 32, r);
            CHECK_EQ(s.count, r < 3 ? std::int64_t(32) : std::int64_t(0));
            CHECK_EQ(s.offset, r < 3 ? 59904 + 32 * r : std::int64_t(59904));
            total += s.weight;
        }
        CHECK_EQ(total, 1.0);
    }

    void batchThatDoesNotDivideNamesTheField() {
        CHECK_EQ(local_batch_size(128, 2), std::int64_t(64));
        try {
            local_batch_size(127, 2);
            FAIL_TEST("no error");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Config);
            CHECK_MSG(
                std::string(e.what()).starts_with("batch_size: 127 does not divide by the 2 ranks"),
                e.what());
        }
        // The Trainer checks it before compiling anything.
        LoopbackGroup group(2);
        LoopbackCommunicator comm(group, 0);
        DataParallelOptions options;
        options.communicator = &comm;
        Experiment e = experiment("float32", 1);
        e.batch_size = 127;
        CpuBackend backend;
        CHECK_THROWS(Error, Trainer(e, mnist(), backend, options));
    }

    // Data-parallel plans keep every gradient in its variable's dtype (the Trainer compiles them
    // with reduce_gradients); a mixed plan compiled without it leaves its gradients in float16,
    // and GradientSync refuses to reduce them there, naming the gradient.
    void gradientSyncRefusesCompute16BitGradients() {
        Experiment e = experiment("mixed_float16", 1);
        Model model(e.model, policy_from_name("mixed_float16"));
        CompileOptions options;
        options.policy = policy_from_name("mixed_float16");
        options.batch_size = 64;
        CpuBackend backend;
        LoopbackGroup group(2);
        LoopbackCommunicator comm(group, 0);
        const auto widened = compile(model, options, backend);
        try {
            GradientSync sync(*widened, comm, DType::Float32);
            FAIL_TEST("reduced float16 gradients");
        } catch (const Error& err) {
            CHECK_EQ(err.kind(), ErrorKind::Internal);
            CHECK_MSG(std::string(err.what()).find("reduce_gradients") != std::string::npos,
                      err.what());
        }
        options.reduce_gradients = true;
        const auto kept = compile(model, options, backend);
        GradientSync sync(*kept, comm, DType::Float32); // float32 gradients: accepted
    }

    void singleProcessCommunicatorIsTheIdentity() {
        SingleProcessCommunicator one;
        float values[3] = {1.5f, -2.0f, 3.25f};
        one.allreduce_sum(values, 3, DType::Float32);
        CHECK_EQ(values[2], 3.25f);
        CHECK_EQ(one.allreduce_max(7), std::int64_t(7));
        const double mine[2] = {4, 5};
        double all[2] = {};
        one.allgather(mine, all);
        CHECK_EQ(all[1], 5.0);
        CHECK_THROWS(Error, one.allreduce_sum(values, 3, DType::Int32));
    }

    // Two ranks of 64 rows against one process of 128 (see tst_data_parallel for the tolerance).
    void twoRanksMatchOneProcess() {
        const Experiment e = experiment("float32", 20);
        const auto one = train(e);
        const auto ranks = train_two_ranks(e, DType::Float32);
        CHECK_EQ(one.size(), std::size_t(20));
        for (const auto& steps : ranks) {
            CHECK_EQ(steps.size(), one.size());
            for (std::size_t i = 0; i < one.size(); ++i) {
                CHECK_MSG(std::abs(steps[i].loss - one[i].loss) <= 1e-4 * std::abs(one[i].loss),
                          "step " + std::to_string(i + 1) + ": " + describe_value(steps[i].loss) +
                              " vs " + describe_value(one[i].loss));
                CHECK_EQ(steps[i].ranks, 2);
                CHECK_EQ(steps[i].allreduce_bytes, std::int64_t(4 * 118282));
            }
        }
        // Both ranks report the same global numbers.
        for (std::size_t i = 0; i < one.size(); ++i) CHECK_EQ(ranks[0][i].loss, ranks[1][i].loss);
    }

    // The short last batch of an epoch leaves the last rank no rows: 4096 = 4 x 1000 + 96, so
    // with 2 ranks of 500 the fifth batch gives rank 0 96 rows and rank 1 none. That rank still
    // takes part in the allreduce (with zero weight) and the run matches one process.
    void rankWithNoRowsOfTheLastBatch() {
        Experiment e = experiment("float32", 0);
        e.batch_size = 1000;
        const auto one = train(e);
        const auto ranks = train_two_ranks(e, DType::Float32);
        CHECK_EQ(one.size(), std::size_t(5));
        for (const auto& steps : ranks) {
            CHECK_EQ(steps.size(), one.size());
            for (std::size_t i = 0; i < one.size(); ++i)
                CHECK_MSG(std::abs(steps[i].loss - one[i].loss) <= 1e-4 * std::abs(one[i].loss),
                          "step " + std::to_string(i + 1) + ": " + describe_value(steps[i].loss) +
                              " vs " + describe_value(one[i].loss));
        }
    }

    void bfloat16WireHalvesTheBytes() {
        const auto ranks = train_two_ranks(experiment("float32", 5), DType::BFloat16);
        CHECK_EQ(ranks[0].back().allreduce_bytes, std::int64_t(2 * 118282));
    }

    // Rank 1 alone sees an inf gradient at step 3: both ranks skip it and halve the scale.
    void nonFiniteOnOneRankSkipsEverywhere() {
        const auto ranks = train_two_ranks(experiment("mixed_float16", 5), DType::Float32, 1, 3);
        for (const auto& steps : ranks) {
            CHECK_EQ(steps.size(), std::size_t(5));
            for (const StepRecord& s : steps) {
                CHECK_EQ(s.skipped, s.step == 3);
                CHECK_EQ(s.rank_skipped, std::vector<bool>({s.step == 3, s.step == 3}));
            }
            CHECK_EQ(steps[2].loss_scale, 32768.0);
            CHECK_EQ(steps[3].loss_scale, 16384.0);
        }
    }

    // The NCCL path's GradientSync (no host read inside the step: the loss-scale weighting as a
    // 1x1 float64 GEMM, casts into one bucket, found_inf MAXed in place) on the CPU engine gives
    // the host path's numbers exactly, for every wire dtype, including the short last batch.
    void devicePathMatchesHostPath_data() {
        add_column<int>("wire");
        new_row("float32") << static_cast<int>(DType::Float32);
        new_row("bfloat16") << static_cast<int>(DType::BFloat16);
        new_row("float16") << static_cast<int>(DType::Float16);
    }
    void devicePathMatchesHostPath() {
        FETCH(int, wire);
        Experiment e = experiment("mixed_float16", 0);
        // 4096 = 2 x 1600 + 896: the third batch gives rank 0 800 rows and rank 1 96, so the
        // weights (800/896, 96/896) are not powers of two.
        e.batch_size = 1600;
        e.max_steps = 0;
        const auto host = train_two_ranks(e, static_cast<DType>(wire));
        const auto device = train_two_ranks(e, static_cast<DType>(wire), -1, 0, true);
        CHECK_EQ(host[0].size(), std::size_t(3));
        for (int r = 0; r < 2; ++r) {
            const auto& a = host[static_cast<std::size_t>(r)];
            const auto& b = device[static_cast<std::size_t>(r)];
            CHECK_EQ(b.size(), a.size());
            for (std::size_t i = 0; i < a.size(); ++i) {
                CHECK_MSG(b[i].loss == a[i].loss,
                          "rank " + std::to_string(r) + " step " + std::to_string(i + 1) + ": " +
                              describe_value(b[i].loss) + " vs " + describe_value(a[i].loss));
                CHECK_EQ(b[i].loss_scale, a[i].loss_scale);
                CHECK_EQ(b[i].skipped, a[i].skipped);
                CHECK_EQ(b[i].allreduce_bytes, a[i].allreduce_bytes);
            }
        }
    }

    // The found-inf MAX on the device path: rank 1's injected inf makes both ranks skip step 3.
    void devicePathSkipsEverywhere() {
        const auto ranks =
            train_two_ranks(experiment("mixed_float16", 5), DType::Float32, 1, 3, true);
        for (const auto& steps : ranks) {
            CHECK_EQ(steps.size(), std::size_t(5));
            for (const StepRecord& s : steps)
                CHECK_EQ(s.rank_skipped, std::vector<bool>({s.step == 3, s.step == 3}));
            CHECK_EQ(steps[3].loss_scale, 16384.0);
        }
    }

    // The default broadcast (through allgather): how the ncclUniqueId reaches every rank.
    void broadcastBytesCopiesTheRootsBytes() {
        LoopbackGroup group(2);
        std::vector<std::vector<unsigned char>> got(2);
        std::vector<std::thread> threads;
        for (int rank = 0; rank < 2; ++rank)
            threads.emplace_back([&, rank] {
                LoopbackCommunicator comm(group, rank);
                std::vector<unsigned char> bytes(128); // sizeof(ncclUniqueId)
                for (std::size_t i = 0; i < bytes.size(); ++i)
                    bytes[i] = static_cast<unsigned char>(rank == 1 ? 255 - i * 7 : 0);
                comm.broadcast_bytes(bytes.data(), bytes.size(), 1);
                got[static_cast<std::size_t>(rank)] = bytes;
            });
        for (std::thread& t : threads) t.join();
        for (const auto& bytes : got)
            for (std::size_t i = 0; i < bytes.size(); ++i)
                CHECK_EQ(bytes[i], static_cast<unsigned char>(255 - i * 7));
    }
};

MANTISSA_TEST_MAIN(TestParallel, shardsSplitTheGlobalBatch, batchThatDoesNotDivideNamesTheField,
                   gradientSyncRefusesCompute16BitGradients, singleProcessCommunicatorIsTheIdentity,
                   twoRanksMatchOneProcess, rankWithNoRowsOfTheLastBatch,
                   bfloat16WireHalvesTheBytes, nonFiniteOnOneRankSkipsEverywhere,
                   devicePathMatchesHostPath, devicePathSkipsEverywhere,
                   broadcastBytesCopiesTheRootsBytes)
