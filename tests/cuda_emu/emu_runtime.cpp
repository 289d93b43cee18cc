// The kernel emulator's runtime (README.md here): emulated threads as fibers with the block and
// warp barriers emu_device.h's intrinsics wait on, device memory with guard pages and canaries,
// stream capture and CUDA Graph replay, and the part of the CUDA runtime API the CUDA engine calls,
// on host memory. Each device allocation ends at a page the process may not touch, so a kernel
// that reads or writes past a buffer's end stops with the kernel's name and the thread's
// coordinates; new allocations hold 0xff bytes (NaN in float32, float16 and bfloat16), so a kernel
// that leaves an output element unwritten shows in the op case's comparison.
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "tests/cuda_emu/emu_device.h"
// The runtime names the builtins' fields (cudaDeviceProp::warpSize), not the kernels' macros.
#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim
#undef warpSize

// What a captured stream records instead of running: one node per launch, copy, fill, event or
// library call, replayed in order by cudaGraphLaunch.
struct CUevent_st;
struct EmuNode {
    std::function<void()> run;
};
namespace mantissa_emu {
void unmap_device(void* ptr);
// Allocations made in a capture (cudaMallocAsync): they keep their address for the graph's life,
// as CUDA's graph allocations do, and are freed with the last graph or executable holding them.
struct GraphMemory {
    std::vector<void*> ptrs;
    ~GraphMemory() {
        for (void* p : ptrs) unmap_device(p);
    }
};
} // namespace mantissa_emu
struct CUstream_st {
    bool capturing = false;
    bool invalidated = false; // an unsafe call during the capture: EndCapture fails, as CUDA's does
    std::vector<EmuNode> nodes;
    std::shared_ptr<mantissa_emu::GraphMemory> owned;
};
struct CUgraph_st {
    std::vector<EmuNode> nodes;
    std::shared_ptr<mantissa_emu::GraphMemory> owned;
};
struct CUgraphExec_st {
    std::vector<EmuNode> nodes;
    std::shared_ptr<mantissa_emu::GraphMemory> owned;
};
// An event holds the host time it was recorded at: every call runs when it is made, so the time
// between two events is the emulated work between them (what a step's device time reads).
struct CUevent_st {
    std::chrono::steady_clock::time_point at{};
};

namespace mantissa_emu {
namespace {

constexpr std::size_t kFiberStack = 128 * 1024; // the kernels' register arrays live here
constexpr int kWarp = 32;

enum class Wait { None, Block, Warp, Done };

// Switching fibers. On x86-64: the six callee-saved registers and the stack pointer, as a
// function call would save them (swapcontext also sets the signal mask, two system calls a
// switch, which took half the emulator's time). Elsewhere: ucontext.
#if defined(__x86_64__)
extern "C" void mantissa_emu_switch(void** save_sp, void* load_sp);
asm(R"(
    .text
    .globl mantissa_emu_switch
    .type mantissa_emu_switch, @function
mantissa_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size mantissa_emu_switch, .-mantissa_emu_switch
)");

struct Context {
    void* sp = nullptr;
};

// The first switch into `c` "returns" into `entry` with the stack aligned as at a call.
void prepare(Context& c, char* stack, std::size_t bytes, void (*entry)()) {
    const auto top = reinterpret_cast<std::uintptr_t>(stack + bytes) & ~std::uintptr_t{15};
    void** slots = reinterpret_cast<void**>(top) - 8; // six registers, the return address, pad
    for (int i = 0; i < 6; ++i) slots[i] = nullptr;
    slots[6] = reinterpret_cast<void*>(entry);
    slots[7] = nullptr;
    c.sp = slots;
}

void switch_to(Context& from, Context& to) {
    mantissa_emu_switch(&from.sp, to.sp);
}
#else
struct Context {
    ucontext_t uc{};
};

void prepare(Context& c, char* stack, std::size_t bytes, void (*entry)()) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack;
    c.uc.uc_stack.ss_size = bytes;
    c.uc.uc_link = nullptr;
    makecontext(&c.uc, entry, 0);
}

void switch_to(Context& from, Context& to) {
    swapcontext(&from.uc, &to.uc);
}
#endif

struct Fiber {
    Context context;
    char* stack = nullptr; // kFiberStack bytes, from the launch's pool
    Coordinates where{};
    Wait wait = Wait::Done;
    int predicate = 0;
    unsigned shuffles = 0; // warp shuffles made, whose parity picks the exchange slots
    unsigned syncs = 0;    // __syncthreads met
    int sync_line = 0;     // the source line of the one it waits at
};

struct Run {
    const char* kernel = "";
    const std::function<void()>* body = nullptr;
    std::vector<Fiber> fibers;
    Fiber* running = nullptr;
    Context scheduler;
    int block_or = 0;
    std::vector<unsigned char> slots; // two 8-byte slots per thread, for the warp exchanges
    unsigned long long barriers = 0;  // barriers and shuffles met so far in this launch
    bool direct = false;              // blocks after the first run without fibers
};

Run* g_run = nullptr; // the launch in progress (launches run one at a time: a mutex guards it)
std::mutex g_launch_mutex;
thread_local cudaError_t g_last_error = cudaSuccess; // per host thread, as CUDA keeps it

// A fiber's whole life: the kernel's body once, then back to the scheduler for good.
void fiber_main() {
    Run* run = g_run;
    (*run->body)();
    Fiber* me = run->running;
    me->wait = Wait::Done;
    switch_to(me->context, run->scheduler);
    std::abort(); // a finished fiber is never resumed
}

void yield_to_scheduler(Wait wait) {
    Fiber* me = g_run->running;
    me->wait = wait;
    switch_to(me->context, g_run->scheduler);
}

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "cuda-emu: %s\n", what.c_str());
    std::abort();
}

