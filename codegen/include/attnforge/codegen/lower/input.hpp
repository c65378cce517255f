// Inputs are bound by the generator (ctx.inputs); lowering one is a look-up.
#pragma once

#include <attnforge/codegen/lower/node.hpp>

namespace attnforge::codegen {

template <dsl::fixed_string Name, class Kind>
Lowered Lower::impl(const dsl::input_node<Name, Kind>&, LoweringContext& ctx) {
    return ctx.inputs.find(Name.view())->second;
}

}  // namespace attnforge::codegen
