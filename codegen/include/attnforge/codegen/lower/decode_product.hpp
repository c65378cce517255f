// The decode strategy's score product (DecodePlan, plan.hpp): S = scale · Q·Kᵀ with K read in place, one
// key row at a time (no packing: the cache is streamed once), each key's sum reduced along E in vector
// lanes and the lanes of keys_per_step keys folded into one vector (lower/score.hpp calls it for the
// decode plan; the decode schedule, src/schedules/decode.cpp, reads the DecodeProduct it records).
// Two forms:
// - the heads of a GQA group along the vector lanes (heads_in_lanes_product), where the group divides
//   the lanes into chunks of two or more;
// - E along the lanes (lanes_along_e_product), everywhere else.
#pragma once

#include <attnforge/codegen/lower/bf16_pairs.hpp>
#include <attnforge/codegen/lower/head_group.hpp>
#include <attnforge/codegen/lower/query_digits.hpp>
#include <attnforge/codegen/lower/row_reduction.hpp>

#include <functional>
#include <stdexcept>
#include <string>

namespace attnforge::codegen::detail {

// A cache's per-key factor (a scale, a zero point) read at key kv, clamped into the cache's Lk keys: the clamp around
// likely(kv), so that where Halide partitions the loop (the score sum's loop over four keys, the tiles' loops of
// block_weights and block_zero_sum) the steps inside the cache load the factors densely and only the last one reads
// clamped; a plain clamp makes every vector a gather of scalar loads. (The tile loop around them must stay
// unpartitioned for that: schedules/decode.cpp, schedule_split_tasks.)
inline Halide::Expr per_key_index(const Halide::Expr& kv, const Halide::Expr& Lk) {
    return Halide::clamp(Halide::likely(kv), 0, Lk - 1);
}

// What both forms are given: Q as lowered and K's source, Q clamped to its rows and K to its keys (every read of
// the product may be rounded up to whole tiles by the schedule).
struct DecodeOperands {
    const Lowered& q;
    const KeyValueSource& k;
    Halide::Expr query, key;  // clamp(q, 0, Lq − 1), clamp(k, 0, Lk − 1)
    bool stored_pairs;        // Q and K are the kernel's own bf16 inputs: products over pairs as stored
    int head_width;
    HeadGroup heads;  // heads.fixed: the group laid along the lanes (heads_in_lanes_product)
    Halide::Expr scale;
    std::string name;