std::string describe_thread(const Run& run, const Fiber& f) {
    char text[256];
    std::snprintf(text, sizeof text, "%s, block (%u,%u,%u) thread (%u,%u,%u)", run.kernel,
                  f.where.block.x, f.where.block.y, f.where.block.z, f.where.thread.x,
                  f.where.thread.y, f.where.thread.z);
    return text;
}

// The waiters of one barrier must all be at the same one: the same count of __syncthreads (or of
// shuffles, for a warp), and for __syncthreads the same source line (release_barriers).
void check_same_barrier(const Run& run, const Fiber& a, const Fiber& b, unsigned count_a,
                        unsigned count_b, const char* what) {
    if (count_a != count_b)
        fail(std::string("threads wait at different ") + what + " (one skipped one): " +
             describe_thread(run, a) + " at its " + std::to_string(count_a) + ", " +
             describe_thread(run, b) + " at its " + std::to_string(count_b));
}

// Releases the barriers every live thread has reached; false when no fiber can go on.
bool release_barriers(Run& run) {
    const int n = static_cast<int>(run.fibers.size());
    bool released = false;
    for (int warp = 0; warp * kWarp < n; ++warp) {
        const int first = warp * kWarp, last = std::min(n, first + kWarp);
        const Fiber* waiter = nullptr;
        bool all = true;
        for (int i = first; i < last; ++i) {
            const Fiber& f = run.fibers[i];
            if (f.wait == Wait::Warp) {
                if (waiter)
                    check_same_barrier(run, *waiter, f, waiter->shuffles, f.shuffles, "shuffles");
                waiter = &f;
            }
            all &= f.wait == Wait::Warp || f.wait == Wait::Done;
        }
        if (waiter && all) {
            for (int i = first; i < last; ++i)
                if (run.fibers[i].wait == Wait::Warp) run.fibers[i].wait = Wait::None;
            released = true;
        }
    }
    const Fiber* waiter = nullptr;
    bool all = true;
    int predicate = 0;
    for (const Fiber& f : run.fibers) {
        if (f.wait == Wait::Block) {
            if (waiter)
                check_same_barrier(run, *waiter, f, waiter->syncs, f.syncs, "__syncthreads");
            if (waiter && waiter->sync_line != f.sync_line)
                fail("threads wait at different __syncthreads: " + describe_thread(run, *waiter) +
                     " at line " + std::to_string(waiter->sync_line) + ", " +
                     describe_thread(run, f) + " at line " + std::to_string(f.sync_line));
            waiter = &f;
            predicate |= f.predicate;
        }
        all &= f.wait == Wait::Block || f.wait == Wait::Done;
    }
    if (waiter && all) {
        run.block_or = predicate != 0;
        for (Fiber& f : run.fibers)
            if (f.wait == Wait::Block) f.wait = Wait::None;
        released = true;
    }
    return released;
}

