// graph: a named attention graph, the unit the interpreter evaluates and codegen lowers.
//     inline constexpr auto my_variant = make_graph<"my_variant">(output_node);
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/fixed_string.hpp>

namespace attnforge::dsl {

template <fixed_string Name, class Output>
struct graph {
    Output output;
    static constexpr auto name = Name;
    using output_kind = typename Output::kind;
};

// A graph whose nodes failed a shape rule has already produced its one diagnostic; it is returned as
// graph<Name, error_node> so that nothing downstream adds more.
template <fixed_string Name, class Output>
constexpr auto make_graph(Output output) { return graph<Name, Output>{output}; }

}  // namespace attnforge::dsl
