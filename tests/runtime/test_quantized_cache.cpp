// Writing tokens into a quantized cache (runtime/quantized_cache.hpp): uint8 by token (codes within half a step of
// the values, the extremes codes 0 and 255, constant rows exact) and int8 symmetric by token or group of channels
// (within half a step, the largest magnitude ±127, 0 exact), the slots written and no others, and bad input refused
// before anything is written; uint8 keys by channel of blocks of tokens (a block's codes and scales the same whatever
// the steps its tokens came in); then the decode_u8, decode_i8, decode_i8_g32 and decode_u8_kc128 kernels over the
// caches it wrote equal decode over the values those caches stand for.
#define BOOST_TEST_MODULE quantized_cache
#include <attnforge/errors.hpp>
#include <attnforge/runtime/engine.hpp>
#include <attnforge/runtime/quantized_cache.hpp>
#include <attnforge/runtime/run.hpp>
#include <attnforge/testing/synthetic_inputs.hpp>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

namespace runtime = attnforge::runtime;
using attnforge::dsl::element_type;

namespace {

// A cache of B entries, H heads, Lmax slots of E values: its codes, scales and zero points, every byte 7 and every
// number −1 to begin with, so that a slot written and one left alone tell apart.
struct Cache {
    std::int64_t B, H, Lmax, E;
    runtime::Tensor codes, scale, zero;
    Cache(std::int64_t b, std::int64_t h, std::int64_t lmax, std::int64_t e)
        : B(b),
          H(h),
          Lmax(lmax),
          E(e),
          codes(runtime::Tensor::codes({b, h, lmax, e})),
          scale(runtime::Tensor::float32({b, h, lmax})),
          zero(runtime::Tensor::float32({b, h, lmax})) {
        std::fill(codes.u8.begin(), codes.u8.end(), 7);
        std::fill(scale.f32.begin(), scale.f32.end(), -1.0f);
        std::fill(zero.f32.begin(), zero.f32.end(), -1.0f);
    }
    void write(const runtime::Tensor& values, const runtime::Tensor& lengths) {
        runtime::quantize_into_cache(runtime::view_of(values), runtime::view_of(lengths),
                                     runtime::output_view_of(codes), runtime::output_view_of(scale),
                                     runtime::output_view_of(zero));
    }
    // The value slot l of (b, h) stands for, element e.
    double value(std::int64_t b, std::int64_t h, std::int64_t l, std::int64_t e) const {
        const std::size_t row = static_cast<std::size_t>((b * H + h) * Lmax + l);
        return (codes.u8[row * static_cast<std::size_t>(E) + static_cast<std::size_t>(e)] - double(zero.f32[row])) *
               scale.f32[row];
    }
};

// An int8 cache: codes and a scale per group of G channels of a token (G = E: per token, scales (B, H, Lmax)).
struct SymmetricCache {
    std::int64_t B, H, Lmax, E, G;
    runtime::Tensor codes, scale;
    SymmetricCache(std::int64_t b, std::int64_t h, std::int64_t lmax, std::int64_t e, std::int64_t g)
        : B(b),
          H(h),
          Lmax(lmax),
          E(e),
          G(g),
          codes(runtime::Tensor::codes({b, h, lmax, e}, element_type::int8)),
          scale(g == e ? runtime::Tensor::float32({b, h, lmax}) : runtime::Tensor::float32({b, h, lmax, e / g})) {
        std::fill(codes.u8.begin(), codes.u8.end(), 7);
        std::fill(scale.f32.begin(), scale.f32.end(), -1.0f);
    }
    void write(const runtime::Tensor& values, const runtime::Tensor& lengths) {
        runtime::quantize_into_cache(runtime::view_of(values), runtime::view_of(lengths),
                                     runtime::output_view_of(codes), runtime::output_view_of(scale));
    }
    std::int8_t code(std::int64_t b, std::int64_t h, std::int64_t l, std::int64_t e) const {
        return static_cast<std::int8_t>(codes.u8[static_cast<std::size_t>(((b * H + h) * Lmax + l) * E + e)]);
    }
    float scale_of(std::int64_t b, std::int64_t h, std::int64_t l, std::int64_t e) const {
        return scale.f32[static_cast<std::size_t>(((b * H + h) * Lmax + l) * (E / G) + e / G)];
    }
    double value(std::int64_t b, std::int64_t h, std::int64_t l, std::int64_t e) const {
        return double(code(b, h, l, e)) * scale_of(b, h, l, e);
    }
};

// uint8 keys by channel: codes (B, H, Lmax, E), a scale and zero point per channel of each block of T tokens
// (B, H, ⌈Lmax/T⌉, E), and the open block's kept tokens (B, H, T, E); bytes 7 and numbers −1 to begin with.
struct ChannelCache {
    std::int64_t B, H, Lmax, E, T;
    runtime::Tensor codes, scale, zero, open_block;
    ChannelCache(std::int64_t b, std::int64_t h, std::int64_t lmax, std::int64_t e, std::int64_t t)
        : B(b),
          H(h),
          Lmax(lmax),
          E(e),
          T(t),
          codes(runtime::Tensor::codes({b, h, lmax, e})),
          scale(runtime::Tensor::float32({b, h, (lmax + t - 1) / t, e})),
          zero(runtime::Tensor::float32({b, h, (lmax + t - 1) / t, e})),
          open_block(runtime::Tensor::float32({b, h, t, e})) {
        std::fill(codes.u8.begin(), codes.u8.end(), 7);
        std::fill(scale.f32.begin(), scale.f32.end(), -1.0f);
        std::fill(zero.f32.begin(), zero.f32.end(), -1.0f);
        std::fill(open_block.f32.begin(), open_block.f32.end(), -1.0f);
    }
    void write(const runtime::Tensor& values, const runtime::Tensor& lengths) {
        runtime::quantize_into_cache(runtime::view_of(values), runtime::view_of(lengths),
                                     runtime::output_view_of(codes), runtime::output_view_of(scale),
                                     runtime::output_view_of(zero), runtime::output_view_of(open_block));
    }
    std::uint8_t code(std::int64_t b, std::int64_t h, std::int64_t l, std::int64_t e) const {
        return codes.u8[static_cast<std::size_t>(((b * H + h) * Lmax + l) * E + e)];
    }
    std::size_t block_at(std::int64_t b, std::int64_t h, std::int64_t l, std::int64_t e) const {
        return static_cast<std::size_t>(((b * H + h) * ((Lmax + T - 1) / T) + l / T) * E + e);
    }
    double value(std::int64_t b, std::int64_t h, std::int64_t l, std::int64_t e) const {
        const std::size_t at = block_at(b, h, l, e);
        return (double(code(b, h, l, e)) - zero.f32[at]) * scale.f32[at];
    }
};

runtime::Tensor random_values(std::vector<std::int64_t> shape, unsigned seed, float spread = 3.0f) {
    runtime::Tensor t = runtime::Tensor::float32(std::move(shape));
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal(0.5f, spread);
    for (float& v : t.f32) v = normal(gen);
    return t;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const attnforge::input_error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

BOOST_AUTO_TEST_CASE(codes_are_within_half_a_step_and_land_at_the_cache_lengths) {
    Cache cache(2, 3, 10, 64);
    const runtime::Tensor x = random_values({2, 3, 4, 64}, 1);
    cache.write(x, runtime::Tensor::int32({2}, {0, 6}));
    for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t h = 0; h < 3; ++h)
            for (std::int64_t l = 0; l < 10; ++l) {
                const std::int64_t first = b == 0 ? 0 : 6, n = l - first;
                const std::size_t row = static_cast<std::size_t>((b * 3 + h) * 10 + l);
                if (n < 0 || n >= 4) {  // not a new token's slot: untouched
                    BOOST_TEST(cache.scale.f32[row] == -1.0f);
                    BOOST_TEST(cache.codes.u8[row * 64] == 7);
                    continue;
                }
                float lo = 1e30f, hi = -1e30f;
                for (std::int64_t e = 0; e < 64; ++e) {
                    const float v = x.f32[static_cast<std::size_t>(((b * 3 + h) * 4 + n) * 64 + e)];
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
                BOOST_TEST(cache.scale.f32[row] == (hi - lo) / 255.0f, boost::test_tools::tolerance(1e-6f));
                for (std::int64_t e = 0; e < 64; ++e) {
                    const double v = x.f32[static_cast<std::size_t>(((b * 3 + h) * 4 + n) * 64 + e)];
                    const double error = std::abs(cache.value(b, h, l, e) - v);
                    BOOST_TEST(error <= 0.5 * cache.scale.f32[row] + 1e-5 * (std::abs(v) + 1));
                    const std::uint8_t code = cache.codes.u8[row * 64 + static_cast<std::size_t>(e)];
                    if (v == lo) BOOST_TEST(code == 0);  // the extremes: the ends of the codes
                    if (v == hi) BOOST_TEST(code == 255);
                }
            }
}

BOOST_AUTO_TEST_CASE(a_constant_row_is_exact) {
    Cache cache(1, 1, 2, 16);
    runtime::Tensor x = runtime::Tensor::float32({1, 1, 2, 16});
    std::fill(x.f32.begin(), x.f32.begin() + 16, -2.75f);
    std::fill(x.f32.begin() + 16, x.f32.end(), 0.0f);
    cache.write(x, runtime::Tensor::int32({1}, {0}));
    for (std::int64_t l = 0; l < 2; ++l)
        for (std::int64_t e = 0; e < 16; ++e) BOOST_TEST(cache.value(0, 0, l, e) == (l == 0 ? -2.75 : 0.0));
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_before_anything_is_written) {
    Cache cache(2, 2, 4, 8);
    const runtime::Tensor x = random_values({2, 2, 1, 8}, 2);
    const runtime::Tensor lengths = runtime::Tensor::int32({2}, {0, 3});
    // The second entry's slot 4 is past Lmax = 4: nothing written, the first entry's slot 0 included.
    const std::string past = error_of([&] { cache.write(random_values({2, 2, 2, 8}, 3), lengths); });
    BOOST_TEST(past.find("entry 1: slots 3..4") != std::string::npos, past);
    BOOST_TEST(past.find("Lmax = 4") != std::string::npos, past);
    BOOST_TEST(cache.scale.f32[0] == -1.0f);
    runtime::Tensor nan = x;
    nan.f32[5] = std::numeric_limits<float>::quiet_NaN();
    BOOST_TEST(error_of([&] { cache.write(nan, lengths); }).find("values must be finite; element 5") !=
               std::string::npos);
    BOOST_TEST(error_of([&] {
                   cache.write(random_values({2, 2, 1, 4}, 4), lengths);
               }).find("codes must be (B, Hkv, Lmax, E) = (2, 2, Lmax, 4)") != std::string::npos);
    BOOST_TEST(error_of([&] {
                   cache.write(x, runtime::Tensor::int32({3}, {0, 0, 0}));
               }).find("kv_length must be (B) = (2); given (3)") != std::string::npos);
    runtime::Tensor float_codes = runtime::Tensor::float32({2, 2, 4, 8});
    const std::string wrong_type = error_of([&] {
        runtime::quantize_into_cache(runtime::view_of(x), runtime::view_of(lengths),
                                     runtime::output_view_of(float_codes), runtime::output_view_of(cache.scale),
                                     runtime::output_view_of(cache.zero));
    });
    BOOST_TEST(wrong_type.find("codes must be uint8") != std::string::npos, wrong_type);
    BOOST_TEST(wrong_type.find("given float32") != std::string::npos, wrong_type);
    for (float s : cache.scale.f32) BOOST_TEST(s == -1.0f);
}

BOOST_AUTO_TEST_CASE(int8_codes_are_within_half_a_step_of_their_group) {
    for (std::int64_t G : {64, 32, 16}) {  // per token (G = E), q8_0's blocks, smaller groups
        BOOST_TEST_CONTEXT("G = " << G) {
            SymmetricCache cache(2, 2, 6, 64, G);
            runtime::Tensor x = random_values({2, 2, 3, 64}, 5);
            std::fill(x.f32.begin() + 64, x.f32.begin() + 128, 0.0f);  // a zero row: exact, its scale 1
            cache.write(x, runtime::Tensor::int32({2}, {0, 3}));
            for (std::int64_t b = 0; b < 2; ++b)
                for (std::int64_t h = 0; h < 2; ++h)
                    for (std::int64_t l = 0; l < 6; ++l) {
                        const std::int64_t n = l - (b == 0 ? 0 : 3);
                        if (n < 0 || n >= 3) {
                            BOOST_TEST(cache.scale_of(b, h, l, 0) == -1.0f);
                            BOOST_TEST(cache.code(b, h, l, 0) == 7);
                            continue;
                        }
                        for (std::int64_t g = 0; g < 64 / G; ++g) {
                            float top = 0.0f;
                            for (std::int64_t e = g * G; e < (g + 1) * G; ++e)
                                top = std::max(
                                    top, std::abs(x.f32[static_cast<std::size_t>(((b * 2 + h) * 3 + n) * 64 + e)]));
                            const float s = cache.scale_of(b, h, l, g * G);
                            BOOST_TEST(s == (top > 0 ? top / 127.0f : 1.0f), boost::test_tools::tolerance(1e-6f));
                            for (std::int64_t e = g * G; e < (g + 1) * G; ++e) {
                                const double v = x.f32[static_cast<std::size_t>(((b * 2 + h) * 3 + n) * 64 + e)];
                                BOOST_TEST(std::abs(cache.value(b, h, l, e) - v) <= 0.5 * s + 1e-5 * (std::abs(v) + 1));
                                if (top > 0 && std::abs(v) == top) BOOST_TEST(std::abs(cache.code(b, h, l, e)) == 127);
                                if (v == 0) BOOST_TEST(cache.value(b, h, l, e) == 0.0);
                            }
                        }
                    }
        }
    }
}

BOOST_AUTO_TEST_CASE(int8_bad_input_is_refused) {
    SymmetricCache cache(1, 1, 4, 64, 32);
    const runtime::Tensor x = random_values({1, 1, 1, 64}, 6);
    const runtime::Tensor lengths = runtime::Tensor::int32({1}, {0});
    runtime::Tensor three_groups = runtime::Tensor::float32({1, 1, 4, 3});  // 3 does not divide E = 64
    const std::string groups = error_of([&] {
        runtime::quantize_into_cache(runtime::view_of(x), runtime::view_of(lengths),
                                     runtime::output_view_of(cache.codes), runtime::output_view_of(three_groups));
    });
    BOOST_TEST(groups.find("with G dividing E = 64") != std::string::npos, groups);
    BOOST_TEST(groups.find("given (1, 1, 4, 3)") != std::string::npos, groups);
    Cache uint8_cache(1, 1, 4, 64);  // uint8 codes without a zero point
    const std::string type = error_of([&] {
        runtime::quantize_into_cache(runtime::view_of(x), runtime::view_of(lengths),
                                     runtime::output_view_of(uint8_cache.codes), runtime::output_view_of(cache.scale));
    });
    BOOST_TEST(type.find("codes must be int8") != std::string::npos, type);
    for (float s : cache.scale.f32) BOOST_TEST(s == -1.0f);
}

// Writes a prompt of `prompt` tokens (30), then five single tokens, into caches k and v (Cache, SymmetricCache or,
// for k, ChannelCache); then `variant` over them (its inputs: the caches' tensors by name) must give decode's output
// on the values they stand for: the kernels read the codes as the rule defines them.
template <class CK, class CV>
void expect_decode_of_written_cache(const std::string& variant, CK& k, CV& v,
                                    const std::function<runtime::TensorMap(const runtime::Tensor&)>& cache_inputs,
                                    unsigned seed, std::int64_t prompt = 30) {
    const std::int64_t B = k.B, Hkv = k.H, E = k.E, Lmax = k.Lmax, H = 4 * Hkv;
    runtime::Tensor lengths = runtime::Tensor::int32({B}, std::vector<std::int32_t>(static_cast<std::size_t>(B), 0));
    for (std::int64_t step = 0; step < 6; ++step) {
        const std::int64_t n = step == 0 ? prompt : 1;
        k.write(random_values({B, Hkv, n, E}, seed + unsigned(step)), lengths);
        v.write(random_values({B, Hkv, n, E}, seed + 10 + unsigned(step)), lengths);
        for (auto& l : lengths.i32) l += static_cast<std::int32_t>(n);
    }
    const runtime::Tensor q = random_values({B, H, 1, E}, seed + 20, 1.0f);
    runtime::Tensor dense_k = runtime::Tensor::float32({B, Hkv, Lmax, E}), dense_v = dense_k;
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < Hkv; ++h)
            for (std::int64_t l = 0; l < lengths.i32[0]; ++l)
                for (std::int64_t e = 0; e < E; ++e) {
                    const std::size_t i = static_cast<std::size_t>(((b * Hkv + h) * Lmax + l) * E + e);
                    dense_k.f32[i] = static_cast<float>(k.value(b, h, l, e));
                    dense_v.f32[i] = static_cast<float>(v.value(b, h, l, e));
                }
    runtime::TensorMap inputs = cache_inputs(lengths);
    inputs.emplace("q", q);
    const runtime::Tensor quantized = runtime::run(variant, inputs);
    const runtime::Tensor dense =
        runtime::run("decode", {{"q", q}, {"k", dense_k}, {"v", dense_v}, {"kv_length", lengths}});
    BOOST_REQUIRE(quantized.f32.size() == dense.f32.size());
    for (std::size_t i = 0; i < dense.f32.size(); ++i)
        BOOST_TEST(std::abs(quantized.f32[i] - dense.f32[i]) <= 1e-4f * (1.0f + std::abs(dense.f32[i])));
}

BOOST_AUTO_TEST_CASE(decode_u8_reads_what_was_written) {
    Cache k(2, 2, 40, 64), v(2, 2, 40, 64);
    expect_decode_of_written_cache(
        "decode_u8", k, v,
        [&](const runtime::Tensor& lengths) {
            return runtime::TensorMap{{"k", k.codes},       {"k_scale", k.scale}, {"k_zero", k.zero},    {"v", v.codes},
                                      {"v_scale", v.scale}, {"v_zero", v.zero},   {"kv_length", lengths}};
        },
        10);
}

// decode_i8 (a scale per token) and decode_i8_g32 (per 32 channels).
BOOST_AUTO_TEST_CASE(decode_i8_reads_what_was_written) {
    for (const auto& [variant, G] :
         {std::pair{"decode_i8", std::int64_t{64}}, std::pair{"decode_i8_g32", std::int64_t{32}}}) {
        BOOST_TEST_CONTEXT(variant) {
            SymmetricCache k(2, 2, 40, 64, G), v(2, 2, 40, 64, G);
            expect_decode_of_written_cache(
                variant, k, v,
                [&](const runtime::Tensor& lengths) {
                    return runtime::TensorMap{{"k", k.codes},
                                              {"k_scale", k.scale},
                                              {"v", v.codes},
                                              {"v_scale", v.scale},
                                              {"kv_length", lengths}};
                },
                40);
        }
    }
}

// Keys by channel of blocks of T tokens: every element within half a step of its channel's block (plus float32
// rounding), each channel's extremes in a block codes 0 and 255; and a block's codes, scales and zero points the same
// whether its tokens came at once or in steps that split blocks (the open block quantized again from its kept
// tokens), entries at different lengths; slots past the lengths untouched.
BOOST_AUTO_TEST_CASE(keys_by_channel_are_the_same_whatever_the_steps) {
    const std::int64_t B = 2, H = 2, Lmax = 300, E = 16, T = 32;
    ChannelCache at_once(B, H, Lmax, E, T), in_steps(B, H, Lmax, E, T);
    // Entry 1 three tokens behind entry 0 throughout; in steps of 5, 1, 40, 29, 1, 64, 7.
    const std::vector<std::int64_t> steps{5, 1, 40, 29, 1, 64, 7};
    std::int64_t total = 0;
    for (std::int64_t n : steps) total += n;
    const runtime::Tensor all = random_values({B, H, total, E}, 71);
    runtime::Tensor lengths = runtime::Tensor::int32({B}, {0, 3});
    runtime::Tensor behind = random_values({1, H, 3, E}, 72);
    {  // entry 1's first three tokens, for both caches alike
        runtime::Tensor first = runtime::Tensor::float32({B, H, 3, E});
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t i = 0; i < 3 * E; ++i)
                first.f32[static_cast<std::size_t>((H + h) * 3 * E + i)] = behind.f32[static_cast<std::size_t>(h * 3 * E + i)];
        // entry 0 gets them too (it is written from slot 0 again below).
        runtime::Tensor zeros = runtime::Tensor::int32({B}, {0, 0});
        at_once.write(first, zeros);
        in_steps.write(first, zeros);
    }
    std::int64_t done = 0;
    for (std::int64_t n : steps) {
        runtime::Tensor part = runtime::Tensor::float32({B, H, n, E});
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t h = 0; h < H; ++h)
                for (std::int64_t l = 0; l < n; ++l)
                    for (std::int64_t e = 0; e < E; ++e)
                        part.f32[static_cast<std::size_t>(((b * H + h) * n + l) * E + e)] =
                            all.f32[static_cast<std::size_t>(((b * H + h) * total + done + l) * E + e)];
        in_steps.write(part, lengths);
        for (auto& l : lengths.i32) l += static_cast<std::int32_t>(n);
        done += n;
    }
    at_once.write(all, runtime::Tensor::int32({B}, {0, 3}));
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t l = 0; l < Lmax; ++l)
                for (std::int64_t e = 0; e < E; ++e) {
                    const std::int64_t end = total + (b == 1 ? 3 : 0);
                    BOOST_TEST_CONTEXT("b " << b << " h " << h << " l " << l << " e " << e) {
                        BOOST_TEST(at_once.code(b, h, l, e) == in_steps.code(b, h, l, e));
                        if (l >= end) {
                            BOOST_TEST(in_steps.code(b, h, l, e) == 7);
                            continue;
                        }
                        const std::size_t at = in_steps.block_at(b, h, l, e);
                        BOOST_TEST(at_once.scale.f32[at] == in_steps.scale.f32[at]);
                        BOOST_TEST(at_once.zero.f32[at] == in_steps.zero.f32[at]);
                        const double x = b == 1 && l < 3
                                             ? behind.f32[static_cast<std::size_t>((h * 3 + l) * E + e)]
                                             : all.f32[static_cast<std::size_t>(((b * H + h) * total + l -
                                                                                 (b == 1 ? 3 : 0)) * E + e)];
                        const double step = in_steps.scale.f32[at];
                        BOOST_TEST(std::abs(in_steps.value(b, h, l, e) - x) <= step / 2 + 1e-5 * (1 + std::abs(x)));
                    }
                }
    // A block's extremes: codes 0 and 255 down each channel (entry 0, head 0, block 1, channel 3).
    int lowest = 255, highest = 0;
    for (std::int64_t l = T; l < 2 * T; ++l) {
        lowest = std::min<int>(lowest, in_steps.code(0, 0, l, 3));
        highest = std::max<int>(highest, in_steps.code(0, 0, l, 3));
    }
    BOOST_TEST(lowest == 0);
    BOOST_TEST(highest == 255);
}