// Thread `linear` of `block` (x fastest, as CUDA numbers a block's threads).
Coordinates coordinates(unsigned linear, uint3 block, dim3 grid, dim3 dim) {
    return {uint3{linear % dim.x, linear / dim.x % dim.y, linear / (dim.x * dim.y)}, block, dim,
            grid};
}

void run_block(Run& run, uint3 block, dim3 grid, dim3 dim, std::mt19937& order_rng) {
    const int n = static_cast<int>(run.fibers.size());
    for (int i = 0; i < n; ++i) {
        Fiber& f = run.fibers[i];
        f.where = coordinates(static_cast<unsigned>(i), block, grid, dim);
        f.wait = Wait::None;
        f.predicate = 0;
        f.shuffles = 0;
        f.syncs = 0;
        prepare(f.context, f.stack, kFiberStack, fiber_main);
    }
    // Each round runs every ready thread up to its next barrier, in an order shuffled for each
    // block, so a missing __syncthreads shows whichever way the threads' order would have hidden
    // it.
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), order_rng);
    int done = 0;
    for (;;) {
        bool ran = false;
        for (int i : order) {
            Fiber& f = run.fibers[i];
            if (f.wait != Wait::None) continue;
            run.running = &f;
            g_here = &f.where;
            switch_to(run.scheduler, f.context);
            done += f.wait == Wait::Done ? 1 : 0;
            ran = true;
        }
        run.running = nullptr;
        g_here = nullptr;
        if (done == n) return;
        if (!release_barriers(run) && !ran) {
            for (const Fiber& f : run.fibers)
                if (f.wait != Wait::Done)
                    fail("threads wait at different barriers (a barrier some threads skip): " +
                         describe_thread(run, f));
        }
    }
}

// kFiberStack bytes above one inaccessible page.
char* map_fiber_stack() {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* base = mmap(nullptr, kFiberStack + page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) fail("no memory for a fiber's stack");
    mprotect(base, page, PROT_NONE);
    return static_cast<char*>(base) + page;
}

// A block of a kernel without barriers: each thread's body called in turn on this stack.
void run_block_direct(Run& run, uint3 block, dim3 grid, dim3 dim) {
    Fiber& f = run.fibers[0]; // its coordinates, for the fault report
    run.running = &f;
    g_here = &f.where;
    const unsigned n = dim.x * dim.y * dim.z;
    for (unsigned i = 0; i < n; ++i) {
        f.where = coordinates(i, block, grid, dim);
        (*run.body)();
    }
    run.running = nullptr;
}

[[noreturn]] void fail_direct(const char* what) {
    fail(std::string(what) + " in " + describe_thread(*g_run, *g_run->running) +
         ", a block after the first; the first block met none, so the emulator ran this one "
         "without fibers. A kernel whose blocks differ in their barriers needs the emulator to "
         "run every block as fibers (run_grid)");
}

// --- device memory: each allocation ends where an inaccessible page begins ------------------

struct Mapping {
    void* base;
    std::size_t length;
    std::size_t bytes;     // what counts as in use: the request rounded to 256
    std::size_t requested; // the rest, up to `bytes`, holds kCanary
};
constexpr unsigned char kCanary = 0xA5;
std::mutex g_memory_mutex;
// Never destroyed: a buffer freed by a static destructor at exit still finds it.
std::map<void*, Mapping>& g_mappings = *new std::map<void*, Mapping>;
std::size_t g_in_use = 0;

constexpr std::size_t kDeviceBytes = std::size_t{8} << 30; // the emulated GPU's memory

void* map_device(std::size_t bytes) {
    {
        std::lock_guard lock(g_memory_mutex);
        if (bytes > kDeviceBytes || g_in_use + bytes > kDeviceBytes)
            return nullptr; // out of device memory, as cudaMalloc reports it
    }
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256;
    const std::size_t pages = (rounded + page - 1) / page;
    const std::size_t length = (pages + 1) * page;
    void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return nullptr;
    char* guard = static_cast<char*>(base) + pages * page;
    mprotect(guard, page, PROT_NONE);
    void* ptr = guard - rounded; // 256-byte aligned, as cudaMalloc's pointers are
    std::memset(ptr, 0xff, bytes);
    // Between the request and the page's end (under 256 bytes) a canary, which check_canaries
    // reads after every kernel: an overrun short of the guard page shows there.
    std::memset(static_cast<char*>(ptr) + bytes, kCanary, rounded - bytes);
    std::lock_guard lock(g_memory_mutex);
    g_mappings[ptr] = Mapping{base, length, rounded, bytes};
    g_in_use += rounded;
    return ptr;
}

} // namespace

