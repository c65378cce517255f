// Lowering: a DSL graph becomes Halide Funcs, one lowering per node kind (lower/*.hpp). The lowering
// writes the ALGORITHM only, shaped by an AlgorithmPlan (plan.hpp) and never by schedule knobs; it
// records which Func plays which role (projection, attention core, row operation) so that a schedule
// (schedules/schedule.hpp) can schedule by role, apart from it.
//
// Index order: Halide Funcs take their innermost (contiguous) index first, so a row-major tensor
// (B, L, D) is the Func f(d, l, b), (B, H, L, E) is f(e, l, h, b) and scores (B, H, Lq, Lk) are
// f(k, q, h, b). Every Func here carries its batch index, as in the interpreter (unbatched graphs run
// with B = 1). Func names are stable: the node kind plus its position in a depth-first walk.
#pragma once

#include <attnforge/codegen/plan.hpp>
#include <attnforge/dsl/passes/attention_pattern.hpp>

#include <Halide.h>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace attnforge::codegen {

// A lowered tensor: its Func and the extents of its dimensions, innermost first.
struct Lowered {
    Halide::Func func;
    std::vector<Halide::Expr> extents;
    // Its innermost dimension is a dense row of its own in memory (an input buffer), not a slice of a
    // wider row (heads split out of a projection): decides whether V is packed per head.
    bool dense_rows = false;
    // An input's buffer read directly, not through its Func (empty for anything else): a reduction's
    // condition that reads it becomes a loop bound (Halide lifts conditions on inputs only).
    std::function<Halide::Expr(const std::vector<Halide::Expr>&)> buffer;
    // The element in bf16, as products over bf16 pairs read it: as stored where the input is bf16 (not converted
    // to float32: read in place, exact), rounded where it is a projection's result in a kernel that rounds its
    // computed operands (lower/linear.hpp; split heads of either keep it). Empty for anything else.
    std::function<Halide::Expr(const std::vector<Halide::Expr>&)> stored;
    // The input's buffer parameter (undefined for anything else): what a schedule's prefetch names.
    Halide::Parameter parameter;
};

// A graph's inputs by name, as the generator binds them.
using LoweredInputs = std::map<std::string, Lowered, std::less<>>;

// Keys or values as the attention core reads them (lower/kv_source.hpp lowers a dsl::kv_source into it):
// the one accessor of K and V. Indices as everywhere here, (e, key, head, batch).
struct KeyValueSource {
    using Read = std::function<Halide::Expr(const Halide::Expr& e, const Halide::Expr& key, const Halide::Expr& h,
                                            const Halide::Expr& b)>;
    Read element;  // float32: what every product reads, except the 16-bit dot products below
    Read stored;   // bf16, for products over bf16 pairs (lower/bf16_pairs.hpp), as Lowered::stored; empty: none
    std::vector<Halide::Expr> extents;  // (E, Lk, Hkv, B)
    bool dense_rows = false;            // each (key, head) row is a dense row of its own in memory
    Halide::Parameter row_buffer;       // the buffer those rows are, for a prefetch (undefined: none)
    // The keys below valid_keys(b) of batch entry b hold keys (a cache); empty: all Lk.
    std::function<Halide::Expr(const Halide::Expr& b)> valid_keys;
    // Rows stored with a factor of their own (a quantized cache's scale per token): element = unscaled · row_scale.
    // The decode products reduce unscaled along E and multiply once per row (a key's score, a value row's weight)
    // instead of once per element; every other product reads element. Empty: none.
    Read unscaled;
    std::function<Halide::Expr(const Halide::Expr& key, const Halide::Expr& h, const Halide::Expr& b)> row_scale;
    // Where unscaled is 8-bit codes less a zero point: the codes as uint8 (int8 codes offset by 128) and that zero
    // point per row (float32; 128 for int8), unscaled = float(unsigned_codes) − code_zero, for products on integer
    // dot products (lower/decode_product.hpp). Empty: none.
    Read unsigned_codes;
    std::function<Halide::Expr(const Halide::Expr& key, const Halide::Expr& h, const Halide::Expr& b)> code_zero;
    // Rows whose every channel has a factor per block of channel_block keys (a quantized cache's keys by channel):
    // element = unscaled · channel_scale. The decode product multiplies the queries by it once per block of its
    // tile instead of once per element (lower/decode_product.hpp). Empty: none.
    Read channel_scale;
    int channel_block = 0;
};

