// CudaBackend's device, memory, data movement and readout ring: one stream per backend, exact
// allocation accounting, out-of-memory as a readable Error, and step scalars copied into pinned
// host slots with events so the trainer reads them a step or two late without stalling.
#include "core/backend/cuda/cuda_backend.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "core/backend/cuda/bias_grad.cuh"
#include "core/backend/cuda/cast.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/cuda_state.h"
#include "core/backend/cuda/fake_quantize.cuh"
#include "core/backend/cuda/fill.cuh"
#include "core/backend/cuda/gather_batch.cuh"
#include "core/backend/cuda/op_checks.h"
#include "core/backend/cuda/softmax_xent.cuh"
#include "core/error.h"
#include "core/numeric/convert.h"

namespace mantissa {

namespace {

// Buffers remember their size and the backend's counter: [size_t bytes | ... payload].
struct Allocation {
    std::atomic<std::size_t>* counter;
    std::size_t bytes;
};

void free_device(void* ptr, void* context) {
    auto* alloc = static_cast<Allocation*>(context);
    cudaFree(ptr); // a destructor path: errors here cannot be reported, and must not throw
    alloc->counter->fetch_sub(alloc->bytes);
    delete alloc;
}

struct DeviceFree { // for a block not yet handed to a Buffer
    void operator()(void* ptr) const noexcept { cudaFree(ptr); }
};

using cuda_checks::describe;
using cuda_checks::require;

// Keeps the memory that cudaFreeAsync returns to the device's default pool in the pool. Its
// release threshold is 0 by default, so every stream, event or device synchronisation handed the
// freed bytes back to the OS, and the next step's cudaMallocAsync (a quantised convolution's
// float32 result, a quantised copy's float32 buffer) mapped fresh pages again, on the host, every
// step. The likely cause (issue 26; not yet measured) of what the 2026-11-30 H200 profiles show,
// which synchronise after every plan step: 0.27-0.46 ms per quantised convolution pass of the
// cnn against 0.07-0.12 ms under mixed_float16, far more than their float32 arithmetic takes.
// The pool now keeps at most the largest set of such buffers a step has live at once; the
// engine's own Buffers (memory_in_use) are apart from it. A device without memory pools keeps
// CUDA's default.
// The device's default pool, or nullptr where it has none (the failed query's error cleared).
cudaMemPool_t default_pool(int device) {
    cudaMemPool_t pool = nullptr;
    if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess) pool = nullptr;
    cudaGetLastError();
    return pool;
}

void keep_pool_memory(int device) {
    if (cudaMemPool_t pool = default_pool(device)) {
        std::uint64_t keep_all = UINT64_MAX;
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all);
        cudaGetLastError(); // a pool that refuses it keeps CUDA's default
    }
}

// Hands what the default pool keeps back to the OS (after the engine's stream has finished, so
// its pending frees are in the pool): for an allocation that failed, which then tries once more.
// Whether the pool could be trimmed.
bool release_pool_memory(int device, cudaStream_t stream) {
    if (cudaStreamSynchronize(stream) != cudaSuccess) return false;
    cudaMemPool_t pool = default_pool(device);
    const bool trimmed = pool && cudaMemPoolTrimTo(pool, 0) == cudaSuccess;
    cudaGetLastError();
    return trimmed;
}

} // namespace

CudaBackend::Impl::Impl(int device_index) : device(device_index) {
    try {
        open();
    } catch (...) { // a half-opened device: release what was created, then report
        release();
        throw;
    }
}

