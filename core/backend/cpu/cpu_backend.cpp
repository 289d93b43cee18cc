// CpuBackend's memory and data ops: 64-byte-aligned host allocation with exact accounting,
// upload/download, fill, cast (one rounding) and the MNIST batch gather (pixel / 255, rounded
// once).
#include "core/backend/cpu/cpu_backend.h"

#include <unistd.h>

#include "core/backend/cpu/eigen.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <thread>

#include "core/backend/cpu/cpu_kernels.h"
#include "core/error.h"
#include "core/numeric/convert.h"

namespace mantissa {

namespace {

// Every block starts with a header this large, so the pointer handed out stays 64-byte aligned
// (one cache line / one AVX-512 register) and the deleter can find the block's size.
constexpr std::size_t kAlign = 64;

std::size_t physical_ram() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return 0;
    return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size);
}

// MemAvailable (what the kernel could hand out without swapping): the allocation limit.
std::size_t available_ram() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::size_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    const long pages = sysconf(_SC_AVPHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return 0;
    return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size);
}

std::string mib(std::size_t bytes) {
    return std::to_string((bytes + (1u << 19)) >> 20) + " MiB";
}

void free_block(void* ptr, void* context) {
    auto* base = static_cast<unsigned char*>(ptr) - kAlign;
    std::size_t bytes = 0;
    std::memcpy(&bytes, base, sizeof bytes);
    static_cast<std::atomic<std::size_t>*>(context)->fetch_sub(bytes);
    std::free(base);
}

// Fills `count` elements of size sizeof(U) with one bit pattern.
template <class U>
void fill_pattern(void* data, std::int64_t count, std::uint64_t bits) {
    std::fill_n(static_cast<U*>(data), count, static_cast<U>(bits));
}

void fill_bits(void* data, std::size_t elem_size, std::int64_t count, std::uint64_t bits) {
    switch (elem_size) {
    case 1:
        fill_pattern<std::uint8_t>(data, count, bits);
        return;
    case 2:
        fill_pattern<std::uint16_t>(data, count, bits);
        return;
    case 4:
        fill_pattern<std::uint32_t>(data, count, bits);
        return;
    case 8:
        fill_pattern<std::uint64_t>(data, count, bits);
        return;
    }
    cpu::fail("fill: unexpected element size " + std::to_string(elem_size));
}

// Copies rows through a 256-entry table of bit patterns (the table holds pixel/255 in the
// batch dtype), so each pixel costs one load and one store whatever the dtype.
template <class U>
void gather_rows(const std::uint8_t* images, std::int64_t features, const std::int32_t* rows,
                 std::int64_t row_count, const std::uint64_t* table, void* batch) {
    U lut[256];
    for (int i = 0; i < 256; ++i) lut[i] = static_cast<U>(table[i]);
    auto* out = static_cast<U*>(batch);
    for (std::int64_t r = 0; r < row_count; ++r) {
        const std::uint8_t* src = images + static_cast<std::int64_t>(rows[r]) * features;
        U* dst = out + r * features;
        for (std::int64_t f = 0; f < features; ++f) dst[f] = lut[src[f]];
    }
}

} // namespace

CpuBackend::CpuBackend() {
    const int threads = std::max(1, Eigen::nbThreads());
    m_info.id = "cpu";
    m_info.name =
        "CPU (Eigen, " + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
    m_info.is_gpu = false;
    m_info.memory_total = physical_ram();
}

// Buffers must not outlive their backend: their deleter updates this backend's accounting.
CpuBackend::~CpuBackend() = default;