void unmap_device(void* ptr) {
    if (ptr == nullptr) return;
    std::lock_guard lock(g_memory_mutex);
    auto it = g_mappings.find(ptr);
    if (it == g_mappings.end()) fail("cudaFree of a pointer cudaMalloc did not return");
    g_in_use -= it->second.bytes;
    munmap(it->second.base, it->second.length);
    g_mappings.erase(it);
}

std::size_t in_use() {
    std::lock_guard lock(g_memory_mutex);
    return g_in_use;
}

// After each kernel: every allocation's bytes past its request still hold the canary.
void check_canaries(const char* kernel) {
    std::lock_guard lock(g_memory_mutex);
    for (const auto& [ptr, m] : g_mappings) {
        const auto* tail = static_cast<const unsigned char*>(ptr) + m.requested;
        for (std::size_t i = 0; i < m.bytes - m.requested; ++i)
            if (tail[i] != kCanary) {
                char text[256];
                std::snprintf(text, sizeof text,
                              "%s wrote past the end of a %zu-byte device buffer (its byte %zu)",
                              kernel, m.requested, m.requested + i);
                fail(text);
            }
    }
}

namespace {

void on_segv(int, siginfo_t* info, void*) {
    char text[512];
    const Run* run = g_run;
    if (run != nullptr && run->running != nullptr)
        std::snprintf(text, sizeof text,
                      "cuda-emu: %s touched %p, outside every allocation (past a buffer's end?)\n",
                      describe_thread(*run, *run->running).c_str(), info->si_addr);
    else
        std::snprintf(text, sizeof text, "cuda-emu: host code touched %p (no kernel running)\n",
                      info->si_addr);
    const ssize_t ignored = write(2, text, std::strlen(text));
    (void)ignored;
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
}

// The fibers' stacks are outside the main stack, so a fault must be handled on its own stack.
void install_fault_report() {
    static bool installed = false;
    if (installed) return;
    installed = true;
    static char* alt = new char[1 << 16]; // never freed: the handler may run until exit
    stack_t ss{};
    ss.ss_sp = alt;
    ss.ss_size = 1 << 16;
    sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, nullptr);
}

} // namespace

const Coordinates* g_here = nullptr;

int block_barrier(int predicate, int line) {
    if (g_run->direct) fail_direct("__syncthreads");
    ++g_run->barriers;
    ++g_run->running->syncs;
    g_run->running->sync_line = line;
    g_run->running->predicate = predicate;
    yield_to_scheduler(Wait::Block);
    return g_run->block_or;
}

void warp_exchange(const void* mine, void* theirs, std::size_t bytes, int source_lane) {
    if (bytes > 8) fail("a warp shuffle of more than 8 bytes");
    if (g_run->direct) fail_direct("a warp shuffle");
    ++g_run->barriers;
    Run& run = *g_run;
    Fiber& me = *run.running;
    const int index = static_cast<int>(&me - run.fibers.data());
    const int source = index / kWarp * kWarp + source_lane;
    // Two slots a thread, alternating: a lane cannot start its next-but-one shuffle before every
    // lane of its warp has read this one (the next one's barrier waits for them), so one barrier
    // per shuffle suffices.
    const std::size_t half = run.fibers.size() * 8;
    unsigned char* slots = run.slots.data() + (me.shuffles++ & 1) * half;
    std::memcpy(slots + static_cast<std::size_t>(index) * 8, mine, bytes);
    yield_to_scheduler(Wait::Warp);
    // The source lane took part in this shuffle if it has made as many as this lane (it may
    // have gone on, or even exited, since: its slot keeps the value until its next-but-one).
    if (source >= static_cast<int>(run.fibers.size()) || run.fibers[source].shuffles < me.shuffles)
        fail("a warp shuffle reads a lane that does not exist or has exited: " +
             describe_thread(run, me));
    std::memcpy(theirs, slots + static_cast<std::size_t>(source) * 8, bytes);
}