void CudaBackend::Impl::open() {
    int count = 0;
    MANTISSA_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
        throw Error(ErrorKind::Device, "CUDA device " + std::to_string(device) +
                                           " requested, but only " + std::to_string(count) +
                                           " found");
    MANTISSA_CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop{};
    MANTISSA_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    info.id = "cuda:" + std::to_string(device);
    info.name = prop.name;
    info.is_gpu = true;
    info.memory_total = prop.totalGlobalMem;
    compute_capability = prop.major * 10 + prop.minor;
    fp8_gemm = compute_capability >= 89;
    keep_pool_memory(device);
    MANTISSA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    MANTISSA_CUBLAS_CHECK(cublasLtCreate(&lt));
    MANTISSA_CUDNN_CHECK(cudnnCreate(&dnn));
    MANTISSA_CUDNN_CHECK(cudnnSetStream(dnn, stream));
    MANTISSA_CUDA_CHECK(
        cudaMallocHost(reinterpret_cast<void**>(&ring), sizeof(StepScalars) * kReadoutSlots));
    for (int i = 0; i < kReadoutSlots; ++i) {
        MANTISSA_CUDA_CHECK(cudaEventCreate(&started[i]));
        MANTISSA_CUDA_CHECK(cudaEventCreate(&landed[i]));
    }
    MANTISSA_CUDA_CHECK(cudaMalloc(&quant_scratch, cuda::kQuantScratchBytes));
    // Zero once, in the engine's stream (a plain cudaMemset would go to the legacy stream, which
    // a non-blocking stream does not wait for): the quantise launches leave it zero after each
    // use (fake_quantize.cuh).
    MANTISSA_CUDA_CHECK(cudaMemsetAsync(quant_scratch, 0, cuda::kQuantScratchBytes, stream));
    MANTISSA_CUDA_CHECK(cudaMalloc(&xent_scratch, cuda::kXentScratchBytes));
    MANTISSA_CUDA_CHECK(cudaMalloc(&bias_scratch, cuda::kBiasGradScratchBytes));
}

// Never throws: every release is attempted, errors ignored (the process may be tearing down).
void CudaBackend::Impl::release() noexcept {
    if (stream) cudaStreamSynchronize(stream);
    for (auto& [key, exec] : graphs) cudaGraphExecDestroy(exec);
    graphs.clear();
    gemms.clear();
    convs.clear();
    for (int i = 0; i < kReadoutSlots; ++i) {
        if (started[i]) cudaEventDestroy(started[i]);
        if (landed[i]) cudaEventDestroy(landed[i]);
        started[i] = landed[i] = nullptr;
    }
    for (cudaEvent_t mark : marks) cudaEventDestroy(mark);
    marks.clear();
    marks_in_use = 0;
    if (ring) cudaFreeHost(ring);
    if (quant_scratch) cudaFree(quant_scratch);
    if (xent_scratch) cudaFree(xent_scratch);
    if (bias_scratch) cudaFree(bias_scratch);
    if (dnn) cudnnDestroy(dnn);
    if (lt) cublasLtDestroy(lt);
    if (stream) cudaStreamDestroy(stream);
    ring = nullptr;
    quant_scratch = nullptr;
    xent_scratch = nullptr;
    bias_scratch = nullptr;
    dnn = nullptr;
    lt = nullptr;
    stream = nullptr;
    cudaGetLastError(); // leave no error behind for the next backend
}

CudaBackend::Impl::~Impl() {
    release();
}

CudaBackend::CudaBackend(int device_index) : m_impl(std::make_unique<Impl>(device_index)) {}

CudaBackend::~CudaBackend() = default;

const DeviceInfo& CudaBackend::info() const {
    return m_impl->info;
}

void* CudaBackend::native_stream() const {
    return static_cast<void*>(m_impl->stream);
}

int CudaBackend::device_index() const {
    return m_impl->device;
}

Buffer CudaBackend::allocate(std::size_t bytes) {
    MANTISSA_CUDA_CHECK(cudaSetDevice(m_impl->device));
    void* ptr = nullptr;
    cudaError_t status = cudaMalloc(&ptr, bytes == 0 ? 1 : bytes);
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        // The stream-ordered pool may hold freed scratch (keep_pool_memory): give it back first.
        if (release_pool_memory(m_impl->device, m_impl->stream))
            status = cudaMalloc(&ptr, bytes == 0 ? 1 : bytes);
    }
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError(); // not sticky: clear it so the next run works
        throw Error(ErrorKind::OutOfMemory, cuda::out_of_memory_message(bytes, m_impl->info.id));
    }
    MANTISSA_CUDA_CHECK(status);
    // Owned here until the Buffer takes it: a throwing memset (or new) must not leak the block.
    std::unique_ptr<void, DeviceFree> owned(ptr);
    // Zeroed, as the CPU engine's memory is, so never-written tensors read as 0 on every run.
    MANTISSA_CUDA_CHECK(cudaMemsetAsync(ptr, 0, bytes, m_impl->stream));
    auto accounting = std::make_unique<Allocation>(Allocation{&m_impl->in_use, bytes});
    m_impl->in_use.fetch_add(bytes);
    owned.release();
    return Buffer(ptr, bytes, &free_device, accounting.release());
}

