// Lowering: a DSL graph becomes Halide Funcs, one lowering per node kind (lower/*.hpp). The lowering
// writes the ALGORITHM only; it records which Func plays which role (projection, attention core,
// row operation) so that a schedule strategy (schedules/*.hpp) can schedule by role, apart from it.
//
// Index order: Halide Funcs take their innermost (contiguous) index first, so a row-major tensor
// (B, L, D) is the Func f(d, l, b), (B, H, L, E) is f(e, l, h, b) and scores (B, H, Lq, Lk) are
// f(k, q, h, b). Every Func here carries its batch index, as in the interpreter (unbatched graphs run
// with B = 1). Func names are stable: the node kind plus its position in a depth-first walk.
#pragma once

#include <attnforge/codegen/schedules/knobs.hpp>

#include <Halide.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attnforge::codegen {

// A lowered tensor: its Func and the extents of its dimensions, innermost first.
struct Lowered {
    Halide::Func func;
    std::vector<Halide::Expr> extents;
    // Its innermost dimension is a dense row of its own in memory (an input buffer), not a slice of a
    // wider row (heads split out of a projection): decides whether V is packed per head.
    bool dense_rows = false;
};

// score(q, k): the scaled product, its reduction over e, and the Func it reads K from.
struct ScoreProduct {
    Halide::Func scaled, sum, keys;
};

// softmax(S) · V, the part a strategy fuses or materializes.
struct AttentionCore {
    Halide::Func scores;       // s(k, q, h, b)·log2(e): masked and modified scores in base 2, pure (inlined)
    ScoreProduct dot;          // dot(k, q, h, b) = scale · Σ_e Q·K (·log2(e) when folded), the score product
    Halide::Func row_max;      // m(q, h, b)
    Halide::Func exps;         // 2^(s - m)(k, q, h, b), s and m in base 2: e^(s - m) in natural units
    Halide::Func row_sum;      // z(q, h, b)
    // m and z per lane (u, q, h, b), u < lanes: lane u reduces the keys ≡ u (mod lanes); m and z combine
    // the lanes in a tree (lower/attention.hpp, reduce_by_lanes)
    Halide::Func row_max_lanes, row_sum_lanes;
    Halide::Func weighted;     // Σ_k exps · V, (e, q, h, b), a reduction
    Halide::Func values;       // V as (e, k, h, b), read by the P·V products
    bool pack_values = false;  // V's rows are slices of wider rows: copy each head contiguous once per call
    Halide::Func output;       // weighted / z, 0 for fully masked rows
    Halide::Func probabilities;  // exps / z, only when the weights are the graph's output
    // streaming only: per key block kb of k_block keys, over query tiles of q_block rows
    //   block_scores(kk, qi, qt, h, b, kb), block_max, block_exps, block_sum (qi, qt, h, b, kb),
    //   block_weighted (e, qi, qt, h, b, kb), and the running state (e, qi, qt, h, b) = (max, sum, acc)
    Halide::Func block_max, block_exps, block_sum, block_weighted, state;
    Halide::Func block_max_lanes, block_sum_lanes;  // their per-lane partial results, as row_max_lanes
    bool streamed = false;
    bool banded_exps = false;  // exps: 0, then an update over the keys of the query block's band
    std::vector<Halide::Expr> score_extents;  // (Lk, Lq, H, B)
    int head_width = 0;        // E of V
    // Key range known at generation time for causal and sliding-window masks: query q needs keys
    // [key_begin(q), key_end(q)); undefined Exprs mean every key.
    Halide::Expr key_begin_offset;  // key_begin(q) = max(0, q + offset)
    bool causal_like = false;       // key_end(q) = q + 1
    // Masks known only at run time (predicates other than the bands, key padding, boolean masks):
    // keep(k, q, h, b) of each, true = the pair takes part. From them a pre-pass kernel computes each
    // query tile's first and last live key block (live_key_blocks), and the streaming strategy visits
    // only that range (the block mask FlexAttention builds with create_block_mask).
    std::vector<Halide::Func> keeps;
    bool keeps_use_heads = false;  // some keep reads h: ranges per head, else per batch entry
};

// The pre-pass's Funcs (lower/attention.hpp, live_key_blocks): per query and key block whether any
// pair is kept, (q, kb, h, b); per query tile and key block, (kb, qt, h, b); each tile's range of live
// blocks, (i, qt, h, b).
struct LiveKeyBlocks {
    Halide::Func rows, blocks, ranges;
};

// Reads the pre-pass's block ranges (i, qt, h, b), i = 0: first live key block, 1: last, straight from
// the kernel's input buffer: Halide lifts a reduction's condition into loop bounds only when it reads
// inputs, never Funcs, and only lifted bounds keep the skipped blocks from being computed at all.
using BlockRangeRead = std::function<Halide::Expr(Halide::Expr i, Halide::Expr qt, Halide::Expr h, Halide::Expr b)>;

// A row-wise operation: its output (d, l, b) and per-row statistics (l, b) computed for it.
struct RowOperation {
    Halide::Func output;
    std::vector<Halide::Func> statistics;
};

// A matrix product: its output, its reduction, the name of the Func it multiplies and its output width
// (the same for the Q, K and V projections of one x under multi-head attention: a schedule may run them
// in one loop nest; under GQA K and V are narrower than Q).
struct Projection {
    Halide::Func output, sum;
    std::string input;
    int columns = 0;
};

struct Roles {
    std::vector<Projection> projections;  // linear, and P·V of a P that is not a softmax
    std::vector<ScoreProduct> score_products;
    std::vector<AttentionCore> cores;
    std::vector<RowOperation> row_operations;  // layer_norm
    std::vector<Halide::Func> tables;          // small compute_root tables (positional encodings)
    std::vector<Halide::Func> elementwise;     // element-wise results computed once per call (rope)
    // Re-indexing nodes (split/merge heads), masks, modifiers and adds have no role: they stay inline.
};

class LoweringContext {
public:
    // Every input by name; run-time sizes are the extents of these buffers (Lowered::extents).
    std::map<std::string, Lowered, std::less<>> inputs;
    Knobs knobs;  // the strategy picks the lowering of weighted_sum(softmax(S), V)
    int lanes = 16;  // the schedule's vector width (vector_lanes): K is packed in panels of k_unroll·lanes keys
    Roles roles;
    std::map<std::string, Lowered, std::less<>> lowered;  // by canonical text: each node lowered once
    BlockRangeRead block_ranges;  // set when the kernel takes the pre-pass's ranges (knob block_mask)

    // The run-time masks lowered since the last softmax took them (AttentionCore::keeps).
    std::vector<Halide::Func> pending_keeps;
    bool pending_keeps_use_heads = false;

    std::string name(const char* kind) { return std::string(kind) + "_" + std::to_string(next_id_++); }

    // The key band of the softmax whose scores are being lowered (materialized strategy only), so that
    // the score product skips the key panels outside the band of a whole query block (see
    // lower/attention.hpp). Nodes lowered under a band are memoized apart from the same nodes without.
    struct Band {
        bool causal = false;  // keys <= q
        int window = -1;      // and keys >= q - window
    } band;
    // Scores lowered for a softmax whose score product may carry the factor log2(e) (only masks lie
    // between them; lower/softmax_exp.hpp): the score node folds it into its scale.
    bool scores_in_base2 = false;
    std::string memo_suffix() const {
        return (band.causal ? "@band" + std::to_string(band.window) : "") + (scores_in_base2 ? "@base2" : "");
    }

private:
    int next_id_ = 0;
};

}  // namespace attnforge::codegen