// Where the queries of an attention pattern sit (dsl kv_cache, docs/contract.md §1): query q of batch
// entry b at position q + offset(b), offset(b) = lengths(b) − Lq, and only keys below lengths(b) take
// part. lengths reads the input buffer itself, so that conditions on it become loop bounds. Without a
// cache every query sits at its index and every key takes part.
struct QueryPositions {
    std::function<Halide::Expr(const Halide::Expr& b)> lengths;  // empty: no cache
    Halide::Expr query_count;                                    // Lq

    bool cached() const { return static_cast<bool>(lengths); }
    Halide::Expr offset(const Halide::Expr& b) const { return cached() ? lengths(b) - query_count : Halide::Expr(0); }
    Halide::Expr position(const Halide::Expr& q, const Halide::Expr& b) const {
        return cached() ? q + offset(b) : q;
    }
};

// The decode strategy's score product (lower/decode_product.hpp), what its schedule reads: per_lane, the
// products per lane, (u, k, q, h, b), or with a GQA group's heads in the lanes ((pair,) x, g, c, k, q, hk, b),
// g < the group; lane_fold, with the heads in the lanes, the lanes of keys_per_step keys folded into one vector,
// (k % keys_per_step, g, k / keys_per_step, q, hk, b); lane_tree, with E along the lanes, the levels of the fold
// (x, g, q, h, b): level i's vector g holds keys g·2^(i+1) ... with lanes/2^(i+1) partial sums each, and sum reads
// the last level's partials at a stride.
struct DecodeProduct {
    Halide::Func per_lane, lane_fold;
    std::vector<Halide::Func> lane_tree;
    bool heads_in_lanes = false;
    // With the heads in the lanes: a key's column accumulators added, (x, g, k, q, hk, b).
    Halide::Func column_sums;
    // There: the query rows taken inside the keys (DecodePlan::query_rows; c of extent 1 where above 1).
    int query_rows = 1;
    int keys_per_step = 4;  // DecodePlan::keys_per_step: keys whose folded lanes make one vector
    // per_lane reduces over pairs of bf16 (lower/bf16_pairs.hpp): its first reduction variable is the pair's
    // element, and with the heads in the lanes the staged queries are ((pair,) x, g, ...).
    bool bf16_pairs = false;
    // There: K's buffer where K is an input read in place (undefined otherwise), for a prefetch of its rows.
    Halide::Parameter key_buffer;
    // Over 8-bit codes on integer dot products (Tiles::integer_products; lower/decode_product.hpp,
    // rows_in_lanes_integer_product): sum is select(rows_in_lanes_condition, the rows-in-lanes sum, the keys-in-lanes
    // sum), the schedule specializing it on that same Expr. integer_lanes (x, jr, d, k, qo, h, b) the codes' int32
    // products with the queries' int8 digit d (lower/query_digits.hpp), integer_per_lane their float32 sum, lane_fold
    // the four keys' lanes folded; query_stages the Funcs over Q those read, in the order computed (once per task),
    // query_digits (the digits in the product's order) among them. Else undefined and empty.
    Halide::Func integer_lanes, integer_per_lane, query_digits;
    Halide::Expr rows_in_lanes_condition;
    std::vector<Halide::Func> query_stages;
    // There, the product of fewer rows (keys_in_lanes_integer_product): four keys along the 128-bit lanes, its
    // integer_lanes (x, j, d, ko, q, h, b), their float32 sum, the fold of each key's lanes and the staged digits.
    struct KeysInLanes {
        Halide::Func integer_lanes, per_lane, fold, query_digits;
    } keys_in_lanes;
    // Over keys with a factor per channel and block (KeyValueSource::channel_scale): the queries times each block's
    // factors, (e, block, q, h, b), computed once per tile. Else undefined.
    Halide::Func channel_queries;
};

// score(q, k): the scaled product, its reduction over e, and the Func it reads K from.
struct ScoreProduct {
    Halide::Func scaled, sum, keys;
    // Under Tiles::bf16_products: Q rounded to bf16 (e, q, h, b), read by the product in pairs; keys is then
    // (pair, kk, e/2, kt, h, b). Decoding with the heads along the lanes: the group's Q staged in lanes
    // ((pair,) x, g, idx, q, hk, b). Else undefined.
    Halide::Func queries;
    // Float32 products over a 16-bit Q input: Q converted to float32 (e, q, h, b), staged per attention task
    // (schedules: pack_keys). Else undefined.
    Halide::Func converted_queries;
    // Under Tiles::amx_products where E is whole AMX steps: sum is an AMX tile product (lower/amx_tiles.hpp),
    // reducing over (32 values of e, E/32 steps); keys is then (pair, kk, row), 16 keys a panel.
    bool amx_tiles = false;
    Halide::Expr amx_key_rows;  // there: keys' rows (from 0)
    DecodeProduct decode;  // the decode plan's product (else empty)
};

