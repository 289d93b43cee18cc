// NCCL communicator. Collectives on device memory are enqueued on the CUDA engine's stream and
// never waited for here; a watchdog thread polls NCCL's asynchronous error and each collective's
// completion event, so a dead peer ends the run with an error instead of a hang.
#include "core/parallel/nccl_communicator.h"

#include <string>
#include <utility>

#include "core/error.h"

#ifdef MANTISSA_HAVE_NCCL
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <cuda_runtime.h>
#include <nccl.h>

#include "core/backend/cuda/cuda_backend.h"
#include "core/parallel/nccl_rank.h"
#endif

namespace mantissa {

#ifndef MANTISSA_HAVE_NCCL

bool nccl_built_in() {
    return false;
}

std::unique_ptr<Communicator> make_nccl_communicator(std::unique_ptr<Communicator>& host,
                                                     Backend& engine) {
    (void)host;
    (void)engine;
    throw Error(ErrorKind::Config,
                "this build has no NCCL: rebuild on a machine with the CUDA toolkit, NCCL "
                "(nccl.h and libnccl.so; -DNCCL_ROOT=<prefix> if CMake does not find them) and "
                "Open MPI, or train the ranks with --device cpu");
}

#else

namespace {

static_assert(static_cast<int>(NcclWireType::Int32) == ncclInt32);
static_assert(static_cast<int>(NcclWireType::Float16) == ncclFloat16);
static_assert(static_cast<int>(NcclWireType::Float32) == ncclFloat32);
static_assert(static_cast<int>(NcclWireType::Float64) == ncclFloat64);
static_assert(static_cast<int>(NcclWireType::BFloat16) == ncclBfloat16);

double timeout_seconds() {
    if (const char* text = std::getenv("MANTISSA_NCCL_TIMEOUT_S")) {
        char* end = nullptr;
        const double value = std::strtod(text, &end);
        if (end != text && *end == '\0' && value > 0) return value;
    }
    return 300.0;
}

class NcclCommunicator final : public Communicator {
public:
    // Takes `host` only once NCCL has started: on failure the caller still owns it and can end
    // every rank through it (a half-started NCCL job cannot be left alone).
    NcclCommunicator(std::unique_ptr<Communicator>& host, CudaBackend& engine)
        : m_rank(host->rank()), m_size(host->size()),
          m_stream(static_cast<cudaStream_t>(engine.native_stream())),
          m_device(engine.device_index()), m_timeout(timeout_seconds()) {
        check_cuda(cudaSetDevice(m_device), "cudaSetDevice");
        ncclUniqueId id{};
        if (m_rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
        host->broadcast_bytes(&id, sizeof id, 0);
        check(ncclCommInitRank(&m_comm, m_size, id, m_rank), "ncclCommInitRank");
        m_host = std::move(host);
        m_watchdog = std::thread([this] { watch(); });
    }

    ~NcclCommunicator() override {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        if (m_watchdog.joinable()) m_watchdog.join();
        cudaSetDevice(m_device);
        for (const Pending& p : m_pending) cudaEventDestroy(p.event);
        for (cudaEvent_t e : m_free_events) cudaEventDestroy(e);
        if (m_comm) {
            if (m_aborted) return; // ncclCommAbort already freed it
            ncclCommDestroy(m_comm);
        }
    }

    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    std::string name() const override {
        int version = 0;
        ncclGetVersion(&version);
        // NCCL_VERSION_CODE is major * 10000 + minor * 100 + patch since 2.9.
        const std::string text = std::to_string(version / 10000) + "." +
                                 std::to_string(version / 100 % 100) + "." +
                                 std::to_string(version % 100);
        return "NCCL " + text + " on cuda:" + std::to_string(m_device) + ", started by " +
               m_host->name();
    }

    bool reduces_on_device() const override { return true; }

    // `data` is device memory on this rank's GPU; enqueued on the engine's stream, not waited for.
    void allreduce_sum(void* data, std::size_t count, DType dtype) override {
        throw_if_failed();
        const auto type = static_cast<ncclDataType_t>(nccl_wire_type(dtype));
        check(ncclAllReduce(data, data, count, type, ncclSum, m_comm, m_stream),
              "ncclAllReduce (gradients, sum)");
        watch_completion("the gradient allreduce");
    }

    void allreduce_max_in_place(std::int32_t* data, std::size_t count) override {
        throw_if_failed();
        check(ncclAllReduce(data, data, count, ncclInt32, ncclMax, m_comm, m_stream),
              "ncclAllReduce (found-inf, max)");
        watch_completion("the found-inf max");
    }

    // Host values (the stop request, the step records) travel over MPI, outside the step.
    std::int64_t allreduce_max(std::int64_t value) override {
        throw_if_failed();
        return m_host->allreduce_max(value);
    }
    void allgather(std::span<const double> mine, std::span<double> all) override {
        throw_if_failed();
        m_host->allgather(mine, all);
    }
    void broadcast_bytes(void* data, std::size_t bytes, int root) override {
        throw_if_failed();
        m_host->broadcast_bytes(data, bytes, root);
    }
    void barrier() override {
        throw_if_failed();
        m_host->barrier();
    }
    void abort(int exit_code) override { m_host->abort(exit_code); }

private:
    struct Pending {
        cudaEvent_t event = nullptr;
        std::chrono::steady_clock::time_point since;
        const char* what = "";
    };

    std::string where() const {
        return "NCCL on rank " + std::to_string(m_rank) + " of " + std::to_string(m_size) +
               " (cuda:" + std::to_string(m_device) + ")";
    }

    void check(ncclResult_t result, const char* call) const {
        if (result == ncclSuccess) return;
        std::string detail = ncclGetErrorString(result);
        if (m_comm) {
            const char* last = ncclGetLastError(m_comm);
            if (last && *last) detail += " (" + std::string(last) + ")";
        }
        std::string advice;
        if (result == ncclSystemError || result == ncclRemoteError)
            advice = ". A peer rank probably failed or the network between the ranks did; see "
                     "the other ranks' errors in mpirun's output, or set NCCL_DEBUG=WARN";
        else if (result == ncclUnhandledCudaError)
            advice = ". Check that each rank has its own GPU (nvidia-smi) and the driver "
                     "supports this CUDA toolkit";
        else
            advice = ". Rerun with NCCL_DEBUG=INFO for NCCL's own account";
        throw Error(ErrorKind::Device, where() + ": " + call + " failed: " + detail + advice);
    }

    void check_cuda(cudaError_t result, const char* call) const {
        if (result == cudaSuccess) return;
        throw Error(ErrorKind::Device,
                    where() + ": " + call + " failed: " + cudaGetErrorString(result));
    }

    void throw_if_failed() {
        std::lock_guard lock(m_mutex);
        if (!m_failure.empty()) throw Error(ErrorKind::Device, m_failure);
    }

    // Records an event after the collective just enqueued; the watchdog checks it completes.
    void watch_completion(const char* what) {
        std::lock_guard lock(m_mutex);
        cudaEvent_t event = nullptr;
        if (!m_free_events.empty()) {
            event = m_free_events.back();
            m_free_events.pop_back();
        } else {
            check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                       "cudaEventCreateWithFlags");
        }
        check_cuda(cudaEventRecord(event, m_stream), "cudaEventRecord");
        m_pending.push_back({event, std::chrono::steady_clock::now(), what});
    }