void run_grid(const char* kernel, dim3 grid, dim3 block, const std::function<void()>& body);

void launch(const char* kernel, dim3 grid, dim3 block, std::size_t shared_bytes,
            cudaStream_t stream, const std::function<void()>& body) {
    const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 ||
        block.z > 64 || grid.y > 65535 || grid.z > 65535 || shared_bytes > 48 * 1024) {
        std::fprintf(stderr,
                     "cuda-emu: %s launched with grid (%u,%u,%u) block (%u,%u,%u): the hardware "
                     "refuses it\n",
                     kernel, grid.x, grid.y, grid.z, block.x, block.y, block.z);
        g_last_error = cudaErrorInvalidConfiguration;
        return;
    }
    // The body holds copies of the arguments (unchevron.py's [=]), as a graph's kernel node does.
    enqueue(stream, [kernel, grid, block, body] { run_grid(kernel, grid, block, body); });
}

void enqueue(cudaStream_t stream, std::function<void()> work) {
    if (stream != nullptr && stream->capturing)
        stream->nodes.push_back({std::move(work)});
    else
        work();
}

// MANTISSA_EMU_LAUNCHES=FILE: every kernel's run count (graph replays included) written to FILE
// at exit, one "count kernel" line each: how many launches a step takes, which a GPU profile
// shows too, counted without one (the names are the launches' source text).
void count_launch(const char* kernel) {
    static const char* const path = std::getenv("MANTISSA_EMU_LAUNCHES");
    if (!path) return;
    static std::map<std::string, unsigned long long>& counts =
        *new std::map<std::string, unsigned long long>; // never destroyed: read at exit
    static const bool registered = [] {
        std::atexit([] {
            if (std::FILE* f = std::fopen(path, "w")) {
                for (const auto& [name, n] : counts) std::fprintf(f, "%llu %s\n", n, name.c_str());
                std::fclose(f);
            }
        });
        return true;
    }();
    (void)registered;
    ++counts[kernel];
}

void run_grid(const char* kernel, dim3 grid, dim3 block, const std::function<void()>& body) {
    const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
    std::lock_guard lock(g_launch_mutex);
    install_fault_report();
    count_launch(kernel);
    Run run;
    run.kernel = kernel;
    run.body = &body;
    run.fibers.resize(threads);
    // The stacks outlive the launch (a new mapping per thread and launch was most of the time),
    // each above an inaccessible page, so an overflow stops with the fault report.
    static std::vector<char*>& stacks = *new std::vector<char*>;
    while (stacks.size() < threads) stacks.push_back(map_fiber_stack());
    for (std::size_t i = 0; i < threads; ++i) run.fibers[i].stack = stacks[i];
    run.slots.assign(threads * 16, 0);
    g_run = &run;
    // Blocks run in a shuffled order too (up to 65,536 of them; a bigger grid in order), so a
    // block that reads what another writes in the same launch shows whichever order hid it.
    // MANTISSA_EMU_SEED varies both orders from run to run.
    static const unsigned seed = [] {
        const char* text = std::getenv("MANTISSA_EMU_SEED");
        return text ? static_cast<unsigned>(std::strtoul(text, nullptr, 10)) : 12345u;
    }();
    std::mt19937 order_rng(seed);
    const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z;
    std::vector<unsigned long long> block_order;
    if (blocks <= 65536) {
        block_order.resize(blocks);
        for (unsigned long long b = 0; b < blocks; ++b) block_order[b] = b;
        std::shuffle(block_order.begin(), block_order.end(), order_rng);
    }
    // The first block runs as fibers. Where it met no barrier and no shuffle, the kernel has none
    // (CUDA asks every thread of a block to meet the same barriers), and the other blocks run
    // each thread straight through, several times faster (fail_direct guards the assumption).
    for (unsigned long long b = 0; b < blocks; ++b) {
        const unsigned long long linear = block_order.empty() ? b : block_order[b];
        const uint3 where{static_cast<unsigned>(linear % grid.x),
                          static_cast<unsigned>(linear / grid.x % grid.y),
                          static_cast<unsigned>(linear / (1ull * grid.x * grid.y))};
        if (b == 0 || !run.direct)
            run_block(run, where, grid, block, order_rng);
        else
            run_block_direct(run, where, grid, block);
        if (b == 0) run.direct = run.barriers == 0;
    }
    g_run = nullptr;
    g_here = nullptr;
    check_canaries(kernel);
}

} // namespace mantissa_emu

