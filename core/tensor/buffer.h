// Buffer: move-only owner of one block of backend memory (host or device), freed by its backend.
// A Plan holds one Buffer, its arena, and carves every Tensor out of it.
#pragma once

#include <cstddef>
#include <utility>

namespace mantissa {

class Buffer {
public:
    using Deleter = void (*)(void* ptr, void* context);

    Buffer() = default;
    Buffer(void* ptr, std::size_t size, Deleter deleter, void* context)
        : m_ptr(ptr), m_size(size), m_deleter(deleter), m_context(context) {}
    ~Buffer() { reset(); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& other) noexcept { *this = std::move(other); }
    Buffer& operator=(Buffer&& other) noexcept {
        if (this != &other) {
            reset();
            std::swap(m_ptr, other.m_ptr);
            std::swap(m_size, other.m_size);
            std::swap(m_deleter, other.m_deleter);
            std::swap(m_context, other.m_context);
        }
        return *this;
    }

    void* data() const { return m_ptr; }
    std::size_t size() const { return m_size; }
    explicit operator bool() const { return m_ptr != nullptr; }
    void reset() {
        if (m_ptr && m_deleter) m_deleter(m_ptr, m_context);
        m_ptr = nullptr;
        m_size = 0;
    }

private:
    void* m_ptr = nullptr;
    std::size_t m_size = 0;
    Deleter m_deleter = nullptr;
    void* m_context = nullptr;
};

} // namespace mantissa
