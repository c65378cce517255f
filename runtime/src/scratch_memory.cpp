#include <attnforge/runtime/scratch_memory.hpp>

#include <HalideRuntime.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace attnforge::runtime::scratch {

namespace {

// Every block, cached or not, starts with this header, kAlignment bytes long, so the caller's pointer
// stays aligned, the bytes before it are ours (readable, as Halide requires) and release() knows the size.
struct Header {
    std::size_t capacity;  // usable bytes after the header
};
static_assert(sizeof(Header) <= kAlignment);
constexpr std::size_t kTail = kAlignment;  // readable bytes past the end

std::size_t round_up(std::size_t n, std::size_t to) {
    return (n + to - 1) / to * to;
}

Header* header_of(void* block) {
    return reinterpret_cast<Header*>(static_cast<char*>(block) - kAlignment);
}

struct ThreadCache {
    std::vector<Header*> free_blocks;  // oldest first
    std::size_t cached_bytes = 0, reuses = 0, fresh = 0;

    ~ThreadCache() { trim(); }

    void trim() {
        for (Header* h : free_blocks) std::free(h);
        free_blocks.clear();
        cached_bytes = 0;
    }

    // The smallest cached block that fits and is at most twice the request.
    Header* take(std::size_t size) {
        std::size_t best = free_blocks.size();
        for (std::size_t i = 0; i < free_blocks.size(); ++i) {
            const std::size_t c = free_blocks[i]->capacity;
            if (c >= size && c / 2 <= size && (best == free_blocks.size() || c < free_blocks[best]->capacity)) best = i;
        }
        if (best == free_blocks.size()) return nullptr;
        Header* h = free_blocks[best];
        free_blocks.erase(free_blocks.begin() + static_cast<std::ptrdiff_t>(best));
        cached_bytes -= h->capacity;
        ++reuses;
        return h;
    }

    void give(Header* h) {
        if (h->capacity > kMaxCachedBytes) {
            std::free(h);
            return;
        }
        free_blocks.push_back(h);
        cached_bytes += h->capacity;
        while (free_blocks.size() > kMaxCachedBlocks || cached_bytes > kMaxCachedBytes) {
            // Too many blocks: the smallest goes (allocated again cheaply; a large one would page-fault again), so
            // a kernel's many small blocks never push out its large ones. Too many bytes: the oldest.
            auto victim = free_blocks.begin();
            if (cached_bytes <= kMaxCachedBytes)
                victim = std::min_element(free_blocks.begin(), free_blocks.end(),
                                          [](const Header* a, const Header* b) { return a->capacity < b->capacity; });
            cached_bytes -= (*victim)->capacity;
            std::free(*victim);
            free_blocks.erase(victim);
        }
    }
};

ThreadCache& cache() {
    thread_local ThreadCache c;
    return c;
}

}  // namespace

void* allocate(void*, std::size_t size) {
    const std::size_t capacity = round_up(size == 0 ? 1 : size, kAlignment);
    ThreadCache& c = cache();
    Header* h = c.take(capacity);
    if (!h) {
        void* raw = std::aligned_alloc(kAlignment, kAlignment + capacity + kTail);
        if (!raw) return nullptr;  // Halide reports halide_error_code_out_of_memory
        h = static_cast<Header*>(raw);
        h->capacity = capacity;
        ++c.fresh;
    }
    return reinterpret_cast<char*>(h) + kAlignment;
}

void release(void*, void* block) {
    if (!block) return;
    cache().give(header_of(block));
}

void install() {
    static std::once_flag once;
    std::call_once(once, [] {
        halide_set_custom_malloc(&allocate);
        halide_set_custom_free(&release);
    });
}

void trim_this_thread() {
    cache().trim();
}

Stats this_thread_stats() {
    const ThreadCache& c = cache();
    return {c.free_blocks.size(), c.cached_bytes, c.reuses, c.fresh};
}

}  // namespace attnforge::runtime::scratch