Buffer CpuBackend::allocate(std::size_t bytes) {
    // What the kernel could hand out now, not the installed RAM: Linux overcommits, so a block
    // larger than that is granted and then, as the memset below touches it, the OOM killer ends
    // the process (or another one) instead of us reporting a readable error.
    const std::size_t available = available_ram();
    const std::size_t limit = available             ? available
                              : m_info.memory_total ? m_info.memory_total
                                                    : std::numeric_limits<std::size_t>::max() / 2;
    auto out_of_memory = [&] {
        return Error(ErrorKind::OutOfMemory, "out of host memory: requested " +
                                                 std::to_string(bytes) + " bytes (" + mib(bytes) +
                                                 "), " + mib(available_ram()) + " available of " +
                                                 mib(m_info.memory_total) +
                                                 " RAM; reduce the batch size or the model's size");
    };
    if (bytes > limit) throw out_of_memory();
    const std::size_t padded = kAlign + (bytes + kAlign - 1) / kAlign * kAlign;
    auto* base = static_cast<unsigned char*>(std::aligned_alloc(kAlign, padded));
    if (!base) throw out_of_memory();
    std::memcpy(base, &bytes, sizeof bytes);
    // Zeroed, so padding and never-written tensors read as 0 on every run (determinism).
    std::memset(base + kAlign, 0, padded - kAlign);
    m_in_use.fetch_add(bytes);
    return Buffer(base + kAlign, bytes, &free_block, &m_in_use);
}

void CpuBackend::upload(const void* host, Tensor& dst) {
    cpu::require(host && (dst.data || dst.bytes() == 0),
                 "upload: null pointer for tensor " + cpu::describe(dst));
    if (dst.bytes()) std::memcpy(dst.data, host, dst.bytes());
}

void CpuBackend::download(const Tensor& src, void* host) {
    cpu::require(host && (src.data || src.bytes() == 0),
                 "download: null pointer for tensor " + cpu::describe(src));
    if (src.bytes()) std::memcpy(host, src.data, src.bytes());
}

void CpuBackend::fill(Tensor& dst, double value) {
    const std::int64_t n = dst.numel();
    if (n == 0) return;
    // Rounded once (integers: nearest even, saturated), then the bit pattern is replicated.
    std::uint64_t bits = 0;
    convert_from_double(&value, &bits, dst.dtype, 1);
    fill_bits(dst.data, dtype_size(dst.dtype), n, bits);
}

void CpuBackend::cast(const Tensor& src, Tensor& dst) {
    cpu::require_same_numel(src, dst, "cast");
    const std::size_t n = static_cast<std::size_t>(src.numel());
    if (n == 0) return;
    const DType from = src.dtype, to = dst.dtype;
    if (from == to) {
        if (src.data != dst.data) std::memcpy(dst.data, src.data, src.bytes());
        return;
    }
    // float32 holds every float16/bfloat16/float8 and uint8 value exactly, so passing through a
    // float32 array is still a single rounding; float64 and int32 sources go through double.
    const bool exact_in_float = is_emulated_float(from) || from == DType::UInt8;
    if (from == DType::Float32 && is_floating(to)) {
        convert_from_float(src.as<const float>(), dst.data, to, n);
    } else if (from == DType::Float64 && is_floating(to)) {
        convert_from_double(src.as<const double>(), dst.data, to, n);
    } else if (to == DType::Float32 && (exact_in_float || from == DType::Float64)) {
        convert_to_float(src.data, from, dst.as<float>(), n);
    } else if (to == DType::Float64) {
        convert_to_double(src.data, from, dst.as<double>(), n);
    } else if (exact_in_float && is_floating(to)) {
        float buf[cpu::kChunk];
        for (std::size_t off = 0; off < n; off += cpu::kChunk) {
            const std::size_t len = std::min<std::size_t>(cpu::kChunk, n - off);
            cpu::load(src, static_cast<std::int64_t>(off), buf, static_cast<std::int64_t>(len));
            cpu::store(buf, dst, static_cast<std::int64_t>(off), static_cast<std::int64_t>(len));
        }
    } else {
        convert(src.data, from, dst.data, to, n); // int32 sources, integer destinations
    }
}