// Masks known only at run time (predicates other than the bands, key padding, boolean masks):
// keep(k, q, h, b) of each, true = the pair takes part. From them a pre-pass kernel computes each
// query tile's first and last live key tile (lower/block_ranges.hpp), and the streaming strategy visits
// only that range (the block mask FlexAttention builds with create_block_mask).
//
// A block of pairs: the queries at positions [q_first, q_last] and the keys [k_first, k_last] of head h
// and batch entry b; what a predicate can be over it, from its expression (lower/expression_bounds.hpp):
// can_be_true false, the block is dead; can_be_false false, it is full.
struct PairBlock {
    Halide::Expr q_first, q_last, k_first, k_last, h, b;
};
struct BlockTruth {
    Halide::Expr can_be_true, can_be_false;
};

struct RunTimeKeeps {
    std::vector<Halide::Func> keeps;
    bool use_heads = false;  // some keep reads h: ranges per head, else per batch entry
    // The predicates (those among them, and a sliding window's), bounded over a block of pairs: the streaming
    // strategy skips a key tile that one of them cannot keep for a whole query tile, with or without the
    // pre-pass (which also reads inputs), and visits a key tile that all those that fill blocks keep whole
    // without evaluating them.
    struct PredicateBounds {
        std::function<BlockTruth(const PairBlock&)> over;
        // The analysis finds dead blocks (dsl::ex::finds_dead_blocks), or it reads inputs at indices of b and h
        // alone, which the kernel reads (lower/masks.hpp); else the generator says so.
        bool skips = true;
        bool fills = false;  // likewise, full blocks (dsl::ex::finds_full_blocks)
        Halide::Func keep;   // keep(k, q, h, b)
    };
    std::vector<PredicateBounds> block_truths;
};

// The band masks' keys as kernels bound their loops by them: query position p sees keys [p − window, p] where
// `causal`, `window` a constant or the value of the run-time window input (undefined: no window).
struct KeyBand {
    bool causal = false;
    Halide::Expr window;
    bool windowed() const { return window.defined(); }
};

// What every attention core has: softmax(S) · V or softmax(S) alone.
struct CoreCommon {
    Halide::Func scores;            // s(k, q, h, b)·log2(e): masked and modified scores in base 2, pure (inlined)
    ScoreProduct dot;               // dot(k, q, h, b) = scale · Σ_e Q·K (·log2(e) when folded), the score product
    Halide::Func values;            // V as (e, k, h, b), read by the P·V products (undefined: no values)
    bool pack_values = false;       // V's rows are slices of wider rows: copy each head contiguous once per call
    Halide::Func output;            // the core's result: weighted / z (0 for fully masked rows), or the probabilities
    std::vector<Halide::Expr> score_extents;  // (Lk, Lq, H, B)
    int head_width = 0;                       // E of V
    KeyBand band;                             // the keys the band masks leave, in positions
    RunTimeKeeps run_time;                    // the masks known only at run time
    QueryPositions positions;                 // where the queries sit (a cache), and how many keys are valid
    // The scores carry a modifier: the schedule stores `scores` (each modified once, straight from the
    // product's registers) where it would store the bare product, since the softmax reads every score
    // twice (its max, then its exp) and an inlined modifier (a soft-cap's tanh) would be evaluated twice.
    bool store_scores = false;
    // The scores where every predicate that fills blocks (RunTimeKeeps::PredicateBounds::fills) holds: those
    // of a key tile they keep whole (the streaming strategy). scores = full_block_scores where they all keep
    // the pair, −∞ elsewhere. Undefined where no predicate fills blocks or the strategy is not streaming.
    Halide::Func full_block_scores;
    // Under Tiles::bf16_products, where P·V multiplies pairs of keys (lower/bf16_pairs.hpp): V rounded to bf16
    // and packed (pair, e, k/2, h, b), zero past Lk, and P rounded to bf16 where it meets V (materialized:
    // (k, q, h, b), zero past Lk; streaming: (kk, qi, qt, h, b, kb)). Else undefined.
    Halide::Func value_pairs, rounded_weights;
    // P·V is an AMX tile product (lower/amx_tiles.hpp): value_pairs is then (pair, e, row), the reduction over
    // (32 keys, steps of 32 keys).
    bool amx_weighted_sum = false;
    Halide::Expr amx_value_rows;  // there: value_pairs' rows (from 0)
    Halide::Func amx_sum;         // there: the tile product (materialized: (e, qq, qt, h, b), re-indexed by `weighted`;
                                  // streaming: block_weighted itself)
};