// --- the CUDA runtime API the engine calls ----------------------------------------------------

using mantissa_emu::g_last_error;

namespace mantissa_emu {
// The stream this host thread captures: under cudaStreamCaptureModeThreadLocal only the capturing
// thread's unsafe calls invalidate it (the GUI thread may allocate while the worker captures).
thread_local CUstream_st* g_capture = nullptr;

// The device's default memory pool: the emulator maps every allocation apart (its guard page)
// and keeps nothing, so only the release threshold the engine sets is held, for a test to read.
std::atomic<std::uint64_t> g_pool_release_threshold{0}; // CUDA's default
} // namespace mantissa_emu

// The default pool's handle (one device).
struct CUmemPoolHandle_st {};

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
    *count = 1;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
    return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
    if (device != 0) return cudaErrorInvalidDevice;
    *prop = cudaDeviceProp{};
#if defined(MANTISSA_EMU_FP8_CONVERSIONS) // the emulated GPU (tests/cuda_emu/CMakeLists.txt)
    std::snprintf(prop->name, sizeof prop->name, "cuda-emu Hopper (kernels emulated on the CPU)");
    prop->major = 9;
#else
    std::snprintf(prop->name, sizeof prop->name, "cuda-emu Ampere (kernels emulated on the CPU)");
    prop->major = 8;
#endif
    prop->minor = 0;
    prop->totalGlobalMem = mantissa_emu::kDeviceBytes;
    prop->multiProcessorCount = 4;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->sharedMemPerBlock = 48 * 1024;
    return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* version) {
    *version = 13000;
    return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
    *version = 13000;
    return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
    *total = mantissa_emu::kDeviceBytes;
    *free_bytes = *total - mantissa_emu::in_use();
    return cudaSuccess;
}
const char* cudaGetErrorName(cudaError_t error) {
    return error == cudaSuccess ? "cudaSuccess" : "cudaError (emulated)";
}
const char* cudaGetErrorString(cudaError_t error) {
    switch (error) {
    case cudaSuccess:
        return "no error";
    case cudaErrorInvalidConfiguration:
        return "invalid configuration argument (emulated launch check)";
    case cudaErrorMemoryAllocation:
        return "out of memory (emulated)";
    case cudaErrorNotSupported:
        return "operation not supported by the kernel emulator";
    default:
        return "an emulated CUDA error";
    }
}
cudaError_t cudaGetLastError(void) {
    const cudaError_t e = g_last_error;
    g_last_error = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void) {
    return g_last_error;
}