void CpuBackend::gather_batch(const Tensor& images_u8, const Tensor& labels_u8,
                              const Tensor& permutation_i32, std::int64_t offset,
                              std::int64_t count, const Tensor* position, Tensor& batch,
                              Tensor& labels_i32) {
    const char* op = "gather_batch";
    if (position) {
        cpu::require(position->bytes() >= sizeof(StepScalars), std::string(op) + ": position " +
                                                                   cpu::describe(*position) +
                                                                   " must be the step scalars");
        StepScalars s;
        std::memcpy(&s, position->data, sizeof s);
        offset = s.batch_position;
    }
    cpu::require(images_u8.dtype == DType::UInt8 && labels_u8.dtype == DType::UInt8,
                 std::string(op) + ": images " + cpu::describe(images_u8) + " and labels " +
                     cpu::describe(labels_u8) + " must be uint8");
    cpu::require(permutation_i32.dtype == DType::Int32 && labels_i32.dtype == DType::Int32,
                 std::string(op) + ": permutation " + cpu::describe(permutation_i32) +
                     " and batch labels " + cpu::describe(labels_i32) + " must be int32");
    cpu::require_floating(batch, op);
    const std::int64_t examples = images_u8.rows(); // N
    const std::int64_t features = images_u8.cols(); // 784 for (N, 28, 28) or (N, 784)
    const std::int64_t batch_rows = batch.rows();   // B
    cpu::require(labels_u8.numel() == examples, std::string(op) + ": " + cpu::describe(labels_u8) +
                                                    " must hold one label per image of " +
                                                    cpu::describe(images_u8));
    cpu::require(batch.cols() == features && labels_i32.numel() == batch_rows,
                 std::string(op) + ": batch " + cpu::describe(batch) + " and labels " +
                     cpu::describe(labels_i32) + " do not fit images " + cpu::describe(images_u8));
    // count 0: a data-parallel rank past the end of a short last batch. Its rows repeat the
    // batch's first row (masked: valid_rows 0, weight 0), so that row must exist.
    cpu::require(count >= 0 && count <= batch_rows && offset >= 0 &&
                     offset + std::max<std::int64_t>(count, 1) <= permutation_i32.numel(),
                 std::string(op) + ": rows [" + std::to_string(offset) + ", " +
                     std::to_string(offset + count) + ") do not fit permutation " +
                     cpu::describe(permutation_i32) + " and batch " + cpu::describe(batch));

    // The image index of every batch row; rows >= count repeat the first (masked by valid_rows).
    // Stack storage for ordinary batches; a reused per-thread row for huge ones.
    std::int32_t stack_rows[1024];
    std::int32_t* rows =
        batch_rows <= 1024
            ? stack_rows
            : cpu::scratch_row<std::int32_t>(static_cast<std::size_t>(batch_rows), 0);
    const std::int32_t* perm = permutation_i32.as<const std::int32_t>() + offset;
    for (std::int64_t r = 0; r < batch_rows; ++r) {
        const std::int32_t index = perm[r < count ? r : 0];
        cpu::require(index >= 0 && index < examples,
                     std::string(op) + ": permutation entry " + std::to_string(index) +
                         " is outside [0, " + std::to_string(examples) + ")");
        rows[r] = index;
    }

    // pixel / 255 rounded once to the batch dtype. The double quotient is itself rounded, but
    // p / 255 has the 8-bit pattern of p repeating forever in binary, so it never lies within
    // 2^-53 of a midpoint of any narrower format (0 and 255 are exact): double rounding is
    // harmless.
    std::uint64_t table[256];
    for (int p = 0; p < 256; ++p) {
        const double value = p / 255.0;
        table[p] = 0;
        convert_from_double(&value, &table[p], batch.dtype, 1);
    }
    const auto* images = images_u8.as<const std::uint8_t>();
    switch (dtype_size(batch.dtype)) {
    case 1:
        gather_rows<std::uint8_t>(images, features, rows, batch_rows, table, batch.data);
        break;
    case 2:
        gather_rows<std::uint16_t>(images, features, rows, batch_rows, table, batch.data);
        break;
    case 4:
        gather_rows<std::uint32_t>(images, features, rows, batch_rows, table, batch.data);
        break;
    case 8:
        gather_rows<std::uint64_t>(images, features, rows, batch_rows, table, batch.data);
        break;
    }

    const auto* labels = labels_u8.as<const std::uint8_t>();
    auto* out_labels = labels_i32.as<std::int32_t>();
    for (std::int64_t r = 0; r < batch_rows; ++r) out_labels[r] = labels[rows[r]];
}

} // namespace mantissa