// The materialized strategy's core: all Lk scores of a query tile.
struct MaterializedCore : CoreCommon {
    Halide::Func row_max;  // m(q, h, b)
    Halide::Func exps;     // 2^(s - m)(k, q, h, b), s and m in base 2: e^(s - m) in natural units
    Halide::Func row_sum;  // z(q, h, b)
    // m and z per lane (u, q, h, b), u < lanes: lane u reduces the keys ≡ u (mod lanes); m and z combine
    // the lanes in a tree (lower/row_reduction.hpp)
    Halide::Func row_max_lanes, row_sum_lanes;
    Halide::Func weighted;     // Σ_k exps · V, (e, q, h, b), a reduction (undefined: no values)
    // With bf16 weights: the Tuple (exps, rounded_weights) that both read, made in one loop (undefined: none)
    Halide::Func exps_and_weights;
    bool banded_exps = false;  // exps: 0, then an update over the keys of the query tile's band
};

// The streaming strategy's core: per key tile kb of key_tile keys, over query tiles of query_tile rows,
// block_scores(kk, qi, qt, h, b, kb), block_max, block_exps, block_sum (qi, qt, h, b, kb),
// block_weighted (e, qi, qt, h, b, kb), and the running state (e, qi, qt, h, b) = (max, sum, acc).
struct StreamingCore : CoreCommon {
    Halide::Func block_max, block_exps, block_sum, block_weighted, state;
    Halide::Func block_max_lanes, block_sum_lanes;  // their per-lane partial results
};

// The decode strategy's core (DecodePlan): per split s of split_keys keys and KV head hk, the state
// (e, q, g, hk, b, s) = (max, sum, acc) of the online softmax over the split's key tiles kb, for the
// queries q and the group's query heads g (h = hk · group + g) at once; block_scores (kk, q, g, hk, b, kb),
// block_max, block_exps, block_sum (q, g, hk, b, kb), block_weighted (e, q, g, hk, b, kb) per tile; then
// the splits merged: split_max (q, h, b), merged (e, q, h, b) = (Σ sum·2^(m−M), Σ acc·2^(m−M)).
struct DecodeCore : CoreCommon {
    Halide::Func block_scores, block_max, block_exps, block_sum, block_weighted, state;
    Halide::Func block_max_lanes, block_sum_lanes;
    Halide::Func block_weights;  // block_exps times V's row factors (kk, q, g, hk, b, kb) where V has them (key_block)
    // Σ weight·zero over the tile's keys (q, g, hk, b, kb), where V's zero point is folded out of P·V (lower/decode.hpp)
    Halide::Func block_zero_sum, block_zero_sum_lanes;
    Halide::Func split_max, merged;
    int group = 1;  // query heads per KV head (Hq / Hkv) where fixed; 1 where run-time (then rows holds them)
    // The query rows a task computes for its KV head (the second dimension of the tile's Funcs and of state): Lq, or
    // where the group is run-time Lq · (H / Hkv), row r being query r % Lq of the task's head r / Lq.
    Halide::Expr rows;
    // V is converted where P·V reads it (codes of a quantized cache): each converted vector takes a register beside
    // the accumulators, where float32 V is an operand of its FMA straight from memory.
    bool converted_values = false;
    // V's buffer where V is an input read in place (undefined otherwise), for a prefetch of its rows.
    Halide::Parameter value_buffer;
    // block_weighted's reduction over a tile's keys: (key in span, span) where above 1 (lower/online_softmax.hpp,
    // key_block), so that a prefetch in the loop over a span's keys leaves the loop over spans ending at the tile's
    // valid keys; else (key).
    int value_span = 1;
    // P·V over codes on integer dot products (lower/integer_values.hpp), where it is: the tile's weight maximum and
    // its lanes, the weights' digits, the int32 sums (their float32 value is inline), the float32 P·V beside it and
    // the condition under which the integer one is taken (fewer rows than four); block_weighted then selects either.
    struct IntegerValueStages {
        Halide::Func weight_max, weight_max_lanes, weight_digits, sums, float_weighted;
        Halide::Expr condition;
    } integer_values;
};

// One type per strategy: a schedule visits the one it gets.
using AttentionCore = std::variant<MaterializedCore, StreamingCore, DecodeCore>;

inline const CoreCommon& common(const AttentionCore& core) {
    return std::visit([](const CoreCommon& c) -> const CoreCommon& { return c; }, core);
}

