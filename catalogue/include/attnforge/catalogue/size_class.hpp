// Size classes: the key lengths Lk a kernel serves, "any", "Lk<=N", "Lk>N" (lines of a kernel list) or
// "A<Lk<=B" (a tuning record's bucket); or the query lengths, "Lq<=N", "Lq>N" (a decode kernel serves a
// few queries over any number of keys). For a (variant, result) the runtime takes the first kernel
// whose class holds: the rule. Header-only: the shipped runtime applies the rule, the catalogue checks
// every class when it reads a list, and the tuner names its buckets with size_bucket.
#pragma once

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace attnforge::catalogue {

// The bounds of a size class: Lk in (above, at_most]; nullopt where a side is open.
struct SizeBounds {
    std::optional<std::int64_t> above, at_most;
    bool on_queries = false;  // the bounds are on Lq, not Lk
};

// nullopt when `cls` is not a size class (the catalogue reports that with the line it came from).
inline std::optional<SizeBounds> parse_size_class(std::string_view cls) {
    auto number = [&](std::size_t from, std::size_t to) -> std::optional<std::int64_t> {
        std::int64_t n = 0;
        if (from >= to) return std::nullopt;
        const auto r = std::from_chars(cls.data() + from, cls.data() + to, n);
        if (r.ec != std::errc() || r.ptr != cls.data() + to || n < 0) return std::nullopt;
        return n;
    };
    if (cls == "any") return SizeBounds{};
    if (cls.starts_with("Lq<=")) {
        const auto n = number(4, cls.size());
        return n ? std::optional(SizeBounds{std::nullopt, n, true}) : std::nullopt;
    }
    if (cls.starts_with("Lq>")) {
        const auto n = number(3, cls.size());
        return n ? std::optional(SizeBounds{n, std::nullopt, true}) : std::nullopt;
    }
    if (cls.starts_with("Lk<=")) {
        const auto n = number(4, cls.size());
        return n ? std::optional(SizeBounds{std::nullopt, n}) : std::nullopt;
    }
    if (cls.starts_with("Lk>")) {
        const auto n = number(3, cls.size());
        return n ? std::optional(SizeBounds{n, std::nullopt}) : std::nullopt;
    }
    if (const auto mid = cls.find("<Lk<="); mid != std::string_view::npos) {
        const auto low = number(0, mid), high = number(mid + 5, cls.size());
        if (low && high && *low < *high) return SizeBounds{low, high};
    }
    return std::nullopt;
}

// lq: the query length, for classes on Lq (where it is not known, 0: a few queries).
inline bool size_class_holds(std::string_view cls, std::int64_t lk, std::int64_t lq = 0) {
    const auto bounds = parse_size_class(cls);
    if (!bounds) throw std::logic_error("kernel list: '" + std::string(cls) + "' is not a size class");
    const std::int64_t n = bounds->on_queries ? lq : lk;
    return (!bounds->above || n > *bounds->above) && (!bounds->at_most || n <= *bounds->at_most);
}

// The size bucket of a key length, the unit of tuning records and of tuned kernels' size classes:
// powers of two, "Lk<=64", then "64<Lk<=128", "128<Lk<=256", ...
inline std::string size_bucket(std::int64_t key_length) {
    const auto upper = std::bit_ceil(static_cast<std::uint64_t>(std::max<std::int64_t>(key_length, 1)));
    if (upper <= 64) return "Lk<=64";
    return std::to_string(upper / 2) + "<Lk<=" + std::to_string(upper);
}

// The smallest key length of that bucket (1 for "Lk<=64").
inline std::int64_t bucket_low(std::int64_t key_length) {
    const auto upper = std::bit_ceil(static_cast<std::uint64_t>(std::max<std::int64_t>(key_length, 1)));
    return upper <= 64 ? 1 : static_cast<std::int64_t>(upper / 2 + 1);
}

}  // namespace attnforge::catalogue
