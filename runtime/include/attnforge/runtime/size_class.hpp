// Size classes of kernel lines (generated/kernels.list, tuned kernels from tuning records): the key
// lengths Lk a kernel serves. "any", "Lk<=N", "Lk>N", or "A<Lk<=B" (a tuning record's bucket).
#pragma once

#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace attnforge::runtime {

inline bool size_class_holds(std::string_view cls, std::int64_t lk) {
    if (cls == "any") return true;
    auto number = [&](std::size_t from, std::size_t to) {
        std::int64_t n = 0;
        const auto r = std::from_chars(cls.data() + from, cls.data() + to, n);
        if (r.ec != std::errc() || r.ptr != cls.data() + to)
            throw std::logic_error("kernel list: bad number in size class '" + std::string(cls) + "'");
        return n;
    };
    if (cls.starts_with("Lk<=")) return lk <= number(4, cls.size());
    if (cls.starts_with("Lk>")) return lk > number(3, cls.size());
    if (const auto mid = cls.find("<Lk<="); mid != std::string_view::npos && mid > 0)
        return lk > number(0, mid) && lk <= number(mid + 5, cls.size());
    throw std::logic_error("kernel list: unknown size class '" + std::string(cls) + "'");
}

}  // namespace attnforge::runtime