    // K's element as the product reduces it: without its row's own factor where it has one (KeyValueSource::
    // row_scale), which key_scale then applies once per key, or, where the queries carry them
    // (lanes_along_e_product), without its channels' (channel_scale).
    Halide::Expr key_element(const Halide::Expr& e, const Halide::Expr& kv_head, const Halide::Expr& b,
                             bool channel_scale_in_queries = false) const {
        if (k.row_scale || (channel_scale_in_queries && k.channel_scale)) return k.unscaled(e, key, kv_head, b);
        return k.element(e, key, kv_head, b);
    }
    // The score's factor for key kv of KV head kv_head: the scale, times the key row's own factor if it has one.
    Halide::Expr key_scale(const Halide::Expr& kv, const Halide::Expr& kv_head, const Halide::Expr& b) const {
        if (!k.row_scale) return scale;
        return k.row_scale(per_key_index(kv, k.extents[1]), kv_head, b) * scale;
    }
};

// A group of query heads sharing a KV head (GQA), with lanes = group · chunk, chunk ≥ 2: the heads along
// the vector. Lane (x, g) sums the columns of head g whose index ≡ x (mod chunk): each product multiplies
// a chunk of a K row (16 bytes, one broadcast load to every head's lanes) by the group's Q columns (staged
// once per tile, dense), and c splits the columns into four accumulators a key, so that four keys are 16
// independent chains that walk each K row in address order. A key's scores are then its four accumulators
// added and each head's chunk lanes summed: a few instructions for the whole group, where lanes along E
// need a fold of ~10 instructions a key and head.
// Where the schedule takes several query rows inside the keys (DecodePlan::query_rows), their products are
// the independent chains: one accumulator a key and row (c of extent 1), so that each step loads a chunk of
// K per key and a vector of Q per row for keys × rows FMAs.
inline ScoreProduct heads_in_lanes_product(const DecodeOperands& in, const DecodePlan& plan, int chunk,
                                           int step_accumulators) {
    const int columns_per_step = step_accumulators * chunk * (in.stored_pairs ? 2 : 1);
    const int group = in.heads.fixed, E = in.head_width, keys = plan.keys_per_step;
    const std::string& name = in.name;
    Halide::Var kv("k"), qi("q"), h("h"), b("b");
    Halide::Var x("x"), g("g"), c("c"), hk("hk"), pair("pair"), idx("idx");
    Halide::Func per_lane(name + "_head_lanes"), queries(name + "_queries_in_lanes"), sum(name + "_sum"), f(name);
    per_lane(x, g, c, kv, qi, hk, b) = 0.0f;
    if (in.stored_pairs) {
        // Pairs of bf16 as stored (lower/bf16_pairs.hpp): lane (x, g) sums the pairs whose index ≡ x.
        queries(pair, x, g, idx, qi, hk, b) = in.q.stored({2 * (idx * chunk + x) + pair, in.query, hk * group + g, b});
        Halide::RDom r(0, 2, 0, E / columns_per_step, "r");
        const Halide::Expr index = r.y * step_accumulators + c;
        per_lane(x, g, c, kv, qi, hk, b) +=
            pair_product(queries(r.x, x, g, index, qi, hk, b), in.k.stored(2 * (index * chunk + x) + r.x, in.key, hk, b));
    } else {
        queries(x, g, idx, qi, hk, b) = in.q.func(idx * chunk + x, in.query, hk * group + g, b);
        Halide::RDom r(0, E / columns_per_step, "r");
        const Halide::Expr index = r * step_accumulators + c;
        per_lane(x, g, c, kv, qi, hk, b) += queries(x, g, index, qi, hk, b) * in.key_element(index * chunk + x, hk, b);
    }
    // A key's four accumulators added (vectors of the (x, g) lanes), then four keys' chunk lanes summed into
    // one vector of (key, head) lanes: per four keys a few shuffles and adds, where a sum written per key and
    // head went lane by lane (~60 instructions a key).
    Halide::Func accumulated(name + "_accumulated"), fold(name + "_fold");
    // Added strictly: under fast-math LLVM otherwise merges the four accumulators into one chain of dependent
    // FMAs per key (E/chunk of them, 4 cycles apiece).
    accumulated(x, g, kv, qi, hk, b) = ieee(combine_lanes(
        lane_sum(), [&](int i) { return per_lane(x, g, i, kv, qi, hk, b); }, step_accumulators));
    Halide::Var kk("kk"), ko("ko");
    fold(kk, g, ko, qi, hk, b) = combine_lanes(
        lane_sum(), [&](int j) { return accumulated(j, g, ko * keys + kk, qi, hk, b); }, chunk);
    sum(kv, qi, h, b) = fold(kv % keys, h % group, kv / keys, qi, h / group, b);
    f(kv, qi, h, b) = sum(kv, qi, h, b) * in.key_scale(kv, h / group, b);
    ScoreProduct product{f, sum, Halide::Func(), queries, {}};
    DecodeProduct& d = product.decode;
    d.per_lane = per_lane;
    d.lane_fold = fold;
    d.column_sums = accumulated;
    d.heads_in_lanes = true;
    d.query_rows = plan.query_rows;
    d.keys_per_step = keys;
    d.bf16_pairs = in.stored_pairs;
    d.key_buffer = in.k.row_buffer;
    return product;
}

// score(k, q, h, b): a product's sum in the task's coordinates (key, row, head of the task) times the key's scale,
// at query q of head h (a run-time group's row of that query and head).
inline Halide::Func scaled_by_key(const DecodeOperands& in, const Halide::Func& sum, const std::string& name) {
    Halide::Var kv("k"), qi("q"), h("h"), b("b");
    Halide::Func f(name);
    const Halide::Expr kv_head = in.heads.kv_head(h);
    if (in.heads.runtime.defined())
        f(kv, qi, h, b) = sum(kv, in.heads.row_of(h, qi, in.q.extents[1]), kv_head, b) * in.key_scale(kv, kv_head, b);
    else
        f(kv, qi, h, b) = sum(kv, qi, h, b) * in.key_scale(kv, kv_head, b);
    return f;
}

// Lane u of per_lane sums the columns e ≡ u (mod lanes), whole vectors of Q and K rows; the lanes combine
// in expressions (below), no loop over them.
// Where the group is run-time, the product is a KV head's: sum (k, r, hk, b) over the rows r of all the group's
// query heads (query r % Lq of head hk · group + r / Lq), so that the schedule takes several of them inside the keys
// as it takes several queries of one head (each K row loaded once for them: GQA decode is MHA decode with group·Lq
// query rows, as PyTorch's decode folds a group into the query axis); scores read it back per (query, head).
inline ScoreProduct lanes_along_e_product(const DecodeOperands& in, const DecodePlan& plan) {
    const int lanes = plan.lanes, E = in.head_width, keys = plan.keys_per_step;
    const std::string& name = in.name;
    Halide::Var kv("k"), qi("q"), h("h"), b("b");
    Halide::Var u("u");
    Halide::Func per_lane(name + "_lanes"), sum(name + "_sum");
    per_lane(u, kv, qi, h, b) = 0.0f;
    const Halide::Expr Lq = in.q.extents[1];
    const bool rows_of_group = in.heads.runtime.defined();
    // Per row (qi) and head (h): the query and the query head Q is read at, the KV head K is read at.
    Halide::Expr query = in.query, query_head = h, key_head = in.heads.kv_head(h);
    if (rows_of_group) {
        const Halide::Expr row = Halide::clamp(qi, 0, in.heads.rows(Lq) - 1);  // rows past the last: never read
        query = in.heads.query_of_row(row, Lq);
        query_head = in.heads.head_of_row(h, row, Lq);
        key_head = h;
    }
    const bool pairs = in.stored_pairs && E % (2 * lanes) == 0;
    Halide::Func channel;  // the queries times the keys' factors per channel and block, where K has them
    if (pairs) {
        // bf16 Q and K as stored: a row of K holds its pairs of e adjacent already, so lane u sums the pairs
        // (2c, 2c + 1) with c ≡ u (mod lanes), one vdpbf16ps per 32 columns, no conversion (the schedule
        // vectorizes the pair element with atomic(): lower/bf16_pairs.hpp).
        Halide::RDom eo(0, 2, 0, E / (2 * lanes), "eo");
        const Halide::Expr column = 2 * (eo.y * lanes + u) + eo.x;
        per_lane(u, kv, qi, h, b) +=
            pair_product(in.q.stored({column, query, query_head, b}), in.k.stored(column, in.key, key_head, b));
    } else if (in.k.channel_scale) {
        // Keys with a factor per channel and block of T keys: q·(factor ⊙ unscaled) = (q ⊙ factor)·unscaled, the
        // queries times each block's factors once per tile (DecodeProduct::channel_queries), not once per key.
        const int T = in.k.channel_block;
        Halide::Var e("e"), block("block");
        Halide::Func channel_queries(name + "_channel_queries");
        channel_queries(e, block, qi, h, b) =
            in.q.func(e, query, query_head, b) *
            in.k.channel_scale(e, Halide::clamp(block * T, 0, in.k.extents[1] - 1), key_head, b);
        Halide::RDom eo(0, E / lanes, "eo");
        const Halide::Expr column = eo * lanes + u;
        per_lane(u, kv, qi, h, b) +=
            channel_queries(column, in.key / T, qi, h, b) * in.key_element(column, key_head, b, true);
        channel = channel_queries;
    } else {
        Halide::RDom eo(0, E / lanes, "eo");
        const Halide::Expr column = eo * lanes + u;
        per_lane(u, kv, qi, h, b) += in.q.func(column, query, query_head, b) * in.key_element(column, key_head, b);
    }
    // The lanes combine in a tree of whole-vector shuffles and adds (the horizontal sums of several vectors at once):
    // level 1 adds the adjacent lanes of each pair of keys' vectors into one, [key 2g: lanes/2 partial sums | key
    // 2g + 1: lanes/2], level 2 each pair of those into [four keys: lanes/4 each], and so on until one vector holds
    // keys_per_step keys; then each key's lanes/keys_per_step partials are added by strided reads (a small
    // transpose). A level reads its two input vectors as one row of 2·lanes at stride 2 (lanes 2x and 2x + 1), which
    // Halide loads densely and deinterleaves: two shuffles and an add per output vector. Per four keys on AVX-512
    // ~16 instructions, where a fold of each key's lanes into a quarter vector and a 4×4 transpose after it took ~35
    // (as many as the products of a uint8 row at E = 128: 40 % of the Q·Kᵀ loop of a run-time GQA group, Zen 5).
    // (Pairing lane u with u + lanes/2 instead reads spans of 1.5 vectors, which LLVM moved lane by lane.)
    if (lanes % keys != 0 || (keys & (keys - 1)) != 0)
        throw std::invalid_argument("attnforge lowering: the decode strategy needs a power of two of keys (" +
                                    std::to_string(keys) + ") dividing the vector lanes (" + std::to_string(lanes) +
                                    ")");
    std::vector<Halide::Func> tree;
    Halide::Var x("x"), g("g");
    // Lane `lane` (< 2·lanes) of the row made of input vectors 2g and 2g + 1.
    std::function<Halide::Expr(const Halide::Expr&, const Halide::Expr&)> pair_row =
        [&](const Halide::Expr& lane, const Halide::Expr& vector) {
            return per_lane(lane % lanes, 2 * vector + lane / lanes, qi, h, b);
        };
    for (int keys_in_vector = 2; keys_in_vector <= keys; keys_in_vector *= 2) {
        Halide::Func level(name + "_fold" + std::to_string(keys_in_vector));
        level(x, g, qi, h, b) = pair_row(2 * x, g) + pair_row(2 * x + 1, g);
        tree.push_back(level);
        pair_row = [level, qi, h, b, lanes](const Halide::Expr& lane, const Halide::Expr& vector) {
            return level(lane % lanes, 2 * vector + lane / lanes, qi, h, b);
        };
    }
    // The last vector: keys_per_step keys of `partials` lanes each, added by strided reads.
    const Halide::Func last = tree.empty() ? per_lane : tree.back();
    const int partials = lanes / keys;
    sum(kv, qi, h, b) = combine_lanes(
        lane_sum(), [&](int o) { return last(partials * (kv % keys) + o, kv / keys, qi, h, b); }, partials);
    ScoreProduct product{scaled_by_key(in, sum, name), sum, Halide::Func(), Halide::Func(), {}};
    product.decode.per_lane = per_lane;
    product.decode.lane_tree = tree;
    product.decode.key_buffer = in.k.row_buffer;
    product.decode.keys_per_step = keys;
    product.decode.bf16_pairs = pairs;
    product.decode.channel_queries = channel;
    return product;
}

// 8-bit codes on integer dot products (Tiles::integer_products), a KV head's query rows along the lanes: four rows
// a vector, one 128-bit lane each, whose four int32 lanes x sum the codes 16c + 4x … 16c + 4x + 3 of chunk c times
// the row's int8 digits of Q (lower/query_digits.hpp), one vpdpbusd per 16 codes and digit for all four rows (the
// chunk's 16 bytes of K broadcast to the four lanes; the digits staged per task in that order). Per key and four
// rows: E/16 broadcasts, 3·E/16 vpdpbusd, the digits' three sums added in float32, the x lanes folded. Rows are
// (query, head) pairs of the task: queries of one head, or a run-time group's heads' queries (as
// lanes_along_e_product's rows); rows past the last read the last one and are never consumed.
inline constexpr int rows_in_lanes_from = 4;

// A product over codes as the decode schedule reads it: its sum, int32 lanes, their float32 sum, fold and staged digits.
inline ScoreProduct integer_score_product(const DecodeOperands& in, const Halide::Func& sum, const Halide::Func& lanes,
                                          const Halide::Func& per_lane, const Halide::Func& fold,
                                          const Halide::Func& staged_digits, int keys) {
    ScoreProduct product{Halide::Func(), sum, Halide::Func(), Halide::Func(), {}};
    DecodeProduct& p = product.decode;
    p.integer_per_lane = per_lane;
    p.lane_fold = fold;
    p.integer_lanes = lanes;
    p.query_digits = staged_digits;
    p.keys_per_step = keys;
    p.key_buffer = in.k.row_buffer;
    return product;
}

inline ScoreProduct rows_in_lanes_integer_product(const DecodeOperands& in, const DecodePlan& plan,
                                                  const QueryDigits& digits) {
    const int E = in.head_width, keys = plan.keys_per_step;
    constexpr int rows_per_vector = 4, codes_per_lane = 4, chunk = 16;
    const std::string& name = in.name;
    Halide::Var kv("k"), qi("q"), h("h"), b("b");
    Halide::Var x("x"), jr("jr"), t("t"), c("c"), d("d"), qo("qo"), kk("kk"), ko("ko");
    const Halide::Expr Lq = in.q.extents[1];
    const bool rows_of_group = in.heads.runtime.defined();
    const Halide::Expr rows = rows_of_group ? in.heads.rows(Lq) : Lq;
    // Row ρ of the task of head h: the query and query head its digits are read at.
    auto digit_of_row = [&](const Halide::Expr& column, const Halide::Expr& digit, const Halide::Expr& rho) {
        const Halide::Expr row = Halide::clamp(rho, 0, rows - 1);
        if (rows_of_group)
            return digits.digits(column, digit, in.heads.query_of_row(row, Lq), in.heads.head_of_row(h, row, Lq), b);
        return digits.digits(column, digit, row, h, b);
    };
    const Halide::Expr key_head = rows_of_group ? Halide::Expr(h) : in.heads.kv_head(h);
    Halide::Func row_digits(name + "_row_digits"), integer_lanes(name + "_integer_lanes");
    row_digits(t, x, jr, c, d, qo, h, b) = digit_of_row(chunk * c + codes_per_lane * x + t, d, rows_per_vector * qo + jr);
    integer_lanes(x, jr, d, kv, qo, h, b) = 0;
    Halide::RDom r(0, codes_per_lane, 0, E / chunk, "r");
    integer_lanes(x, jr, d, kv, qo, h, b) +=
        Halide::cast<int32_t>(in.k.unsigned_codes(chunk * r.y + codes_per_lane * x + r.x, in.key, key_head, b)) *
        Halide::cast<int32_t>(row_digits(r.x, x, jr, r.y, d, qo, h, b));
    Halide::Func per_lane(name + "_lanes"), fold(name + "_fold"), sum(name + "_sum");
    per_lane(x, jr, kv, qo, h, b) = digits_value([&](int i) { return integer_lanes(x, jr, i, kv, qo, h, b); });
    // Four keys' x lanes summed into one vector of (key, row) lanes.
    fold(kk, jr, ko, qo, h, b) = combine_lanes(
        lane_sum(), [&](int j) { return per_lane(j, jr, ko * keys + kk, qo, h, b); }, chunk / codes_per_lane);
    // Σ q̃·(u − z) = s·(Σ (q̃/s)·u − z·Σ q̃/s): the row's digits' sum times the key's zero point, in float32 (an error
    // of 2⁻²⁴·255·Σ|q| at most, below §5's rounding of the float32 scores: docs/storage_types.md). In the task's
    // coordinates (key, row, head of the task), as lanes_along_e_product's sum.
    const Halide::Expr task_row = Halide::clamp(qi, 0, rows - 1);
    const Halide::Expr row_query = rows_of_group ? in.heads.query_of_row(task_row, Lq) : task_row;
    const Halide::Expr row_head = rows_of_group ? in.heads.head_of_row(h, task_row, Lq) : Halide::Expr(h);
    const Halide::Expr zero = in.k.code_zero(per_key_index(kv, in.k.extents[1]), key_head, b);
    sum(kv, qi, h, b) = digits.scale(row_query, row_head, b) *
                        (fold(kv % keys, qi % rows_per_vector, kv / keys, qi / rows_per_vector, h, b) -
                         zero * digits.row_sum(row_query, row_head, b));
    // Scaled by decode_score_product, over the sum it shares with the keys-in-lanes product.
    ScoreProduct product = integer_score_product(in, sum, integer_lanes, per_lane, fold, row_digits, keys);
    product.decode.query_stages = {digits.max_abs, digits.scale, digits.digits, digits.digit_sums, digits.row_sum,
                                   row_digits};
    return product;
}

// 8-bit codes on integer dot products for fewer rows than four: four keys a vector, one 128-bit lane each, whose four
// int32 lanes x sum the codes 16c + 4x … 16c + 4x + 3 of chunk c of that key times the row's int8 digits of Q (the
// chunk's 16 digits the same in the four lanes), one vpdpbusd per 16 codes of four keys and digit: K's four rows
// taken 16 bytes at a time into one vector (dense loads and inserts: no packing). Per four keys and a row: E/16 K
// vectors and 3·E/16 vpdpbusd, the three digit sums added in float32, each key's x lanes folded (a fold of one
// vector for the four keys, where the lanes along E fold four vectors). The zero point and scales as
// rows_in_lanes_integer_product's; a row's products are computed row after row (K from L1 after the first).
inline ScoreProduct keys_in_lanes_integer_product(const DecodeOperands& in, const DecodePlan& plan,
                                                  const QueryDigits& digits) {
    const int E = in.head_width, keys = plan.keys_per_step;
    constexpr int codes_per_lane = 4, chunk = 16;
    const std::string& name = in.name;
    Halide::Var kv("k"), qi("q"), h("h"), b("b");
    Halide::Var x("x"), j("j"), t("t"), c("c"), d("d"), ko("ko");
    const Halide::Expr Lq = in.q.extents[1];
    const bool rows_of_group = in.heads.runtime.defined();
    const Halide::Expr rows = rows_of_group ? in.heads.rows(Lq) : Lq;
    const Halide::Expr task_row = Halide::clamp(qi, 0, rows - 1);
    const Halide::Expr row_query = rows_of_group ? in.heads.query_of_row(task_row, Lq) : task_row;
    const Halide::Expr row_head = rows_of_group ? in.heads.head_of_row(h, task_row, Lq) : Halide::Expr(h);
    const Halide::Expr key_head = rows_of_group ? Halide::Expr(h) : in.heads.kv_head(h);
    Halide::Func row_digits(name + "_key_lanes_digits"), integer_lanes(name + "_key_lanes_integer");
    row_digits(t, x, c, d, qi, h, b) = digits.digits(chunk * c + codes_per_lane * x + t, d, row_query, row_head, b);
    // Key j of the four: each key's row read on its own (a dense load; a key computed from the lane would gather).
    const Halide::Expr Lk = in.k.extents[1];
    Halide::RDom r(0, codes_per_lane, 0, E / chunk, "r");
    const Halide::Expr column = chunk * r.y + codes_per_lane * x + r.x;
    auto code_of = [&](int key) {
        return in.k.unsigned_codes(column, Halide::clamp(keys * ko + key, 0, Lk - 1), key_head, b);
    };
    const Halide::Expr code = Halide::select(j == 0, code_of(0), j == 1, code_of(1), j == 2, code_of(2), code_of(3));
    integer_lanes(x, j, d, ko, qi, h, b) = 0;
    integer_lanes(x, j, d, ko, qi, h, b) +=
        Halide::cast<int32_t>(code) * Halide::cast<int32_t>(row_digits(r.x, x, r.y, d, qi, h, b));
    Halide::Func per_lane(name + "_key_lanes"), fold(name + "_key_lanes_fold"), sum(name + "_key_lanes_sum");
    per_lane(x, j, ko, qi, h, b) = digits_value([&](int i) { return integer_lanes(x, j, i, ko, qi, h, b); });
    fold(j, ko, qi, h, b) = combine_lanes(
        lane_sum(), [&](int i) { return per_lane(i, j, ko, qi, h, b); }, chunk / codes_per_lane);
    const Halide::Expr zero = in.k.code_zero(per_key_index(kv, Lk), key_head, b);
    sum(kv, qi, h, b) = digits.scale(row_query, row_head, b) *
                        (fold(kv % keys, kv / keys, qi, h, b) - zero * digits.row_sum(row_query, row_head, b));
    return integer_score_product(in, sum, integer_lanes, per_lane, fold, row_digits, keys);
}

// The product in the form the group and head width allow.
inline ScoreProduct decode_score_product(const Lowered& q, const KeyValueSource& k, int head_width,
                                         const HeadGroup& heads, const Halide::Expr& scale, const DecodePlan& plan,
                                         const std::string& name) {
    const int lanes = plan.lanes, E = head_width;
    if (E % lanes != 0)
        throw std::invalid_argument(
            "attnforge lowering: the decode strategy reduces the score product lane by "
            "lane along E; the head width E = " +
            std::to_string(E) + " is not a multiple of the vector lanes (" + std::to_string(lanes) + ")");
    Halide::Var kv("k"), qi("q");
    const DecodeOperands in{
        q, k, Halide::clamp(qi, 0, q.extents[1] - 1), Halide::clamp(kv, 0, k.extents[1] - 1),
        // in place: both bf16 inputs (a projection's bf16 form is computed, not stored)
        plan.bf16_products && q.stored && k.stored && q.parameter.defined() && k.row_buffer.defined(), E, heads, scale,
        name};
    const int group = heads.fixed;
    const int chunk = group > 1 && lanes >= 16 && lanes % group == 0 ? lanes / group : 0;
    const int step_accumulators = plan.query_rows > 1 ? 1 : 4;
    const int columns_per_step = step_accumulators * chunk * (in.stored_pairs ? 2 : 1);
    if (chunk >= 2 && E % columns_per_step == 0) return heads_in_lanes_product(in, plan, chunk, step_accumulators);
    if (plan.integer_products && k.unsigned_codes && k.row_scale && lanes == 16 && E % 16 == 0 && plan.keys_per_step == 4) {
        // Both products over codes, one sum: four rows along the lanes where the task has four or more (a run-time
        // GQA group, Lq ≥ 4), four keys along them for fewer (one query row would fill one lane of four). The decode
        // schedule specializes the sum on the row count, so each branch computes one product.
        const QueryDigits digits = query_digits(q.func, E, name);
        ScoreProduct four = rows_in_lanes_integer_product(in, plan, digits),
                     fewer = keys_in_lanes_integer_product(in, plan, digits);
        const Halide::Expr Lq = q.extents[1], rows = heads.runtime.defined() ? heads.rows(Lq) : Lq;
        Halide::Var h("h"), b("b");
        Halide::Func sum(name + "_sum_of_either");
        const Halide::Expr four_rows = rows >= rows_in_lanes_from;
        sum(kv, qi, h, b) = Halide::select(four_rows, four.sum(kv, qi, h, b), fewer.sum(kv, qi, h, b));
        ScoreProduct product = four;
        product.scaled = scaled_by_key(in, sum, name + "_of_either");
        product.sum = sum;
        DecodeProduct& p = product.decode;
        const DecodeProduct& f = fewer.decode;
        p.rows_in_lanes_condition = four_rows;
        p.keys_in_lanes = {f.integer_lanes, f.integer_per_lane, f.lane_fold, f.query_digits};
        return product;
    }
    return lanes_along_e_product(in, plan);
}

}  // namespace attnforge::codegen::detail
