// graph: a named attention graph, the unit the interpreter evaluates and codegen lowers.
//     inline constexpr auto my_variant = make_graph<"my_variant">(output_node);
#pragma once

#include <attnforge/dsl/diagnostics.hpp>
#include <attnforge/dsl/fixed_string.hpp>

#include <boost/hana/for_each.hpp>

#include <string_view>

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
constexpr auto make_graph(Output output) {
    return graph<Name, Output>{output};
}

// Calls f(graph) for the graph called `name` in `graphs` (a hana::tuple); returns false when there is none.
template <class Graphs, class F>
bool with_graph_named(const Graphs& graphs, std::string_view name, F&& f) {
    bool found = false;
    boost::hana::for_each(graphs, [&](const auto& g) {
        if (!found && g.name.view() == name) {
            found = true;
            f(g);
        }
    });
    return found;
}

}  // namespace attnforge::dsl