// A call CUDA refuses while this thread captures a stream (cudaStreamCaptureModeThreadLocal: a
// synchronising or allocating call): the capture is invalidated, as CUDA's is, so a step that
// synchronises with the host or allocates fails its capture here as it would on a GPU.
static cudaError_t refused_in_capture(const char* call) {
    CUstream_st* capture = mantissa_emu::g_capture;
    if (capture == nullptr) return cudaSuccess;
    std::fprintf(stderr, "cuda-emu: %s during a stream capture (CUDA refuses it there)\n", call);
    capture->invalidated = true;
    return cudaErrorStreamCaptureUnsupported;
}

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
    if (const cudaError_t e = refused_in_capture("cudaMalloc")) return e;
    *ptr = mantissa_emu::map_device(bytes);
    return *ptr != nullptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t stream) {
    *ptr = mantissa_emu::map_device(bytes);
    if (*ptr == nullptr) return cudaErrorMemoryAllocation;
    // In a capture: a graph allocation, which keeps its address for the graph's life.
    if (stream != nullptr && stream->capturing) stream->owned->ptrs.push_back(*ptr);
    return cudaSuccess;
}
cudaError_t cudaFree(void* ptr) {
    if (const cudaError_t e = refused_in_capture("cudaFree")) return e;
    mantissa_emu::unmap_device(ptr);
    return cudaSuccess;
}
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
    if (stream != nullptr && stream->capturing) {
        auto& owned = stream->owned->ptrs;
        if (std::find(owned.begin(), owned.end(), ptr) != owned.end())
            return cudaSuccess; // the graph's own allocation: freed with the graph
    }
    mantissa_emu::enqueue(stream, [ptr] { mantissa_emu::unmap_device(ptr); });
    return cudaSuccess;
}
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
    static CUmemPoolHandle_st the_pool;
    if (device != 0) return cudaErrorInvalidDevice;
    *pool = &the_pool;
    return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
    if (pool == nullptr || value == nullptr) return cudaErrorInvalidValue;
    if (attr == cudaMemPoolAttrReleaseThreshold)
        mantissa_emu::g_pool_release_threshold = *static_cast<const std::uint64_t*>(value);
    return cudaSuccess;
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t) {
    return pool == nullptr ? cudaErrorInvalidValue : cudaSuccess; // it keeps nothing to trim
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
    if (pool == nullptr || value == nullptr) return cudaErrorInvalidValue;
    if (attr != cudaMemPoolAttrReleaseThreshold) return cudaErrorNotSupported;
    *static_cast<std::uint64_t*>(value) = mantissa_emu::g_pool_release_threshold;
    return cudaSuccess;
}
cudaError_t cudaMallocHost(void** ptr, size_t bytes) {
    if (const cudaError_t e = refused_in_capture("cudaMallocHost")) return e;
    *ptr = std::malloc(std::max<size_t>(bytes, 1));
    return *ptr != nullptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFreeHost(void* ptr) {
    if (const cudaError_t e = refused_in_capture("cudaFreeHost")) return e;
    std::free(ptr);
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind) {
    if (const cudaError_t e = refused_in_capture("cudaMemcpy")) return e;
    std::memmove(dst, src, count);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind,
                            cudaStream_t stream) {
    // In a capture, the source is read at each replay, as a graph's memcpy node reads it.
    mantissa_emu::enqueue(stream, [dst, src, count] { std::memmove(dst, src, count); });
    return cudaSuccess;
}
cudaError_t cudaMemset(void* ptr, int value, size_t count) {
    if (const cudaError_t e = refused_in_capture("cudaMemset")) return e;
    std::memset(ptr, value, count);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) {
    mantissa_emu::enqueue(stream, [ptr, value, count] { std::memset(ptr, value, count); });
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
    *stream = new CUstream_st;
    return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    delete stream;
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
    if (const cudaError_t e = refused_in_capture("cudaStreamSynchronize")) return e;
    return cudaSuccess; // every call ran when it was made
}
cudaError_t cudaDeviceSynchronize(void) {
    if (const cudaError_t e = refused_in_capture("cudaDeviceSynchronize")) return e;
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* event) {
    *event = new CUevent_st;
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
    delete event;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    mantissa_emu::enqueue(stream, [event] { event->at = std::chrono::steady_clock::now(); });
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) {
    if (const cudaError_t e = refused_in_capture("cudaEventSynchronize")) return e;
    return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
    return cudaSuccess;
}

// CUDA Graphs: a captured stream records its launches, copies, fills and events as nodes (a
// launch's arguments copied, as CUDA copies them), which each replay runs in order.
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
    if (stream == nullptr || stream->capturing || mantissa_emu::g_capture != nullptr)
        return cudaErrorIllegalState;
    stream->capturing = true;
    stream->invalidated = false;
    stream->nodes.clear();
    stream->owned = std::make_shared<mantissa_emu::GraphMemory>();
    mantissa_emu::g_capture = stream;
    return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
    if (stream == nullptr || !stream->capturing) return cudaErrorIllegalState;
    stream->capturing = false;
    mantissa_emu::g_capture = nullptr;
    *graph = nullptr;
    if (stream->invalidated) {
        stream->nodes.clear();
        stream->owned.reset();
        return cudaErrorStreamCaptureInvalidated;
    }
    *graph = new CUgraph_st{std::move(stream->nodes), std::move(stream->owned)};
    stream->nodes.clear();
    return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
    *exec = new CUgraphExec_st{graph->nodes, graph->owned};
    return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
    for (const EmuNode& node : exec->nodes) mantissa_emu::enqueue(stream, node.run);
    return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    delete graph;
    return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    delete exec;
    return cudaSuccess;
}

} // extern "C"