    // The watchdog: every 100 ms, NCCL's asynchronous error and the oldest unfinished collective.
    // On a failure it aborts the NCCL communicator (its kernels return, so the training thread
    // blocked on the stream wakes up) and leaves the message for that thread's next call.
    void watch() {
        cudaSetDevice(m_device);
        std::unique_lock lock(m_mutex);
        while (!m_stop) {
            m_wake.wait_for(lock, std::chrono::milliseconds(100));
            if (m_stop || m_aborted) continue;
            std::string failure;
            ncclResult_t async = ncclSuccess;
            if (ncclCommGetAsyncError(m_comm, &async) == ncclSuccess && async != ncclSuccess &&
                async != ncclInProgress)
                failure = where() + ": NCCL reported " + ncclGetErrorString(async) +
                          " while the step ran; a peer rank probably died (see its error above "
                          "in mpirun's output)";
            while (failure.empty() && !m_pending.empty()) {
                Pending& oldest = m_pending.front();
                const cudaError_t state = cudaEventQuery(oldest.event);
                if (state == cudaSuccess) {
                    m_free_events.push_back(oldest.event);
                    m_pending.pop_front();
                    continue;
                }
                if (state != cudaErrorNotReady) {
                    failure = where() + ": " + oldest.what +
                              " failed on the GPU: " + cudaGetErrorString(state);
                } else {
                    const double waited = std::chrono::duration<double>(
                                              std::chrono::steady_clock::now() - oldest.since)
                                              .count();
                    if (waited > m_timeout)
                        failure = where() + ": " + oldest.what + " has not finished after " +
                                  std::to_string(static_cast<long>(waited)) +
                                  " s: a peer rank died or hangs. Every rank stops; rerun (set "
                                  "MANTISSA_NCCL_TIMEOUT_S to wait longer for slow peers)";
                }
                break;
            }
            if (failure.empty()) continue;
            m_failure = failure;
            m_aborted = true;
            ncclCommAbort(m_comm);
        }
    }

    int m_rank = 0, m_size = 1;
    std::unique_ptr<Communicator> m_host; // MPI
    cudaStream_t m_stream = nullptr;
    int m_device = 0;
    double m_timeout = 300.0;
    ncclComm_t m_comm = nullptr;

    std::mutex m_mutex; // guards everything below
    std::condition_variable m_wake;
    std::deque<Pending> m_pending;
    std::vector<cudaEvent_t> m_free_events;
    std::string m_failure;
    bool m_aborted = false;
    bool m_stop = false;
    std::thread m_watchdog;
};

} // namespace

bool nccl_built_in() {
    return true;
}

std::unique_ptr<Communicator> make_nccl_communicator(std::unique_ptr<Communicator>& host,
                                                     Backend& engine) {
    auto* cuda = dynamic_cast<CudaBackend*>(&engine);
    if (!cuda)
        throw Error(ErrorKind::Config, "NCCL ranks train on the CUDA engine, not on '" +
                                           engine.info().id +
                                           "'; use --device cuda, or --device cpu for MPI ranks");
    return std::make_unique<NcclCommunicator>(host, *cuda);
}

#endif

} // namespace mantissa