std::size_t CudaBackend::memory_in_use() const {
    return m_impl->in_use.load();
}

void CudaBackend::upload(const void* host, Tensor& dst) {
    require(host && (dst.data || dst.bytes() == 0), "upload: null pointer for " + describe(dst));
    if (dst.bytes() == 0) return;
    // Stream-ordered; a pageable source is staged before the call returns, so the caller may
    // reuse its buffer at once.
    MANTISSA_CUDA_CHECK(
        cudaMemcpyAsync(dst.data, host, dst.bytes(), cudaMemcpyHostToDevice, m_impl->stream));
}

void CudaBackend::download(const Tensor& src, void* host) {
    require(host && (src.data || src.bytes() == 0), "download: null pointer for " + describe(src));
    if (src.bytes() == 0) return;
    MANTISSA_CUDA_CHECK(
        cudaMemcpyAsync(host, src.data, src.bytes(), cudaMemcpyDeviceToHost, m_impl->stream));
    MANTISSA_CUDA_CHECK(cudaStreamSynchronize(m_impl->stream));
}

void CudaBackend::synchronize() {
    MANTISSA_CUDA_CHECK(cudaStreamSynchronize(m_impl->stream));
}

void CudaBackend::set_tf32(bool enabled) {
    m_impl->tf32 = enabled;
}

void CudaBackend::set_propagate_nan(bool enabled) {
    m_impl->propagate_nan = enabled;
}

std::string CudaBackend::last_choice() const {
    return m_impl->last_choice;
}

void CudaBackend::clear_last_choice() {
    m_impl->last_choice.clear();
}

bool CudaBackend::captures_graphs() const {
    return true;
}

// Thread-local capture: another thread's CUDA calls (a second backend, the GUI's device query)
// neither join this graph nor invalidate it.
void CudaBackend::begin_graph_capture() {
    MANTISSA_CUDA_CHECK(cudaStreamBeginCapture(m_impl->stream, cudaStreamCaptureModeThreadLocal));
}

void CudaBackend::end_graph_capture(const void* owner, std::uint64_t key) {
    cudaGraph_t graph = nullptr;
    MANTISSA_CUDA_CHECK(cudaStreamEndCapture(m_impl->stream, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph); // the executable graph keeps what it needs
    MANTISSA_CUDA_CHECK(status);
    cudaGraphExec_t& slot = m_impl->graphs[{owner, key}];
    if (slot) cudaGraphExecDestroy(slot);
    slot = exec;
}

void CudaBackend::abort_graph_capture() noexcept {
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(m_impl->stream, &graph) == cudaSuccess && graph)
        cudaGraphDestroy(graph);
    cudaGetLastError(); // an invalidated capture leaves its error behind
}

bool CudaBackend::replay_graph(const void* owner, std::uint64_t key) {
    const auto it = m_impl->graphs.find({owner, key});
    if (it == m_impl->graphs.end()) return false;
    MANTISSA_CUDA_CHECK(cudaGraphLaunch(it->second, m_impl->stream));
    return true;
}

void CudaBackend::drop_graphs(const void* owner) noexcept {
    if (m_impl->stream) cudaStreamSynchronize(m_impl->stream); // no replay still reads them
    for (auto it = m_impl->graphs.begin(); it != m_impl->graphs.end();) {
        if (it->first.first != owner) {
            ++it;
            continue;
        }
        cudaGraphExecDestroy(it->second);
        it = m_impl->graphs.erase(it);
    }
}

void CudaBackend::fill(Tensor& dst, double value) {
    const std::int64_t n = dst.numel();
    if (n == 0) return;
    // Rounded once on the host, exactly as the CPU engine rounds it; then the bits are replicated.
    std::uint64_t bits = 0;
    convert_from_double(&value, &bits, dst.dtype, 1);
    cuda::launch_fill_bits(dst.data, dtype_size(dst.dtype), n, bits, m_impl->stream);
}

