#include <attnforge/dsl/passes/bind_shapes.hpp>
#include <attnforge/runtime/input_conversion.hpp>
#include <attnforge/runtime/storage_types.hpp>

#include <cstring>

namespace attnforge::runtime {

namespace {

using dsl::element_type;

bool is_16_bit(GivenType t) {
    return t == GivenType::float16 || t == GivenType::bfloat16;
}

double read_value(const std::uint8_t* p, GivenType t) {
    switch (t) {
        case GivenType::float32: { float v; std::memcpy(&v, p, 4); return v; }
        case GivenType::float64: { double v; std::memcpy(&v, p, 8); return v; }
        case GivenType::float16: { std::uint16_t v; std::memcpy(&v, p, 2); return float_from_fp16(v); }
        case GivenType::bfloat16: { std::uint16_t v; std::memcpy(&v, p, 2); return float_from_bf16(v); }
        case GivenType::boolean:
        case GivenType::uint8: return *p;
        case GivenType::int8: return static_cast<std::int8_t>(*p);
        case GivenType::int32: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
        case GivenType::int64: { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
        default: return 0;
    }
}

std::uint16_t to_16_bit(float v, element_type t) {
    return t == element_type::bfloat16 ? bf16_from_float(v) : fp16_from_float(v);
}

}  // namespace

GivenType given_type_of(element_type t) {
    switch (t) {
        case element_type::boolean: return GivenType::boolean;
        case element_type::int32: return GivenType::int32;
        case element_type::bfloat16: return GivenType::bfloat16;
        case element_type::float16: return GivenType::float16;
        case element_type::uint8: return GivenType::uint8;
        case element_type::int8: return GivenType::int8;
        case element_type::float32: return GivenType::float32;
    }
    return GivenType::other;
}

std::size_t given_bytes(GivenType t) {
    switch (t) {
        case GivenType::float64:
        case GivenType::int64: return 8;
        case GivenType::float32:
        case GivenType::int32: return 4;
        case GivenType::float16:
        case GivenType::bfloat16: return 2;
        case GivenType::other: return 0;
        default: return 1;
    }
}

std::span<const GivenType> also_taken(element_type input) {
    // Static lists: takes() runs once per element of a strided array, and allocates nothing.
    static constexpr GivenType mask[] = {GivenType::uint8};
    static constexpr GivenType index[] = {GivenType::int64, GivenType::float32, GivenType::float64};
    static constexpr GivenType real[] = {GivenType::float64, GivenType::float16, GivenType::bfloat16};
    static constexpr GivenType storage[] = {GivenType::float32, GivenType::float64};
    switch (input) {
        case element_type::boolean: return mask;
        case element_type::uint8:
        case element_type::int8: return {};
        case element_type::int32: return index;
        case element_type::float32: return real;
        case element_type::bfloat16:
        case element_type::float16: return storage;
    }
    return {};
}

bool takes(element_type input, GivenType given) {
    if (given == given_type_of(input)) return true;
    for (GivenType t : also_taken(input))
        if (t == given) return true;
    return false;
}

std::string taken_text(element_type input, const std::function<std::string(GivenType)>& name) {
    std::string others;
    for (GivenType t : also_taken(input)) {
        const std::string n = name(t);
        if (!n.empty()) others += (others.empty() ? "" : ", ") + n;
    }
    std::string text = name(given_type_of(input));
    if (others.empty()) return text;
    const char* how = input == element_type::int32 ? " holding whole numbers"
                      : input == element_type::bfloat16 || input == element_type::float16 ? ": rounded"
                                                                                           : "";
    return text + " (or " + others + how + ")";
}

void convert_element(const std::uint8_t* from, GivenType given, element_type input, std::uint8_t* to,
                     std::size_t index, const std::string& what) {
    if (!takes(input, given)) return;
    switch (input) {
        case element_type::boolean: to[index] = *from != 0; return;
        case element_type::uint8:
        case element_type::int8: to[index] = *from; return;
        case element_type::int32: {
            const std::int32_t x = dsl::index_value(read_value(from, given), what, index);
            std::memcpy(to + 4 * index, &x, 4);
            return;
        }
        case element_type::float32: {
            const auto v = static_cast<float>(read_value(from, given));  // float64 through float32, as the CLI did
            std::memcpy(to + 4 * index, &v, 4);
            return;
        }
        case element_type::bfloat16:
        case element_type::float16: {
            // Its own 16-bit type as it is (a 16-bit value is never re-rounded); wider ones rounded once.
            std::uint16_t bits;
            if (is_16_bit(given))
                std::memcpy(&bits, from, 2);
            else
                bits = to_16_bit(static_cast<float>(read_value(from, given)), input);
            std::memcpy(to + 2 * index, &bits, 2);
            return;
        }
    }
}

void convert_elements(const std::uint8_t* from, GivenType given, std::size_t count, element_type input,
                      std::uint8_t* to, const std::string& what) {
    if (!takes(input, given)) return;
    if (given == given_type_of(input)) {
        if (input == element_type::boolean)
            for (std::size_t i = 0; i < count; ++i) to[i] = from[i] != 0;
        else if (count)
            std::memcpy(to, from, count * given_bytes(given));
        return;
    }
    if (given == GivenType::float32 && (input == element_type::bfloat16 || input == element_type::float16)) {
        // The common case (float32 arrays into a 16-bit kernel) in one tight loop: element by element it
        // costs ~8 ns an element, as much as the kernel at small sizes.
        const auto* src = reinterpret_cast<const float*>(from);
        auto* dst = reinterpret_cast<std::uint16_t*>(to);
        if (input == element_type::bfloat16)
            for (std::size_t i = 0; i < count; ++i) dst[i] = bf16_from_float(src[i]);
        else
            for (std::size_t i = 0; i < count; ++i) dst[i] = fp16_from_float(src[i]);
        return;
    }
    const std::size_t step = given_bytes(given);
    for (std::size_t i = 0; i < count; ++i) convert_element(from + i * step, given, input, to, i, what);
}

}  // namespace attnforge::runtime