// The pre-pass's Funcs (lower/block_ranges.hpp): per query and key tile whether any pair is kept,
// (q, kb, h, b); per query tile and key tile, (kb, qt, h, b); each query tile's range of live key
// tiles, (i, qt, h, b).
struct LiveKeyBlocks {
    Halide::Func rows, blocks, ranges;
};

// Reads the pre-pass's block ranges (i, qt, h, b), i = 0: first live key tile, 1: last, straight from
// the kernel's input buffer: Halide lifts a reduction's condition into loop bounds only when it reads
// inputs, never Funcs, and only lifted bounds keep the skipped tiles from being computed at all.
using BlockRangeRead = std::function<Halide::Expr(Halide::Expr i, Halide::Expr qt, Halide::Expr h, Halide::Expr b)>;

// A row-wise operation: its output (d, l, b) and per-row statistics (l, b) computed for it.
struct RowOperation {
    Halide::Func output;
    std::vector<Halide::Func> statistics;  // per row, from the row reductions below
    // Row reductions split by lanes (lower/row_reduction.hpp, reduce_by_lanes): (row, per_lane)
    std::vector<std::pair<Halide::Func, Halide::Func>> reductions;
};

// A matrix product: its output, its reduction, the name of the Func it multiplies and its output width
// (the same for the Q, K and V projections of one x under multi-head attention: a schedule may run them
// in one loop nest; under GQA K and V are narrower than Q).
struct Projection {
    Halide::Func output, sum;
    std::string input;
    int columns = 0;
    bool bf16_pairs = false;  // sum reduces over pairs of bf16 (lower/bf16_pairs.hpp)
    bool amx_tiles = false;   // there, an AMX tile product (lower/amx_tiles.hpp): reduction (32 values, steps)
};

struct Roles {
    std::vector<Projection> projections;
    std::vector<AttentionCore> cores;
    std::vector<RowOperation> row_operations;  // layer_norm
    std::vector<Halide::Func> tables;          // small compute_root tables (positional encodings)
    // A score modifier's terms of the query-key distance (d, h, b) or of the key (k, h, b), once per call
    // (lower/modifier_hoisting.hpp).
    std::vector<Halide::Func> distance_tables;
    std::vector<Halide::Func> elementwise;     // element-wise results computed once per call (rope)
    // Copies made once per call for the projections over bf16 pairs (each Func once): inputs staged in bf16
    // (i, l, b), and weights packed in pairs (pair, o, i/2).
    std::vector<Halide::Func> bf16_rows, bf16_weight_pairs;
    // Likewise for float32 products over 16-bit inputs: W converted to float32 (o, i) (x's rows converted go to
    // bf16_rows, scheduled alike).
    std::vector<Halide::Func> float32_weights;
    // Re-indexing nodes (split/merge heads) and adds have no role: they stay inline.
};

// What a softmax that is the result (no weighted sum above it) gives: its probabilities (k, q, h, b) or
// the log-sum-exp of its rows (q, h, b).
enum class SoftmaxResult { probabilities, logsumexp };

class LoweringContext {
public:
    explicit LoweringContext(AlgorithmPlan algorithm_plan) : plan(algorithm_plan) {}

    // Every input by name; run-time sizes are the extents of these buffers (Lowered::extents).
    LoweredInputs inputs;
    const AlgorithmPlan plan;
    Roles roles;
    std::map<std::string, Lowered, std::less<>> lowered;  // by canonical text: each node lowered once
    BlockRangeRead block_ranges;                          // set when the kernel takes the pre-pass's ranges as an input
    SoftmaxResult softmax_result = SoftmaxResult::probabilities;
    // The head width this kernel is generated for, where the graph's is run-time (dsl::runtime_head_width): the
    // generator's head_width, from the kernel line's E list. 0: none given.
    int head_width = 0;

    // E of a kind whose head width is static_width: that, or the kernel's where it is run-time.
    int head_width_of(int static_width) const {
        if (static_width != dsl::runtime_head_width) return static_width;
        if (head_width <= 0)
            throw std::invalid_argument(
                "attnforge lowering: the graph's head width E is run-time; its kernels are "
                "generated per head width (head_width=..., a kernel line's E=64,...)");
        return head_width;
    }

    const Tiles& tiles() const { return codegen::tiles(plan); }
    std::string name(const char* kind) { return std::string(kind) + "_" + std::to_string(next_id_++); }

private:
    int next_id_ = 0;
};

}  // namespace attnforge::codegen