void CudaBackend::cast(const Tensor& src, Tensor& dst) {
    require(src.numel() == dst.numel(), "cast: tensors " + describe(src) + " and " + describe(dst) +
                                            " must have the same number of elements");
    if (src.numel() == 0) return;
    for (const Tensor* t : {&src, static_cast<const Tensor*>(&dst)})
        if (t->dtype == DType::Float8E4M3 || t->dtype == DType::Float8E5M2)
            throw Error(
                ErrorKind::InvalidArgument,
                "cast: " + describe(*t) +
                    ": the CUDA engine has no float8 yet; use the CPU engine (--device cpu)");
    if (src.dtype == dst.dtype) {
        if (src.data != dst.data)
            MANTISSA_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, src.bytes(),
                                                cudaMemcpyDeviceToDevice, m_impl->stream));
        return;
    }
    cuda::launch_cast(src.data, src.dtype, dst.data, dst.dtype, src.numel(), m_impl->stream);
}

void CudaBackend::gather_batch(const Tensor& images_u8, const Tensor& labels_u8,
                               const Tensor& permutation_i32, std::int64_t offset,
                               std::int64_t count, const Tensor* position, Tensor& batch,
                               Tensor& labels_i32) {
    const std::string op = "gather_batch";
    require(images_u8.dtype == DType::UInt8 && labels_u8.dtype == DType::UInt8,
            op + ": images " + describe(images_u8) + " and labels " + describe(labels_u8) +
                " must be uint8");
    require(permutation_i32.dtype == DType::Int32 && labels_i32.dtype == DType::Int32,
            op + ": permutation and batch labels must be int32");
    require(is_floating(batch.dtype), op + ": batch " + describe(batch) + " must be floating");
    const std::int64_t examples = images_u8.rows(), features = images_u8.cols();
    require(labels_u8.numel() == examples,
            op + ": " + describe(labels_u8) + " must hold one label per image");
    require(batch.cols() == features && labels_i32.numel() == batch.rows(),
            op + ": batch " + describe(batch) + " and labels " + describe(labels_i32) +
                " do not fit images " + describe(images_u8));
    // count 0: a data-parallel rank past the end of a short last batch (see cpu_backend.cpp).
    // With `position` the offset is read on the device, and checked there (a position past the
    // permutation reads from its start, as an out-of-range entry reads image 0).
    if (position) {
        require(position->bytes() >= sizeof(StepScalars),
                op + ": position " + describe(*position) + " must be the step scalars");
        offset = 0;
    }
    require(count >= 0 && count <= batch.rows() && offset >= 0 &&
                offset + std::max<std::int64_t>(count, 1) <= permutation_i32.numel(),
            op + ": rows [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                ") do not fit permutation " + describe(permutation_i32));
    cuda::PixelTable table{};
    for (int p = 0; p < 256; ++p) { // pixel / 255 rounded once, as cpu_backend.cpp builds it
        const double value = p / 255.0;
        convert_from_double(&value, &table.bits[p], batch.dtype, 1);
    }
    cuda::GatherArgs a;
    a.images = images_u8.as<const std::uint8_t>();
    a.labels = labels_u8.as<const std::uint8_t>();
    a.rows = permutation_i32.as<const std::int32_t>() + offset;
    a.permutation_size = permutation_i32.numel() - offset;
    if (position) a.position = &static_cast<const StepScalars*>(position->data)->batch_position;
    a.examples = examples;
    a.features = features;
    a.count = count;
    a.batch_rows = batch.rows();
    a.batch = batch.data;
    a.elem_size = dtype_size(batch.dtype);
    a.batch_labels = labels_i32.as<std::int32_t>();
    cuda::launch_gather_batch(a, table, m_impl->stream);
}

StepScalars CudaBackend::read_scalars(const Tensor& scalars) {
    require(scalars.data && scalars.bytes() >= sizeof(StepScalars),
            "step scalars tensor '" + scalars.name + "' is smaller than StepScalars");
    StepScalars values;
    MANTISSA_CUDA_CHECK(cudaMemcpyAsync(&values, scalars.data, sizeof values,
                                        cudaMemcpyDeviceToHost, m_impl->stream));
    MANTISSA_CUDA_CHECK(cudaStreamSynchronize(m_impl->stream));
    return values;
}