BOOST_AUTO_TEST_CASE(keys_by_channel_bad_input_is_refused_before_anything_is_written) {
    ChannelCache cache(1, 2, 100, 8, 32);
    const runtime::Tensor lengths = runtime::Tensor::int32({1}, {40});
    const runtime::Tensor values = random_values({1, 2, 3, 8}, 81);
    // The open block's kept tokens are read where kv_length is not a multiple of T: −1 is finite, NaN is not.
    cache.open_block.f32[5] = std::numeric_limits<float>::quiet_NaN();
    const std::string kept = error_of([&] { cache.write(values, lengths); });
    BOOST_TEST(kept.find("open_block must hold the open block's earlier tokens") != std::string::npos, kept);
    runtime::Tensor wrong_block = runtime::Tensor::float32({1, 2, 32, 4});
    const std::string block_shape = error_of([&] {
        runtime::quantize_into_cache(runtime::view_of(values), runtime::view_of(lengths),
                                     runtime::output_view_of(cache.codes), runtime::output_view_of(cache.scale),
                                     runtime::output_view_of(cache.zero), runtime::output_view_of(wrong_block));
    });
    BOOST_TEST(block_shape.find("open_block must be (B, Hkv, T, E) = (1, 2, T, 8)") != std::string::npos, block_shape);
    runtime::Tensor per_token = runtime::Tensor::float32({1, 2, 100});
    const std::string scale_shape = error_of([&] {
        runtime::quantize_into_cache(runtime::view_of(values), runtime::view_of(lengths),
                                     runtime::output_view_of(cache.codes), runtime::output_view_of(per_token),
                                     runtime::output_view_of(cache.zero), runtime::output_view_of(cache.open_block));
    });
    BOOST_TEST(scale_shape.find("scale must be (B, Hkv, ceil(Lmax/T), E) = (1, 2, 4, 8) for blocks of T = 32") !=
                   std::string::npos,
               scale_shape);
    for (std::uint8_t c : cache.codes.u8) BOOST_TEST(c == 7);
    for (float z : cache.zero.f32) BOOST_TEST(z == -1.0f);
    // At a block's start nothing kept is read: the NaN does not matter.
    cache.write(values, runtime::Tensor::int32({1}, {64}));
    BOOST_TEST(cache.code(0, 0, 64, 0) != 7);
}

// decode_u8_kc128: keys by channel of blocks of 128 tokens, values by token; a prompt of 200 tokens (one whole block
// and an open one) and five more.
BOOST_AUTO_TEST_CASE(decode_u8_kc128_reads_what_was_written) {
    ChannelCache k(2, 2, 300, 64, 128);
    Cache v(2, 2, 300, 64);
    expect_decode_of_written_cache(
        "decode_u8_kc128", k, v,
        [&](const runtime::Tensor& lengths) {
            return runtime::TensorMap{{"k", k.codes},       {"k_scale", k.scale}, {"k_zero", k.zero},    {"v", v.codes},
                                      {"v_scale", v.scale}, {"v_zero", v.zero},   {"kv_length", lengths}};
        },
        60, 200);
}
