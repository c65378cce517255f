// fixed_string: a compile-time string usable as a template argument (C++20 class-type NTTP).
// Input names, sequence tags and node labels are fixed_strings, so they appear verbatim in the
// compiler's "required from" lines of a failed shape check.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace attnforge::dsl {

template <std::size_t N>
struct fixed_string {
    char chars[N + 1] = {};

    constexpr fixed_string() = default;
    constexpr fixed_string(const char (&s)[N + 1]) { std::copy_n(s, N + 1, chars); }

    static constexpr std::size_t length = N;
    constexpr std::string_view view() const { return {chars, N}; }
    template <std::size_t M>
    constexpr bool operator==(const fixed_string<M>& other) const {
        return view() == other.view();
    }
};
template <std::size_t N>
fixed_string(const char (&)[N]) -> fixed_string<N - 1>;

namespace detail {
template <std::size_t N>
constexpr auto as_fixed(const fixed_string<N>& s) {
    return s;
}
template <std::size_t N>
constexpr auto as_fixed(const char (&s)[N]) {
    return fixed_string<N - 1>(s);
}
}  // namespace detail

// cat("a", fs, "b", ...): concatenation of fixed_strings and string literals at compile time.
template <class... Parts>
constexpr auto cat(const Parts&... parts) {
    constexpr std::size_t total = (std::remove_cvref_t<decltype(detail::as_fixed(parts))>::length + ... + 0);
    fixed_string<total> out;
    std::size_t at = 0;
    (
        [&](const auto& part) {
            const auto f = detail::as_fixed(part);
            for (std::size_t i = 0; i < f.length; ++i) out.chars[at++] = f.chars[i];
        }(parts),
        ...);
    out.chars[total] = '\0';
    return out;
}

// The decimal spelling of an integer, as a fixed_string.
template <long long V>
constexpr auto int_string() {
    constexpr auto digits = [] {
        std::size_t n = V <= 0 ? 1 : 0;
        for (long long v = V; v != 0; v /= 10) ++n;
        return n;
    }();
    fixed_string<digits> out;
    long long v = V < 0 ? -V : V;
    std::size_t at = digits;
    do {
        out.chars[--at] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    if (V < 0) out.chars[0] = '-';
    out.chars[digits] = '\0';
    return out;
}

}  // namespace attnforge::dsl