void CudaBackend::write_scalars(const StepScalars& values, Tensor& scalars) {
    require(scalars.data && scalars.bytes() >= sizeof(StepScalars),
            "step scalars tensor '" + scalars.name + "' is smaller than StepScalars");
    MANTISSA_CUDA_CHECK(cudaMemcpyAsync(scalars.data, &values, sizeof values,
                                        cudaMemcpyHostToDevice, m_impl->stream));
    MANTISSA_CUDA_CHECK(cudaStreamSynchronize(m_impl->stream)); // `values` may die after return
}

int CudaBackend::readout_lag() const {
    return 2;
}

namespace {

int checked_slot(int slot) {
    if (slot < 0 || slot >= kReadoutSlots)
        throw Error(ErrorKind::Internal, "readout slot " + std::to_string(slot) +
                                             " is outside [0, " + std::to_string(kReadoutSlots) +
                                             ")");
    return slot;
}

} // namespace

void CudaBackend::step_started(int slot) {
    slot = checked_slot(slot);
    MANTISSA_CUDA_CHECK(cudaEventRecord(m_impl->started[slot], m_impl->stream));
    m_impl->has_start[slot] = true;
}

void CudaBackend::enqueue_readout(const Tensor& scalars, int slot) {
    slot = checked_slot(slot);
    require(scalars.data && scalars.bytes() >= sizeof(StepScalars),
            "step scalars tensor '" + scalars.name + "' is smaller than StepScalars");
    MANTISSA_CUDA_CHECK(cudaMemcpyAsync(&m_impl->ring[slot], scalars.data, sizeof(StepScalars),
                                        cudaMemcpyDeviceToHost, m_impl->stream));
    MANTISSA_CUDA_CHECK(cudaEventRecord(m_impl->landed[slot], m_impl->stream));
}

StepReadout CudaBackend::read_readout(int slot) {
    slot = checked_slot(slot);
    MANTISSA_CUDA_CHECK(cudaEventSynchronize(m_impl->landed[slot]));
    StepReadout out;
    std::memcpy(&out.scalars, &m_impl->ring[slot], sizeof(StepScalars));
    if (m_impl->has_start[slot]) {
        float ms = 0.0f;
        MANTISSA_CUDA_CHECK(cudaEventElapsedTime(&ms, m_impl->started[slot], m_impl->landed[slot]));
        out.device_ms = ms;
        m_impl->has_start[slot] = false;
    }
    return out;
}

bool CudaBackend::begin_time_marks(std::size_t intervals) {
    std::vector<cudaEvent_t>& marks = m_impl->marks;
    while (marks.size() < intervals + 1) {
        cudaEvent_t mark = nullptr;
        MANTISSA_CUDA_CHECK(cudaEventCreate(&mark));
        marks.push_back(mark);
    }
    m_impl->marks_in_use = intervals + 1;
    return true;
}

void CudaBackend::mark_time(std::size_t index) {
    if (index >= m_impl->marks_in_use)
        throw Error(ErrorKind::Internal, "time mark " + std::to_string(index) + " of " +
                                             std::to_string(m_impl->marks_in_use) + " readied");
    MANTISSA_CUDA_CHECK(cudaEventRecord(m_impl->marks[index], m_impl->stream));
}

std::vector<double> CudaBackend::marked_intervals_ms() {
    const std::size_t n = m_impl->marks_in_use;
    if (n == 0) return {};
    MANTISSA_CUDA_CHECK(cudaEventSynchronize(m_impl->marks[n - 1]));
    std::vector<double> ms(n - 1);
    for (std::size_t i = 0; i + 1 < n; ++i) {
        float interval = 0.0f;
        MANTISSA_CUDA_CHECK(
            cudaEventElapsedTime(&interval, m_impl->marks[i], m_impl->marks[i + 1]));
        ms[i] = interval;
    }
    m_impl->marks_in_use = 0;
    return ms;
}

} // namespace mantissa
