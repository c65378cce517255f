// Size classes: the key lengths Lk a kernel serves, "any", "Lk<=N", "Lk>N" (lines of a kernel list) or
// "A<Lk<=B" (a tuning record's bucket); or the query lengths, "Lq<=N", "Lq>N" (a decode kernel serves a
// few queries over any number of keys); or one of each, "Lq<=N,Lk>M". For a (variant, result) the runtime takes the first kernel
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
#include <tuple>

namespace attnforge::catalogue {

// The bounds of a size class: Lk in (above, at_most] and Lq in (queries_above, queries_at_most]; nullopt where
// a side is open.
struct SizeBounds {
    std::optional<std::int64_t> above, at_most;
    std::optional<std::int64_t> queries_above, queries_at_most;
};

namespace detail {

// One bound of a size class ("Lk<=N", "Lk>N", "A<Lk<=B", "Lq<=N", "Lq>N"; not "any"): whether it is on Lq, and
// its (above, at_most].
struct OneBound {
    bool on_queries = false;
    std::optional<std::int64_t> above, at_most;
};

inline std::optional<OneBound> parse_one_bound(std::string_view cls) {
    auto number = [&](std::size_t from, std::size_t to) -> std::optional<std::int64_t> {
        std::int64_t n = 0;
        if (from >= to) return std::nullopt;
        const auto r = std::from_chars(cls.data() + from, cls.data() + to, n);
        if (r.ec != std::errc() || r.ptr != cls.data() + to || n < 0) return std::nullopt;
        return n;
    };
    if (cls.starts_with("Lq<=")) {
        const auto n = number(4, cls.size());
        return n ? std::optional(OneBound{true, std::nullopt, n}) : std::nullopt;
    }
    if (cls.starts_with("Lq>")) {
        const auto n = number(3, cls.size());
        return n ? std::optional(OneBound{true, n, std::nullopt}) : std::nullopt;
    }
    if (cls.starts_with("Lk<=")) {
        const auto n = number(4, cls.size());
        return n ? std::optional(OneBound{false, std::nullopt, n}) : std::nullopt;
    }
    if (cls.starts_with("Lk>")) {
        const auto n = number(3, cls.size());
        return n ? std::optional(OneBound{false, n, std::nullopt}) : std::nullopt;
    }
    if (const auto mid = cls.find("<Lk<="); mid != std::string_view::npos) {
        const auto low = number(0, mid), high = number(mid + 5, cls.size());
        if (low && high && *low < *high) return OneBound{false, low, high};
    }
    return std::nullopt;
}

}  // namespace detail

// nullopt when `cls` is not a size class (the catalogue reports that with the line it came from). A class is
// "any", one bound, or a bound on Lq and one on Lk joined by a comma, both of which must hold ("Lq<=16,Lk>16384":
// a decode kernel's few queries over long caches; a tuning record of the decode strategy is one of these).
inline std::optional<SizeBounds> parse_size_class(std::string_view cls) {
    if (cls == "any") return SizeBounds{};
    SizeBounds s;
    auto add = [&](const detail::OneBound& b) {
        if (b.on_queries)
            std::tie(s.queries_above, s.queries_at_most) = std::tie(b.above, b.at_most);
        else
            std::tie(s.above, s.at_most) = std::tie(b.above, b.at_most);
    };
    const auto comma = cls.find(',');
    const auto first = detail::parse_one_bound(cls.substr(0, comma));
    if (!first) return std::nullopt;
    add(*first);
    if (comma == std::string_view::npos) return s;
    const auto second = detail::parse_one_bound(cls.substr(comma + 1));
    if (!second || second->on_queries == first->on_queries) return std::nullopt;  // one bound on each length
    add(*second);
    return s;
}

// The part of a class that bounds Lq ("Lq<=16" of "Lq<=16,Lk>16384"), written from its parsed bound; nullopt
// where the class has none (or is not a class). A tuned decode kernel takes its decode line's part
// (catalogue.cpp), so the class syntax stays in this file.
inline std::optional<std::string> query_bound(std::string_view cls) {
    const auto b = parse_size_class(cls);
    if (!b) return std::nullopt;
    if (b->queries_at_most) return "Lq<=" + std::to_string(*b->queries_at_most);
    if (b->queries_above) return "Lq>" + std::to_string(*b->queries_above);
    return std::nullopt;
}

// Whether the class bounds Lq: "Lq<=16" and "Lq<=16,Lk>N" do.
inline bool bounds_queries(std::string_view cls) { return query_bound(cls).has_value(); }

// Whether parsed bounds hold for key length lk and query length lq.
inline bool bounds_hold(const SizeBounds& b, std::int64_t lk, std::int64_t lq) {
    auto within = [](std::int64_t n, const std::optional<std::int64_t>& above, const std::optional<std::int64_t>& at_most) {
        return (!above || n > *above) && (!at_most || n <= *at_most);
    };
    return within(lk, b.above, b.at_most) && within(lq, b.queries_above, b.queries_at_most);
}

// lq: the query length, for classes on Lq (where it is not known, 0: a few queries).
inline bool size_class_holds(std::string_view cls, std::int64_t lk, std::int64_t lq = 0) {
    const auto b = parse_size_class(cls);
    if (!b) throw std::logic_error("kernel list: '" + std::string(cls) + "' is not a size class");
    return bounds_hold(*b, lk, lq);
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
