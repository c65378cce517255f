// A custom lowering pass that corrects the prefetches of a schedule (Func::prefetch) to whole lines.
//
// Halide 21 splits a prefetched box into single-line prefetches (src/Prefetch.cpp, SplitPrefetch), one
// per L elements (L = 64 bytes / element size, the call's fourth argument), but steps the loop over them
// by 64 *elements*: it adds `v · 64` bytes-per-line to an offset counted in elements. Of a row of float32 K
// it so prefetches every fourth line, and lines of the rows after it. This pass rewrites each such loop,
// `for v: prefetch(buf, v·S + base, 1, L)` with S = L · element bytes, to step by L elements, so that its
// n iterations prefetch the n lines of the box that Halide counted, each with a hint into L2 (below). Other
// prefetches are left as they are.
#pragma once

#include <Halide.h>

namespace attnforge::codegen {

class PrefetchEveryLine : public Halide::Internal::IRMutator {
    using IRMutator::visit;

    Halide::Internal::Stmt visit(const Halide::Internal::For* loop) override {
        using namespace Halide::Internal;
        const Evaluate* single = loop->body.as<Evaluate>();
        const Call* call = single ? single->value.as<Call>() : nullptr;
        if (!call || !call->is_intrinsic(Call::prefetch) || call->args.size() != 4 || !is_const_zero(loop->min))
            return IRMutator::visit(loop);
        const Halide::Expr offset = call->args[1];
        const Halide::Expr base = simplify(substitute(loop->name, 0, offset));
        const auto stride = as_const_int(simplify(substitute(loop->name, 1, offset) - base));
        const auto line = as_const_int(call->args[3]);
        const int bytes = call->type.bytes();
        if (!stride || !line || *line <= 0 || *stride != *line * bytes) return IRMutator::visit(loop);
        const Halide::Expr v = Variable::make(Halide::Int(32), loop->name);
        std::vector<Halide::Expr> args = call->args;
        args[1] = v * static_cast<int>(*line) + base;  // elements
        // The call itself becomes the LLVM intrinsic (an extern call of its name), with locality 1: prefetcht2,
        // into L2. Halide's runtime emits prefetchnta, which gained nothing in the loop this serves (decode,
        // src/schedules/decode.cpp) where prefetcht2 did.
        const Halide::Expr start = Halide::reinterpret(Halide::UInt(64), args[0]);
        const Halide::Expr address =
            Halide::reinterpret(Halide::Handle(), start + Halide::cast<uint64_t>(args[1] * bytes));
        const Halide::Expr line_by_line = Call::make(Halide::Int(32), "llvm.prefetch.p0",
                                                     {address, /*read*/ 0, /*locality: L2*/ 1, /*data*/ 1}, Call::Extern);
        return For::make(loop->name, loop->min, loop->extent, loop->for_type, loop->partition_policy,
                         loop->device_api, Evaluate::make(line_by_line));
    }
};

}  // namespace attnforge::codegen
