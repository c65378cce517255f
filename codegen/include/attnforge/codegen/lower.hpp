// Lower::node(node, ctx): the one generic path from a DSL graph to Halide Funcs. Lower::impl has one
// overload per node kind, each defined in lower/<kind>.hpp; they are members of one class so that
// every overload is visible to every other whatever the order of the headers.
//
// score, mask, modify and softmax are lowered together, as one attention pattern (dsl::match_attention):
// lower/attention.hpp takes weighted_sum(softmax(layers(score(q, k))), v) or softmax(...) alone whole,
// and lowers its score product (lower/score.hpp), its layers (lower/masks.hpp) and its core (one file per
// strategy: lower/materialized.hpp, lower/streaming.hpp) with no state left on the context in between.
#pragma once

#include <attnforge/codegen/lower/add.hpp>
#include <attnforge/codegen/lower/attention.hpp>
#include <attnforge/codegen/lower/dequantize.hpp>
#include <attnforge/codegen/lower/heads.hpp>
#include <attnforge/codegen/lower/input.hpp>
#include <attnforge/codegen/lower/layer_norm.hpp>
#include <attnforge/codegen/lower/linear.hpp>
#include <attnforge/codegen/lower/node.hpp>
#include <attnforge/codegen/lower/positional_encoding.hpp>
#include <attnforge/codegen/lower/rope.hpp>
